"""OSVBench: 245 specification-generation tasks for the Hyperkernel OS kernel.

Paper: Li, Jiang, Zhao, Shen, "OSVBench: Benchmarking LLMs on Specification Generation
Tasks for Operating System Verification" (arXiv:2504.20964, 2025). A task gives a model
the functional description and a possibly buggy C implementation of one of Hyperkernel's
49 system calls (5 variants each: 1 correct, 4 with 1-5 injected bugs of five types); the
model writes the syscall's state-machine specification (Python 2 + Z3), which
Hyperkernel's verifier checks (:mod:`harness.verifiers.hyperkernel`). Table 1 gives pass@1
per bug type, Table 2 the "syntax" and "semantic" error rates, for 12 models with 5-shot
prompts.

Dataset ``osvbench`` (lishangyu-hkust/OSVBench at 3247b75e, every data file):
``bench_prompts/benchmark.json`` (the tasks), the prompt sections, the published
Claude-3.5-sonnet specs (``results/Spec/claude3sonnet_Spec.json``) and the verifier's raw
log for them (``outputs/output_claude3sonnet_Spec``).

Modules:

- :mod:`.tasks` -- tasks read leniently from ``benchmark.json`` (quirks recorded), with
  the reference specs of the prompt examples;
- :mod:`.prompts` -- prompts byte for byte as upstream's, 0/1/3/5/7/9 shots
  (``verikit prompts``: :func:`prompt`);
- :mod:`.spec` -- the spec in a model's output, the integrity scan;
- :mod:`.convert` -- upstream results JSON -> predictions JSONL (``verikit osvbench
  convert``: :func:`convert`);
- :mod:`.rescore` -- the exact rescoring of the published run (``verikit reproduce
  osvbench``), with the finer causes of every log entry;
- :mod:`.scoring` -- a run's pass@k, categories, causes, pass@1 per bug type, the
  comparison with the published log and the upstream-format log (:func:`upstream_log`);
- :mod:`.image` -- the job image derived from OSVBench's upstream image;
- :mod:`.benchmark` -- :class:`OSVBench`, the :class:`harness.plugin.Benchmark`.

Upstream code read (not in the pinned data; OSVBench's code files are at commit
57e3bff8, ``run_spec_check.sh`` at 3247b75e): ``stats.py`` (scoring), ``spec_util.py``
(runner), ``tasks/Spec.py`` (prompt), ``LLM_API_Invocations_passk.py`` (system prompt,
spec extraction), ``Dockerfile``/``verify.sh`` (the image).
"""

from .benchmark import (BENCHMARK, CANARY_SYSCALL, CHEATS, JOB_MEM_MB, MODES, NAME, UPSTREAM_LOG_FILE,  # noqa: F401
                        VERSION, OSVBench)
from .convert import convert, convert_upstream_results, load_results, write_predictions  # noqa: F401
from .image import DERIVED_IMAGE, UPSTREAM_IMAGE, derived_image_spec, image_help  # noqa: F401
from .prompts import SHOTS, SYSTEM_PROMPT, UPSTREAM_MODELS, Prompts, messages, prompt  # noqa: F401
from .rescore import check_results_json, load_published, published_log, read_log, rescore, reproduce  # noqa: F401
from .scoring import PASS_AT_K, pass_at_k, per_model, record_class, report_sections, upstream_log  # noqa: F401
from .spec import FORBIDDEN, example_specs, extract_spec, integrity_scan  # noqa: F401
from .tasks import (BENCHMARK_JSON, BUG_TYPES, CORRECT, FULL_PROMPT_EXAMPLE, LOG, MISSPELLINGS,  # noqa: F401
                    N_TASKS, README, REFERENCE_FILE, RESULTS_JSON, SHOT_FILES, SYSTEM_ASSUMPTION_MODEL,
                    LoadedTasks, ManifestError, Quirk, Task, UpstreamQuirkWarning, has_file, load_benchmark,
                    load_tasks, path_of, read_lenient_json)
