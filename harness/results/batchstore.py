"""The store of a batch run (:class:`Store`): where its manifest, inputs, records and tool
outputs live while workers run elsewhere. Two implementations: S3 (:class:`~.s3.S3Store`,
AWS Batch) and a directory on a shared filesystem (:class:`~.dirstore.DirStore`, SLURM).

A store holds named files (``manifest.json``, ``data/...``, ``records/<job key>.json``,
``outputs/<sha[:2]>/<sha>.json.gz``, ...). Each implementation gives five primitives
(:meth:`Store.put_bytes`, :meth:`Store.get_bytes`, :meth:`Store.exists`,
:meth:`Store.names`, :meth:`Store.delete`), each of which must be atomic per file: a
file is there whole or not at all. Everything else (records checked both ways, tool
outputs, a reduced run's files) is written once here on top of them, so both stores
apply the same checks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

from ..model import canonical_json
from .records import load_records, record_key
from .schema import ValidationError, validate
from .cache import OUTPUTS, OutputStore

#: A reduced run's files, next to its records (``SHA256SUMS`` last: it vouches for the others).
RUN_FILES = ("run.json", "records.jsonl", "report.json", "SHA256SUMS")


class Store(Protocol):
    """A batch run's files (see the module docstring). Implementations subclass it for
    the shared methods and give the five primitives.

    Attributes:
        uri: where the run is (``s3://bucket/prefix/<run>`` or an absolute directory);
            requests: primitive calls made so far (S3 round trips, file operations).
    """

    uri: str
    requests: int

    def put_bytes(self, name: str, data: bytes) -> None:
        """Write file ``name`` (relative to the run) atomically: whole or not at all."""
        ...

    def get_bytes(self, name: str) -> bytes | None:
        """File ``name``'s content, or None when it does not exist."""
        ...

    def exists(self, name: str) -> bool:
        """True when file ``name`` exists."""
        ...

    def names(self, under: str = "") -> list[str]:
        """Names (relative to the run) of every complete file under ``under``."""
        ...

    def delete(self, name: str) -> None:
        """Remove file ``name`` (nothing when it does not exist)."""
        ...

    @property
    def run_name(self) -> str:
        """The run's own name, the last part of :attr:`uri` (``casp-20261126T...-1a2b3c4d``)."""
        return self.uri.rstrip("/").rsplit("/", 1)[-1]

    def put_json(self, name: str, obj, *, kind: str | None = None) -> None:
        """Validate (if ``kind``) and write ``obj`` as JSON. Raises ValidationError."""
        if kind:
            validate(kind, obj, f"{self.uri}/{name}")
        self.put_bytes(name, (json.dumps(obj, indent=2, sort_keys=True, allow_nan=False) + "\n").encode())

    def get_json(self, name: str):
        """File ``name`` parsed as JSON, or None when it does not exist. Raises ValueError
        (naming the file) when it is not JSON."""
        data = self.get_bytes(name)
        if data is None:
            return None
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ValueError(f"{self.uri}/{name}: not JSON: {exc}") from None

    def record_keys(self) -> set[str]:
        """Keys of the jobs with a record file (names under ``records/``; one listing)."""
        return {n[len("records/"):-len(".json")] for n in self.names("records/") if n.endswith(".json")}

    def put_record(self, record: dict) -> str:
        """Validate ``record`` and write it as ``records/<key>.json``; returns the name.

        Raises:
            ValidationError: not a valid record, or its key is not the one its fields give.
        """
        validate("record", record, f"record {record.get('key')}")
        if record_key(record) != record["key"]:
            raise ValidationError(f"record {record['key']}: key is not the one its fields give ({record_key(record)})")
        name = f"records/{record['key']}.json"
        self.put_bytes(name, canonical_json(record).encode())
        return name

    def records(self) -> tuple[dict[str, dict], list[str]]:
        """Every record file, checked: ``({key: record}, problems)``. A file that is not
        JSON, not a valid record, whose key is not the one its fields give, or whose name
        is not its key is left out and named in ``problems``."""
        found, problems = {}, []
        for name in self.names("records/"):
            if not name.endswith(".json"):
                continue
            where = f"{self.uri}/{name}"
            try:
                rec = self.get_json(name)
                if rec is None:  # listed, then gone (another reader removed it): not a record
                    continue
                validate("record", rec, where)
            except (ValueError, ValidationError) as exc:
                problems.append(str(exc))
                continue
            key = name[len("records/"):-len(".json")]
            if rec["key"] != key or record_key(rec) != key:
                problems.append(f"{where}: the record's key {rec['key'][:12]} is not its name or not the one its "
                                f"fields give")
                continue
            found[key] = rec
        return found, problems

    def put_output(self, outputs: OutputStore, sha: str) -> None:
        """Write one tool output file of ``outputs`` as ``outputs/<sha[:2]>/<sha>.json.gz``."""
        self.put_bytes(OutputStore.name(sha), outputs.read_bytes(sha))

    def get_outputs(self, outputs: OutputStore, shas) -> list[str]:
        """Copy the tool outputs ``shas`` into ``outputs``; returns those not in the store."""
        missing = []
        for sha in sorted(set(shas)):
            data = self.get_bytes(OutputStore.name(sha))
            if data is None:
                missing.append(sha)
            else:
                outputs.write_bytes(sha, data)
        return missing

    def download_run(self, dest: Path) -> list[str]:
        """Copy the run files that exist (``RUN_FILES``) into ``dest``, and the tool outputs
        its records name; returns the run files' names."""
        dest.mkdir(parents=True, exist_ok=True)
        got = []
        for name in RUN_FILES:
            data = self.get_bytes(name)
            if data is not None:
                (dest / name).write_bytes(data)
                got.append(name)
        if (dest / "records.jsonl").exists():
            shas = [r["tool_output"]["sha256"] for r in load_records(dest / "records.jsonl") if r.get("tool_output")]
            self.get_outputs(OutputStore(dest / OUTPUTS), shas)
        return got

    def upload_run(self, src: Path) -> None:
        """Write the run files of directory ``src`` next to the records, and its report.html
        (a view, not checked by SHA256SUMS) when there is one; SHA256SUMS last."""
        outputs = OutputStore(src / OUTPUTS)
        if (src / "records.jsonl").exists():
            for r in load_records(src / "records.jsonl"):
                if r.get("tool_output") and outputs.has(r["tool_output"]["sha256"]):
                    self.put_output(outputs, r["tool_output"]["sha256"])
        for name in (*RUN_FILES[:-1], "report.html", RUN_FILES[-1]):
            if (src / name).exists():
                self.put_bytes(name, (src / name).read_bytes())
