"""Record the return values of Model-Bench's oracle-set programs on their behaviour inputs.

The behaviour harness (``harness/benchmarks/modelbench/programs.py``) compares a model's
final states with what the Python program returns on every input of its bounded domain
and of its tests. A benchmark starts no process, so those return values are recorded
here: for each task of ``data/tasks.json`` with a ``domain``, the program (the dataset's
own solution) runs once, under ``python -I`` with a timeout, on all its inputs, and
``data/outputs.json`` keeps the program's sha256, the inputs and the return values
(JSON). ``tests/test_tlc_behaviour.py`` re-runs the programs and compares.

Usage (the data come from the mirror, as in the tests)::

    VERIKIT_DATA_MIRRORS=../shared/data python scripts/modelbench_outputs.py [--check]

``--check``: compare with the file instead of writing it (exit 1 on a difference).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.benchmarks import modelbench  # noqa: E402
from harness.benchmarks.modelbench.programs import OUTPUTS_FILE, behaviour_inputs, program_sha256  # noqa: E402

#: Seconds one program may take on all its inputs.
TIMEOUT_S = 120


def run_program(code: str, entry_point: str, inputs: list[list]) -> list:
    """The program's return values on ``inputs`` (one ``python -I`` process, JSON in and out).

    Raises:
        RuntimeError: the program failed or printed no result.
        subprocess.TimeoutExpired: it took longer than :data:`TIMEOUT_S`.
    """
    program = (code + "\n\nimport json as _vk_json, sys as _vk_sys\n"
               f"_vk_out = [{entry_point}(*_a) for _a in _vk_json.loads(_vk_sys.stdin.read())]\n"
               "print(_vk_json.dumps(_vk_out))\n")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, "-I", "-c", program], input=json.dumps(inputs), capture_output=True,
                              text=True, timeout=TIMEOUT_S, cwd=tmp)
    if proc.returncode != 0:
        raise RuntimeError(f"the program failed on its inputs: {proc.stderr.strip()[-500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def outputs(fetched) -> dict:
    """``{task_id: {"program_sha256", "inputs", "expected"}}`` of every task with a domain."""
    table = {}
    for t in modelbench.load_tasks(fetched):
        if not t.domain:
            continue
        p = t.problem
        inputs, _, _, _ = behaviour_inputs(list(t.domain), t.constants, p.tests)
        table[t.task_id] = {"program_sha256": program_sha256(p.code, p.entry_point), "inputs": inputs,
                            "expected": run_program(p.code, p.entry_point, inputs)}
    return table


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = ap.parse_args(argv)
    from harness import datasets

    with tempfile.TemporaryDirectory() as tmp:
        table = outputs(datasets.fetch(modelbench.DEFAULT_DATASET, data_dir=Path(tmp)))
    text = "{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(table.items())) + "\n}\n"
    if args.check:
        same = OUTPUTS_FILE.is_file() and OUTPUTS_FILE.read_text(encoding="utf-8") == text
        print(f"{OUTPUTS_FILE.relative_to(ROOT)}: {'up to date' if same else 'differs from the programs'}")
        return 0 if same else 1
    OUTPUTS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUTS_FILE.relative_to(ROOT)}: {sum(len(e['inputs']) for e in table.values())} return values "
          f"of {len(table)} programs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
