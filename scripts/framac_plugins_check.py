"""Check that the Frama-C job driver's own steps compute with few plug-ins what they compute with all.

The driver (``harness/verifiers/drivers/framac_job.sh``, its ``fc``) starts Frama-C for the
kit's own steps (the views of the verified file and of the task's fixed part, the
do-nothing-body, requires and soundness WP runs) with only the plug-ins each step uses, and
the execution cross-check (``exec_check.sh``) its E-ACSL runs likewise; a run that fails so
is made again with every plug-in. This script runs each job of a CASP dataset twice in the
host sandbox, as the executor runs it (the task runs, the gate, the verification after the
gate), once as shipped and once with a ``frama-c`` on ``PATH`` that refuses
``-no-autoload-plugins`` (so that every step falls back to Frama-C with every plug-in
loaded), and compares what the two runs wrote:

- the views (``view.json``, ``task-view.json``) and the E-ACSL-instrumented sources
  (``vk_*.c``), as text with the sandbox's job directory (a new one per run) taken out;
- the WP logs of the side runs (``havoc.log``, ``requires.log``, ``sound.log``) and the
  runs' output, line by line with prover times taken out;
- the execution cross-check's log (``vk_exec.log``) line by line, with the addresses that
  E-ACSL prints (a new one per run) taken out.

``--gate-only`` runs the task runs and the gate only (the views and the requires probe: a
second or so per job); else every job runs in full (about a minute per job here: 94
jobs take about two hours). A job whose files differ is run once more as shipped: what
also differs between those two runs (a mutant that returns what uninitialised memory
holds) is reported as varying, not as a difference, unless the two runs as shipped agree
on a line that every plug-in changes. Prints one line per job and difference; exit status
1 when any file differs.

Usage (data from the mirror, as in the tests)::

    VERIKIT_DATA_MIRRORS=../shared/data python scripts/framac_plugins_check.py
        [--dataset casp-sample10] [--tasks 00_327,...] [--gate-only] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchlib import kit_jobs, kit_plan  # noqa: E402

from harness.executor import verification_command  # noqa: E402
from harness.model import Limits  # noqa: E402
from harness.runner import probe_toolchain  # noqa: E402
from harness.sandbox.local import HostSandbox  # noqa: E402

MODES = ["spec-from-code", "code-from-spec"]
LIMITS = Limits(wall_s=600.0, mem_mb=4096)
#: Files compared byte for byte, and line by line without prover times.
EXACT = ("view.json", "task-view.json")
LOGS = ("havoc.log", "requires.log", "sound.log", "vk_exec.log")
#: exec_check.sh's E-ACSL outputs, collected from the verification besides its own files.
EACSL_SOURCES = ("vk_ea.c", "vk_mut.c", "vk_mutg.c")
#: A ``frama-c`` that refuses a start without every plug-in: the driver then falls back.
SHIM = """#!/bin/sh
for a; do [ "$a" = -no-autoload-plugins ] && exit 1; done
exec FRAMA_C "$@"
"""
_TIMES = re.compile(r"\(\d+(\.\d+)?m?s\)|\(Qed:[^)]*\)|\(\d+\)|\b\d+(\.\d+)?m?s\b|\(\d+(\.\d+)?m?s-[^)]*\)")


#: An address a run prints (E-ACSL's values at a failure, its runtime's "invalid address
#: 0x7f2d-276a-03dc"): a new one per run (ASLR).
_ADDRESS = re.compile(r"0x[0-9a-f]{4}(-[0-9a-f]{4})+|0x[0-9a-f]{6,}")
#: The sandbox's job directory, which Frama-C names in its views and messages: a new one per run.
_JOB_DIR = re.compile(r"/[^\s\"']*?/verikit-job-[^/\s\"']*/")


def _text(data: bytes | None) -> str | None:
    """A file's text with the job directory taken out (None: no such file)."""
    return None if data is None else _JOB_DIR.sub("", data.decode(errors="replace"))


def _lines(data: bytes | None) -> list[str]:
    """A log's lines with the job directory, prover times and step counts taken out."""
    text = _text(data)
    if text is None:
        return ["<missing>"]
    return [_ADDRESS.sub("0x", _TIMES.sub("", line)).rstrip() for line in text.splitlines()]


_TASK_RUNS: dict = {}


def job_runs(job, verifier, sandbox, shared: dict, env_extra: dict, gate_only: bool) -> dict[str, bytes]:
    """Every file the driver wrote for ``job``: its task runs, its gate and (unless
    ``gate_only``) its verification after the gate, as the executor runs them, named
    ``<run>/<file>``, and each run's output as ``<run>/output``."""
    out: dict[str, bytes] = {}
    collected: dict[str, bytes] = {}
    env_extra = {**env_extra, "VERIKIT_CPUS": "1"}
    argv, env, collect = verifier.task_command(job.options)
    for name in sorted(job.task_run or {}):
        key = (name, job.task_run[name], tuple(sorted(env_extra.items())))
        if key not in _TASK_RUNS:  # made once per task file, as the executor does
            _TASK_RUNS[key] = sandbox.run(argv, files={**shared, name: job.task_run[name]}, env={**env, **env_extra},
                                          collect=collect, limits=LIMITS).files
        collected.update(_TASK_RUNS[key])
        out.update({f"task:{name}/{k}": v for k, v in _TASK_RUNS[key].items()})

    def run(label: str, argv: list[str], env: dict, collect: list[str], carried: dict | None = None) -> dict[str, bytes]:
        res = sandbox.run(argv, files={**shared, **job.files, **(carried or {})}, env={**env, **env_extra},
                          collect=collect, limits=LIMITS)
        out.update({f"{label}/{k}": v for k, v in res.files.items()})
        out[f"{label}/output"] = (res.stdout + res.stderr).encode()
        return res.files

    gate = verifier.gate(job.options)
    if gate:
        collected.update(run("gate", *gate))
    if not gate_only:
        argv, env, collect, carried = verification_command(verifier, job.options, collected if gate else None)
        run("job", argv, env, [*collect, *EACSL_SOURCES], carried)
    return out


def _compared(name: str, data: bytes | None) -> list | None:
    """What of file ``name`` (``<run>/<file>``) is compared: a view or a C source as one
    text, a log or a run's output as its lines (:func:`_lines`); None: not compared."""
    base = name.split("/", 1)[1]
    if base in EXACT or base.endswith(".c"):
        return [_text(data)]
    if base in LOGS or base == "output":
        return _lines(data)
    return None


def differences(light: dict[str, bytes], full: dict[str, bytes]) -> list[str]:
    """The files of two runs of a job that differ (see the module docstring)."""
    return [name for name in sorted(set(light) | set(full))
            if _compared(name, light.get(name)) != _compared(name, full.get(name))]


def run_to_run(names: list[str], light: dict[str, bytes], again: dict[str, bytes],
               full: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """Of the files ``names`` that differ between ``light`` and ``full``, those that differ
    with every plug-in, and those whose differences are also between two runs as shipped
    (``light``, ``again``: a mutant that returns what uninitialised memory holds). In such a
    file a line counts when the two runs as shipped agree on it (lines aligned by place);
    when they do not even have the same number of lines, the file only varies."""
    real, varies = [], []
    for name in names:
        a, b, c = (_compared(name, x.get(name)) for x in (light, again, full))
        if a == b or (len(a) == len(b) == len(c) and any(x == y != z for x, y, z in zip(a, b, c))):
            real.append(name)
        else:
            varies.append(name)
    return real, varies


def check(dataset: str = "casp-sample10", tasks: list[str] | None = None, gate_only: bool = False,
          keep=lambda job: True, echo=lambda line: print(line, flush=True)) -> dict:
    """Run the comparison (module docstring) on the jobs of ``dataset`` in both candidate
    modes (``keep`` chooses among them; default: all, canaries too).

    A job whose files differ is run once more as shipped (:func:`run_to_run`).

    Returns:
        ``{"jobs": N, "differ": [{"mode", "task", "model", "sample", "files": [...]}],
        "varies": [... the same, files that also differ between two runs as shipped]}``.
    """
    sandbox = HostSandbox()
    plan = kit_plan("casp", MODES, "host", LIMITS, tasks, dataset=dataset)
    probed, shared = probe_toolchain(plan, sandbox)
    jobs, verifier = kit_jobs(plan, probed, keep=keep)
    jobs = [j for j in jobs if j.precheck is None]
    res: dict = {"jobs": len(jobs), "differ": [], "varies": []}
    with tempfile.TemporaryDirectory(prefix="verikit-fc-") as d:
        shim = Path(d) / "frama-c"
        shim.write_text(SHIM.replace("FRAMA_C", shutil.which("frama-c")))
        shim.chmod(0o755)
        path = f"{d}:{sandbox.run(['sh', '-c', 'echo $PATH'], limits=LIMITS).stdout.strip()}"
        for n, job in enumerate(jobs):
            light = job_runs(job, verifier, sandbox, shared, {}, gate_only)
            full = job_runs(job, verifier, sandbox, shared, {"PATH": path}, gate_only)
            diffs, varies = differences(light, full), []
            if diffs:
                diffs, varies = run_to_run(diffs, light, job_runs(job, verifier, sandbox, shared, {}, gate_only), full)
            who = f"{job.mode} {job.task_id} {job.candidate['model']}#{job.candidate['sample']}"
            echo(f"[{n + 1}/{len(jobs)}] {who}: {len(light)} files, " + (f"DIFFER: {', '.join(diffs)}" if diffs else "the same")
                 + (f" (varies between two runs as shipped: {', '.join(varies)})" if varies else ""))
            for kind, files in (("differ", diffs), ("varies", varies)):
                if files:
                    res[kind].append({"mode": job.mode, "task": job.task_id, "model": job.candidate["model"],
                                      "sample": job.candidate["sample"], "files": files})
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="casp-sample10")
    ap.add_argument("--tasks", help="task ids, comma-separated (default: all)")
    ap.add_argument("--gate-only", action="store_true", help="the task runs and the gate only")
    ap.add_argument("--json", help="write the result here")
    args = ap.parse_args()
    res = check(args.dataset, args.tasks.split(",") if args.tasks else None, args.gate_only)
    print(f"{res['jobs']} jobs, {len(res['differ'])} with a difference")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1) + "\n")
    return 1 if res["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
