"""Result records, JSON Schema validation and stores.

A run directory holds ``run.json`` (manifest), ``records.jsonl`` (one record per job) and
``report.json`` (metrics); each is validated against ``schemas/*.schema.json`` (JSON
Schema 2020-12) before it is written. Records are also kept in a content-addressed cache
(``<cache>/<key[:2]>/<key>.json``) so a job already done anywhere is never run again.

Crash safety: records are appended to ``records.jsonl`` one line at a time and flushed;
a run killed with SIGKILL can leave at most one torn last line, which
:func:`load_records` drops. :meth:`RecordLog.finalize` rewrites the file atomically with
exactly one record per key.

Submodules (every public name is also importable from ``harness.results``):

- :mod:`.schema`: the schemas' versions, :func:`validate` (a report's sections against its
  benchmark's schema too: :func:`sections_validators`), :class:`ValidationError`;
- :mod:`.files`: atomic writes (text, bytes, validated JSON);
- :mod:`.records`: ``records.jsonl`` (:func:`load_records`, :class:`RecordLog`), a
  record's key, identity and outcome, whether a candidate is a canary (:func:`is_canary`);
- :mod:`.rundir`: a run directory's lock, ``SHA256SUMS``, id and :func:`validate_run_dir`;
- :mod:`.cache`: the tool outputs (:class:`OutputStore`) and the result cache
  (:class:`ResultCache`);
- :mod:`.compare`: :func:`compare_runs`;
- :mod:`.batchstore`: a batch run's store (:class:`Store`: the checks all stores share);
  :mod:`.s3`: in S3 (:class:`S3Store`); :mod:`.dirstore`: on a shared filesystem
  (:class:`DirStore`), and :func:`open_store`.
"""

from __future__ import annotations

# The package's public names: what the rest of the kit and plugins import from the package.
from .compare import TOLERANCE, compare_runs  # noqa: F401
from .dirstore import DirStore, open_store  # noqa: F401
from .files import umask, write_bytes_atomic, write_json_atomic, write_text_atomic  # noqa: F401
from .records import (CANARY_PREFIX, RecordLog, gc_paused, is_canary, load_records, record_identity,  # noqa: F401
                      record_inconsistencies, record_key, record_lines, record_outcome)
from .rundir import (LOCK_NAME, SUMMED, SUMS, RunDirBusy, check_sums, read_run_dir, run_dir_lock,  # noqa: F401
                     run_id_of, validate_run_dir, write_sums)
from .s3 import S3Store, parse_s3_uri  # noqa: F401
from .schema import (KINDS, RECORD_SCHEMA_VERSION, SCHEMA_VERSION, SCHEMAS_DIR, ValidationError,  # noqa: F401
                     sections_validators, validate, validator)
from .batchstore import RUN_FILES, Store  # noqa: F401
from .cache import OUTPUTS, OutputStore, ResultCache, default_cache_dir  # noqa: F401
