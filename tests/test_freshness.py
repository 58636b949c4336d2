"""The recordings of the rule matrix are still what the real tools say.

Each family's recording (``tests/recorded/runs/<family>/``, made by ``scripts/record.py``;
see ``tests/recording.py``) answers the rule-matrix tests in every session without running
a tool. Here a rotating sample of the recorded jobs of each tool (a verifier in one kind of
sandbox: ``PER_TOOL`` of them, drawn from all the families recorded with it, seeded by
today's date and the tool: other ones tomorrow) runs live with the real tool in the
recorded kind of sandbox, and is judged again from the recording by the same executor,
parser and judge; a verdict or reason that differs fails the test, naming the recording
to refresh and the command that does it. The last test shows that the comparison can fail:
it corrupts a copy of a recording and is told so.
"""

from __future__ import annotations

import datetime
import json
import random
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from recording import ROOT, Recording, ReplaySandbox, call_key, job_from_json

from harness.model import Limits, ProcResult

#: Recorded jobs of each tool (a verifier in one kind of sandbox) run live per session.
PER_TOOL = 3

FAMILIES = sorted(p.name for p in ROOT.iterdir() if (p / "provenance.json").is_file()) if ROOT.is_dir() else []


def tool_of(family: str) -> str:
    """The tool a family's recording was made with: its verifier and image (or ``host``)."""
    prov = Recording(family).provenance()
    return f"{prov['verifier']} in {prov['sandbox']['image'] or prov['sandbox']['name']}"


#: tool -> the families recorded with it
TOOLS: dict[str, list[str]] = {}
for _f in FAMILIES:
    TOOLS.setdefault(tool_of(_f), []).append(_f)


def _marks(tool: str) -> list:
    return [pytest.mark.realtool] + ([] if tool.endswith(" in host") else [pytest.mark.container])


def sample(families: list[str], day: str, tool: str, k: int = PER_TOOL) -> list[tuple[str, dict]]:
    """``k`` of the jobs recorded with ``tool`` in ``families``, as ``(family, entry)``,
    chosen by ``day`` (ISO date) and the tool: other ones another day."""
    pool = [(f, e) for f in families for e in Recording(f).jobs()]
    return random.Random(f"{day}:{tool}").sample(pool, min(k, len(pool)))


def judge_all(recording: Recording, entries: list[dict], sandbox, probed, tmp_path: Path) -> list[tuple[str, str]]:
    """``(verdict, reason)`` of each recorded job in ``entries`` (of ``recording``'s tool),
    run through the kit's executor (no result cache, two at a time) in ``sandbox`` with
    ``probed``; the jobs recorded with the same run limits run as one run."""
    from harness import registry
    from harness.executor import Executor
    from harness.results import RecordLog

    verifier = registry.verifier(recording.provenance()["verifier"])
    prepare = getattr(verifier, "prepare", None)
    shared = prepare(sandbox, probed) if prepare is not None else {}
    groups: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        groups.setdefault(json.dumps(entry["limits"], sort_keys=True), []).append(i)
    out: dict[int, tuple[str, str]] = {}
    for limits, idx in groups.items():
        jobs = [job_from_json(entries[i]["job"]) for i in idx]
        ex = Executor(verifier, sandbox, probed, shared_files=shared, limits=Limits(**json.loads(limits)), parallel=2,
                      cache=None)
        log = RecordLog(Path(tempfile.mkdtemp(prefix=f"{recording.family}-", dir=tmp_path)) / "records.jsonl")
        try:
            records = ex.run(jobs, log, registry.benchmark(jobs[0].benchmark).judge)
        finally:
            log.close()
        by_key = {r["key"]: r for r in records}
        for i, job in zip(idx, jobs):
            r = by_key[job.key(probed, ex.limits)]
            out[i] = (r["verdict"], r["reason"])
    return [out[i] for i in range(len(entries))]


def _comparable(verdict: str, reason: str) -> str:
    """A reason as compared: a timeout's or memout's quotes the time or memory it took,
    which no two runs share, so its numbers are left out; every other reason is compared
    word for word."""
    return re.sub(r"\d+(\.\d+)?", "#", reason) if verdict in ("timeout", "memout") else reason


def differences(recording: Recording, entries: list[dict], live: list, replayed: list) -> list[str]:
    """One message per job whose live verdict or reason is not the replayed one, naming
    the recording and its recorder command."""
    msgs = []
    for entry, (lv, lr), (rv, rr) in zip(entries, live, replayed):
        if (lv, _comparable(lv, lr)) != (rv, _comparable(rv, rr)):
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
    """``tool -> [(family, entry, live (verdict, reason))]``: the tool's sample of the day,
    run live once in one sandbox of the recorded kind."""
    from harness import toolchains
    from harness.sandbox.container import ContainerSandbox

    done = {}

    def get(tool: str):
        if tool not in done:
            picked = sample(TOOLS[tool], today, tool)
            live = _live(picked[0][0])
            if live is None:
                prov = Recording(picked[0][0]).provenance()
                sandbox = engine_image(lambda: ContainerSandbox(prov["sandbox"]["image"], slots=2))  # one per job slot
                probed = toolchains.probe(prov["toolchain"]["name"], sandbox)
            else:
                sandbox, probed = live
            try:
                live = judge_all(Recording(picked[0][0]), [e for _, e in picked], sandbox, probed,
                                 tmp_path_factory.mktemp("live"))
            finally:
                sandbox.close()
            done[tool] = [(family, entry, got) for (family, entry), got in zip(picked, live)]
        return done[tool]

    return get


@pytest.mark.parametrize("tool", [pytest.param(t, marks=_marks(t)) for t in sorted(TOOLS)])
def test_recordings_are_what_the_tool_says_today(tool, live_results, tmp_path):
    msgs = []
    for family, entry, live in live_results(tool):
        rec = Recording(family)
        replayed = judge_all(rec, [entry], ReplaySandbox(rec), rec.toolchain(), tmp_path)
        msgs += differences(rec, [entry], [live], replayed)
    assert not msgs, "\n".join(msgs)


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
