"""The recordings of the rule matrix are still what the real tools say.

Each family's recording (``tests/recorded/runs/<family>/``, made by ``scripts/record.py``;
see ``tests/recording.py``) answers the rule-matrix tests in every session without running
a tool. Here a rotating sample of its recorded jobs (seeded by today's date and the
family: a few per family, other ones tomorrow) runs live with the real tool in the
recorded kind of sandbox, and is judged again from the recording by the same executor,
parser and judge; a verdict or reason that differs fails the test, naming the recording
to refresh and the command that does it. The last test shows that the comparison can fail:
it corrupts a copy of a recording and is told so.
"""

from __future__ import annotations

import datetime
import json
import random
import shutil
import tempfile
from pathlib import Path

import pytest
from recording import ROOT, Recording, ReplaySandbox, call_key, job_from_json

from harness.model import Limits, ProcResult

#: Jobs of each family run live per session.
PER_FAMILY = 2

FAMILIES = sorted(p.name for p in ROOT.iterdir() if (p / "provenance.json").is_file()) if ROOT.is_dir() else []


def _marks(family: str) -> list:
    sandbox = Recording(family).provenance()["sandbox"]["name"]
    return [pytest.mark.realtool] + ([pytest.mark.container] if sandbox != "host" else [])


def sample(recording: Recording, day: str, k: int = PER_FAMILY) -> list[dict]:
    """``k`` of the recording's jobs, chosen by ``day`` (ISO date) and the family."""
    jobs = recording.jobs()
    return random.Random(f"{day}:{recording.family}").sample(jobs, min(k, len(jobs)))


def judge_all(recording: Recording, entries: list[dict], sandbox, probed, tmp_path: Path) -> list[tuple[str, str]]:
    """``(verdict, reason)`` of each recorded job in ``entries``, run through the kit's
    executor (no result cache) in ``sandbox`` with ``probed``, each with its run's limits."""
    from harness import registry
    from harness.executor import Executor
    from harness.results import RecordLog

    verifier = registry.verifier(recording.provenance()["verifier"])
    prepare = getattr(verifier, "prepare", None)
    shared = prepare(sandbox, probed) if prepare is not None else {}
    out = []
    for i, entry in enumerate(entries):
        job = job_from_json(entry["job"])
        ex = Executor(verifier, sandbox, probed, shared_files=shared, limits=Limits(**entry["limits"]), cache=None)
        log = RecordLog(Path(tempfile.mkdtemp(prefix=f"{recording.family}-{i}-", dir=tmp_path)) / "records.jsonl")
        try:
            (rec,) = ex.run([job], log, registry.benchmark(job.benchmark).judge)
        finally:
            log.close()
        out.append((rec["verdict"], rec["reason"]))
    return out


def differences(recording: Recording, entries: list[dict], live: list, replayed: list) -> list[str]:
    """One message per job whose live verdict or reason is not the replayed one, naming
    the recording and its recorder command."""
    msgs = []
    for entry, (lv, lr), (rv, rr) in zip(entries, live, replayed):
        if (lv, lr) != (rv, rr):
            j = entry["job"]
            msgs.append(f"{recording.root}: {j['mode']} {j['task_id']} {j['candidate']['model']} "
                        f"({entry['test']}): the tool now gives {lv} ({lr[:300]}), the recording {rv} ({rr[:300]}); "
                        f"refresh it with `{recording.refresh}`")
    return msgs


def _live(family: str):
    """The family's real sandbox and toolchain, probed now."""
    from harness import toolchains
    from harness.sandbox.local import HostSandbox

    prov = Recording(family).provenance()
    if prov["sandbox"]["name"] == "host":
        sandbox = HostSandbox()
        probed = toolchains.probe(prov["toolchain"]["name"], sandbox)
        missing = sorted(t for t, v in probed.tools.items()
                         if v["version"] is None and prov["toolchain"]["tools"][t]["version"] is not None)
        if missing:
            pytest.skip(f"not installed on this host: {', '.join(missing)} (scripts/bootstrap-debian.sh)")
        return sandbox, probed
    return None


@pytest.fixture(scope="module")
def today() -> str:
    return datetime.date.today().isoformat()


@pytest.fixture(scope="module")
def live_results(tmp_path_factory, today, engine_image):
    """``family -> (entries, live verdicts)``, each family's sample run live once."""
    from harness import toolchains
    from harness.sandbox.container import ContainerSandbox

    done = {}

    def get(family: str):
        if family not in done:
            rec = Recording(family)
            entries = sample(rec, today)
            live = _live(family)
            if live is None:
                prov = rec.provenance()
                sandbox = engine_image(lambda: ContainerSandbox(prov["sandbox"]["image"], slots=1))
                probed = toolchains.probe(prov["toolchain"]["name"], sandbox, flavor=prov["toolchain"]["flavor"])
            else:
                sandbox, probed = live
            try:
                done[family] = entries, judge_all(rec, entries, sandbox, probed, tmp_path_factory.mktemp("live"))
            finally:
                sandbox.close()
        return done[family]

    return get


@pytest.mark.parametrize("family", [pytest.param(f, marks=_marks(f)) for f in FAMILIES])
def test_recording_is_what_the_tool_says_today(family, live_results, tmp_path):
    rec = Recording(family)
    entries, live = live_results(family)
    replayed = judge_all(rec, entries, ReplaySandbox(rec), rec.toolchain(), tmp_path)
    assert entries, f"{rec.root}: no job recorded"
    assert not differences(rec, entries, live, replayed), "\n".join(differences(rec, entries, live, replayed))


class _Tracing(ReplaySandbox):
    """A replay that notes the calls it answers."""

    def __init__(self, recording):
        super().__init__(recording)
        self.used: list[str] = []

    def run(self, argv, *, files=None, limits=Limits(), collect=(), env=None):
        self.used.append(call_key(argv, files, env, collect, limits))
        return super().run(argv, files=files, limits=limits, collect=collect, env=env)


@pytest.mark.realtool
@pytest.mark.skipif("casp-integrity" not in FAMILIES, reason="no recording of casp-integrity")
def test_a_corrupted_recording_fails_the_freshness_check(tmp_path):
    """The verification output of a recorded ``verified`` job is replaced by an empty,
    failing run in a copy of the recording: the check, against a live run of that job,
    names the copy and its recorder command."""
    family = "casp-integrity"
    live_tool = _live(family)
    copy = Recording(family, tmp_path / family)
    shutil.copytree(Recording(family).root, copy.root)
    entries = [next(e for e in copy.jobs() if e["verdict"] == "verified" and not e["job"]["precheck"])]
    live = judge_all(copy, entries, *live_tool, tmp_path)
    tracing = _Tracing(copy)
    assert judge_all(copy, entries, tracing, copy.toolchain(), tmp_path) == live  # fresh before the corruption
    broken = copy.outputs.put(ProcResult(argv=["corrupted"], returncode=1, stdout="", stderr="corrupted"))["sha256"]
    lines = [json.loads(x) for x in (copy.root / "calls.jsonl").read_text().splitlines()]
    for c in lines:
        if c["key"] == tracing.used[-1]:  # the verification's output: the calls before it stay as they were
            c["output"] = broken
    (copy.root / "calls.jsonl").write_text("".join(json.dumps(c, sort_keys=True) + "\n" for c in lines))
    copy._calls = None
    replayed = judge_all(copy, entries, ReplaySandbox(copy), copy.toolchain(), tmp_path)
    msgs = differences(copy, entries, live, replayed)
    assert len(msgs) == 1 and str(copy.root) in msgs[0] and f"scripts/record.py {family}" in msgs[0], msgs
