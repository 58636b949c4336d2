"""``verikit check-verifier``: a verifier plugin's self-check
(harness/verifiers/check.py), on the kit's own verifiers, on broken ones, and live with
the real Frama-C in the host sandbox.

Also the rule behind it: the executor and the pipeline call every hook of
:class:`harness.model.Verifier` and :class:`harness.sandbox.Sandbox` (defaults in the base
classes), and no sandbox is named as code outside harness/sandbox/.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness import registry
from harness.cli import main
from harness.model import ProcResult, Verifier, VerifierResult
from harness.sandbox import Sandbox
from harness.verifiers.check import check_verifier

ROOT = Path(__file__).resolve().parent.parent
#: Verifiers whose command needs options only a benchmark's job has (TLC's module name,
#: Why3's theory and goal, Hyperkernel's syscall).
PER_TASK = {"tlc", "why3", "hyperkernel"}


@pytest.mark.parametrize("name", sorted(registry.VERIFIERS))
def test_every_registered_verifier_passes_its_own_checks(name):
    checks = check_verifier(registry.verifier(name))
    bad = [c for c in checks if not c.ok]
    if name in PER_TASK:  # only the commands, for want of a job's options, and said so
        assert [c.name for c in bad] == ["command", "task_command"], bad
        assert all("--benchmark" in c.detail for c in bad)
    else:
        assert not bad, bad
    assert {c.name for c in checks} >= {"subclass", "name", "toolchain", "version", "options", "gate", "state",
                                        "parse (the tool could not start)", "parse (the tool printed nothing)"}


def test_a_benchmarks_job_gives_the_per_task_options(capsys):
    assert main(["check-verifier", "tlc", "--benchmark", "modelbench"]) == 0
    assert "16 of 16 checks passed" in capsys.readouterr().err


class _Broken(Verifier):
    name, toolchain = "broken", "framac"  # no version of its own

    def options(self, probed, *, smoke=False, cpus=1):
        return {"when": object()}  # not JSON

    def command(self, options):
        return "frama-c -wp", {}, []  # a string, not an argv list

    def parse(self, proc, options=None):
        return VerifierResult("verified", "nothing said otherwise")  # verified from no output


class _Duck:
    name, toolchain, version = "duck", "framac", "1"


def test_a_broken_verifier_is_told_each_problem():
    by = {c.name: c for c in check_verifier(_Broken())}
    assert not by["version"].ok and "module version" in by["version"].detail
    assert not by["options"].ok and "not JSON-able" in by["options"].detail
    assert not by["command"].ok and "argv is not a non-empty list of str" in by["command"].detail
    assert not by["parse (the tool printed nothing)"].ok
    assert "verified from a run with no output" in by["parse (the tool printed nothing)"].detail
    assert by["gate"].ok and by["subclass"].ok
    duck = check_verifier(_Duck())
    assert [c.name for c in duck if not c.ok] == ["subclass", "implements options", "implements command",
                                                  "implements parse"]


def test_the_base_classes_defaults():
    v = _Broken()
    assert v.gate({}) is None and v.followup({}, ProcResult(["x"], 0), {}) is None and v.state() == {}
    assert v.task_command({}) == v.command({}) and v.all_goals is False
    assert v.carry_from_gate({}, {"requires.log": b"x"}) == {}
    assert v.restore({}) is None
    s = Sandbox()
    assert s.read_file("/etc/x") is None and s.cancel() is None and s.close() is None and not s.host_tools
    with pytest.raises(NotImplementedError):
        s.run(["true"])
    assert registry.sandbox_class("host").host_tools and not registry.sandbox_class("container").host_tools


def test_no_hook_is_probed_and_no_sandbox_is_named_outside_its_package():
    probes, named = [], []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "harness/verifiers/check.py":  # the checker asks a plugin what it has: its job
            continue
        text = path.read_text(encoding="utf-8")
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"getattr\((self\.)?(verifier|sandbox|run\.sandbox|plan\.verifier|cls)\b", line):
                probes.append(f"{rel}:{n}: {line.strip()}")
            if not rel.startswith("harness/sandbox/") and re.search(r"""(==|!=)\s*["'](host|container|charliecloud|"""
                                                                      r"""apptainer)["']""", line):
                named.append(f"{rel}:{n}: {line.strip()}")
    assert not probes, probes
    assert not named, named


@pytest.mark.realtool
@pytest.mark.skipif(shutil.which("frama-c") is None, reason="needs frama-c on the host")
def test_framac_checked_live_in_the_host_sandbox(capsys):
    assert main(["check-verifier", "framac", "--sandbox", "host"]) == 0
    err = capsys.readouterr().err
    assert "18 of 18 checks passed" in err, err
