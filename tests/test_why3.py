"""Tests of harness/verifiers/why3.py and its driver (harness/verifiers/drivers/why3_shell.py).

- Command construction (strategy and prove modes), the driver as a file of its own whose
  sha256 is in the options.
- ``parse()`` on REAL outputs of Why3 1.8.0 and its provers, recorded in the trixie
  ``rocq`` image on the kit's own tests/recorded/why3/fixture.mlw (each record carries
  its provenance: command, image id, date, probed versions). They were recorded by the
  former scripts/ntp4vc_why3_rerun.py; ``test_record_fixtures`` re-records them
  (``VERIKIT_RECORD_WHY3=tests/recorded/why3``, needs the engine and the rocq image).
- One test runs the real Why3 in a container (marks ``container`` and ``realtool``); it
  skips when no engine or no rocq image is there, unless ``VERIKIT_REQUIRE_ENGINE=1``.
- The ``why3`` mode's helpers (goal-name mapping, dependency closure:
  harness/benchmarks/ntp4vc/why3_al3.py) and the committed
  results/reproduced/ntp4vc/why3-al3-rerun.json (internal consistency; against the
  published CSV when the data mirror is set).
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.benchmarks.ntp4vc import why3_al3
from harness.model import Limits, ProcResult, termination
from harness.verifiers import why3 as w3
from harness.verifiers.why3 import DRIVER, DRIVER_PATH, PAPER_OPTIONS, SESSION_XML, WHY3CONF, Why3

ROOT = Path(__file__).resolve().parents[1]
RECORDED = Path(__file__).parent / "recorded" / "why3"
RERUN_JSON = ROOT / "results" / "reproduced" / "ntp4vc" / "why3-al3-rerun.json"
CASES = ("strategy_proved", "strategy_failed", "strategy_cut", "strategy_goal_not_found", "strategy_syntax_error",
         "prove_valid", "prove_unknown", "prove_timeout", "prove_eprover", "prove_split", "prove_type_error")


def recorded(case: str) -> dict:
    return json.loads((RECORDED / f"{case}.json").read_text())


def proc_of(rec: dict) -> ProcResult:
    return ProcResult(argv=rec["argv"], returncode=rec["returncode"], stdout=rec["stdout"], stderr=rec["stderr"],
                      wall_s=rec["wall_s"], timed_out=rec["timed_out"],
                      files={k: v.encode() for k, v in rec["files"].items()})


def parse(case: str, mutate=None):
    rec = recorded(case)
    if mutate:
        mutate(rec)
    return Why3().parse(proc_of(rec), rec["options"])


# ----------------------------------------------------------------------------- commands

def test_strategy_command_is_the_paper_baseline():
    why3 = Why3()
    opts = why3.options(None, mlw="avl.mlw", theory="AVL", goal="balance'vc")
    assert {k: opts[k] for k in PAPER_OPTIONS} == PAPER_OPTIONS
    assert opts["verifier_module"] == "why3/1" and opts["libs"] == ["."]
    assert opts["driver_sha256"] == hashlib.sha256(DRIVER_PATH.read_bytes()).hexdigest()
    argv, env, collect = why3.command(opts)
    assert argv == ["python3", DRIVER, "-L", ".", "--mlw", "avl.mlw", "--theory", "AVL", "--goal", "balance'vc",
                    "--strategy", "Auto_level_3", "--max-wall", "600", "--session", "session"]
    assert env == {"WHY3CONFIG": WHY3CONF} and collect == [SESSION_XML]


def test_prove_command_puts_the_file_before_theory_and_goal():
    why3 = Why3()
    opts = why3.options(None, mlw="f.mlw", theory="T", goal="g'vc", mode="prove", prover="z3", time_limit_s=5,
                        mem_limit_mb=1000, transformations=["split_vc"], libs=[".", "lib"])
    assert "strategy" not in opts and "max_wall_s" not in opts
    argv, env, collect = why3.command(opts)
    # why3 prove refuses -T before the file ("requires an input file")
    assert argv == ["why3", "prove", "-L", ".", "-L", "lib", "-P", "z3", "-t", "5", "-m", "1000", "-a", "split_vc",
                    "f.mlw", "-T", "T", "-G", "g'vc"]
    assert collect == []


def test_options_errors():
    why3 = Why3()
    with pytest.raises(ValueError, match="unknown why3 mode"):
        why3.options(None, mlw="f.mlw", theory="T", goal="g", mode="replay")
    with pytest.raises(ValueError, match="prover and time_limit_s"):
        why3.options(None, mlw="f.mlw", theory="T", goal="g", mode="prove")
    run_opts = why3.options(None, smoke=False, cpus=2)  # the runner's call: no target yet
    with pytest.raises(ValueError, match="need mlw, theory, goal"):
        why3.command(run_opts)


def test_driver_is_a_file_of_its_own_and_part_of_the_key(tmp_path, monkeypatch):
    src = DRIVER_PATH.read_text()
    assert not (DRIVER_PATH.parent / "__init__.py").exists()  # package data, not a module
    assert "harness" not in {line.split()[1].split(".")[0] for line in src.splitlines()
                             if line.startswith(("import ", "from "))}  # stdlib only
    assert w3.driver_source() == src
    before = Why3().options(None)["driver_sha256"]
    changed = tmp_path / "why3_shell.py"
    changed.write_text(src + "# changed\n")
    monkeypatch.setattr(w3, "DRIVER_PATH", changed)
    assert Why3().options(None)["driver_sha256"] != before  # a driver change invalidates cached results
    setup = w3.Why3Setup(conf=b"[main]\n", detect_log="", strategies={"Auto_level_3": "start:\n"})
    assert Why3.files(setup)[DRIVER] == changed.read_bytes()  # read at run time, shipped as a job file


def test_prepared_configuration_is_in_the_options():
    why3 = Why3()
    why3.prepared = w3.Why3Setup(conf=b"[main]\nrunning_provers_max = 1\n", detect_log="",
                                 strategies={"Auto_level_3": "start:\nc Z3,4.13.3 1. 1000\n"})
    opts = why3.options(None)
    assert opts["strategy_code"] == "start:\nc Z3,4.13.3 1. 1000\n"
    assert opts["why3_conf_sha256"] == hashlib.sha256(b"[main]\nrunning_provers_max = 1\n").hexdigest()
    assert "strategy_code" not in why3.options(None, mode="prove", prover="z3", time_limit_s=1)


def test_probed_version_is_in_the_options():
    class Probed:
        versions = {"why3": "1.8.0"}

    assert Why3().options(Probed(), mlw="f.mlw", theory="T", goal="g")["why3_version"] == "1.8.0"


@pytest.mark.recorded
@pytest.mark.parametrize("case", CASES)
def test_recorded_command_lines_are_this_modules(case):
    rec = recorded(case)
    prov = rec["provenance"]
    assert prov["image_id"].startswith("sha256:") and prov["date"] and prov["versions"]["why3"] == "1.8.0"
    argv, env, collect = Why3().command(rec["options"])
    assert argv == rec["argv"] == prov["command"] and env == rec["env"] and collect == rec["collect"]


# ----------------------------------------------------------------------------- setup

@pytest.mark.recorded
def test_recorded_setup_strategies_and_provers():
    setup = json.loads((RECORDED / "setup.json").read_text())
    al3 = setup["strategies"]["Auto_level_3"]
    # Why3 1.8.0 generates AL3 from the detected provers: 1 s each, split_vc, 5 s in parallel,
    # introduce_premises / inline_goal / split_all_full, 30 s in parallel
    assert al3.startswith("start:\nc CVC4,1.8 1. 1000\nc Z3,4.13.3 1. 1000\nc CVC5,1.1.2 1. 1000\n"
                          "c Eprover,3.2.5 1. 1000\nt split_vc start\n")
    assert "c CVC4,1.8 30. 4000 | Z3,4.13.3 30. 4000 | CVC5,1.1.2 30. 4000" in al3
    assert w3.strategy_provers(al3) == ["CVC4,1.8", "Z3,4.13.3", "CVC5,1.1.2", "Eprover,3.2.5"]
    assert set(setup["strategies"]) == {"Split_VC", "Auto_level_0", "Auto_level_1", "Auto_level_2", "Auto_level_3"}
    assert "Prover Eprover version 3.2.5 is not recognized." in setup["detect_stdout"]
    assert "Z3 4.13.3" in setup["provers"] and not any(p.startswith("Alt-Ergo") for p in setup["provers"])
    assert "running_provers_max = 1" in setup["why3_conf"]


def test_set_running_provers_max():
    conf = '[main]\nmagic = 14\nrunning_provers_max = 2\ntimelimit = 5.000000\n'
    assert "running_provers_max = 1\n" in w3.set_running_provers_max(conf, 1)
    assert w3.set_running_provers_max("[main]\nmagic = 14\n", 3).startswith("[main]\nrunning_provers_max = 3\n")


def test_driver_source_compiles_and_summarizes():
    ns: dict = {}
    exec(compile(w3.driver_source(), DRIVER, "exec"), ns)
    text = ("new node = 5, parent = 4\nnode change 5 Proof_status_change res=Scheduled obsolete=false\n"
            "node change 5: proved=true\nnode change 5 Proof_status_change res=Done(\nValid (0.01s, 2 steps))\n"
            "node change 4: proved=true\nnew node = 6, parent = 4\n"
            "node change 6 Proof_status_change res=Done(\nHigh failure (unrecognized prover answer))\n")
    assert ns["summarize"](text, 4) == {"proved": True, "attempts": 2, "attempt_results": {"highfailure": 1,
                                        "valid": 1}, "attempts_unfinished": 0, "nodes": 2}


# ----------------------------------------------------------------------------- parse (recorded)

@pytest.mark.recorded
def test_parse_strategy_proved():
    res = parse("strategy_proved")
    assert res.verdict == "verified", res.reason
    assert res.goals.proved == res.goals.total == 1
    assert res.extra["proved_by"] == {"CVC4 1.8": 1} and res.extra["leaves"] == 1
    assert res.goal_results[0]["name"] == "Fixture.inc'vc" and res.goal_results[0]["status"] == "proved"


@pytest.mark.recorded
def test_parse_strategy_failed_reads_the_proof_tree():
    res = parse("strategy_failed")
    assert res.verdict == "failed" and "finished without a proof" in res.reason
    # the tree AL3 built: split_vc then inline_goal on the postcondition, E failing at each call
    assert res.extra["transformations"] == {"inline_goal": 1, "split_vc": 1}
    assert res.extra["attempts"] == {"highfailure": 2, "unknown": 9}
    assert res.extra["attempts"] == res.extra["driver"]["attempt_results"]  # session == notifications
    assert res.extra["leaves"] == 1 and res.extra["leaves_proved"] == 0
    assert res.goal_results[1] == {"name": "Fixture/wrong'vc/split_vc/wrong'vc.0/inline_goal/wrong'vc.0.0",
                                   "status": "unknown", "prover": None, "time_s": None}
    assert sorted(res.extra["session_provers"].values()) == ["CVC4 1.8", "CVC5 1.1.2", "Eprover 3.2.5",
                                                               "Z3 4.13.3"]


@pytest.mark.recorded
def test_parse_strategy_cut_is_timeout():
    rec = recorded("strategy_cut")
    assert rec["returncode"] == 5
    res = parse("strategy_cut")
    assert res.verdict == "timeout" and "cut at" in res.reason
    assert res.goals.proved == 0 and res.extra["attempts"]["timeout"] >= 1


@pytest.mark.recorded
def test_parse_strategy_invalid_inputs():
    res = parse("strategy_syntax_error")
    assert res.verdict == "invalid"
    assert any(m.endswith("broken.mlw:19:2-5: syntax error") for m in res.messages), res.messages
    res = parse("strategy_goal_not_found")
    assert res.verdict == "invalid" and "no goal Fixture.nosuch'vc" in res.reason and "4 goals" in res.reason


@pytest.mark.recorded
def test_parse_strategy_fails_closed():
    def disagree(rec):
        rec["stdout"] = rec["stdout"].replace('"proved": true', '"proved": false')

    res = parse("strategy_proved", disagree)
    assert res.verdict == "infra_error" and "session says proved=True" in res.reason
    res = parse("strategy_proved", lambda rec: rec["files"].clear())
    assert res.verdict == "infra_error" and SESSION_XML in res.reason
    res = parse("strategy_proved", lambda rec: rec.update(stdout="Session created successfully\n", returncode=1))
    assert res.verdict == "infra_error" and "no driver summary" in res.reason
    res = parse("strategy_proved", lambda rec: rec["files"].update({SESSION_XML: "<why3session"}))
    assert res.verdict == "infra_error" and "does not parse" in res.reason

    def proved_but_cut(rec):
        rec["stdout"] = rec["stdout"].replace('"status": "done"', '"status": "cut"')

    assert parse("strategy_proved", proved_but_cut).verdict == "infra_error"


def test_parse_job_level_outcomes():
    """As the executor reads a run: the sandbox's endings first (``termination``), then
    ``parse``, which keeps only the output cap of its own."""
    why3 = Why3()
    opts = why3.options(None, mlw="f.mlw", theory="T", goal="g")

    def reading(proc):
        return termination(proc, why3.name) or why3.parse(proc, opts)

    assert reading(ProcResult(argv=["python3"], returncode=None, start_error="no such file")).verdict == "infra_error"
    assert reading(ProcResult(argv=["python3"], returncode=-9, timed_out=True, wall_s=9.0)).verdict == "timeout"
    assert reading(ProcResult(argv=["python3"], returncode=137, memout=True)).verdict == "memout"
    res = why3.parse(ProcResult(argv=["python3"], returncode=-9, output_truncated=True), opts)
    assert res.verdict == "infra_error" and "output exceeded the cap" in res.reason


@pytest.mark.recorded
def test_parse_prove_results():
    res = parse("prove_valid")
    assert res.verdict == "verified" and res.goal_results[0]["status"] == "valid"
    res = parse("prove_unknown")
    assert res.verdict == "failed" and res.goal_results[0]["status"] == "unknown"
    assert res.goal_results[0]["detail"] == "sat" and "wrong'vc: unknown (sat)" in res.reason
    res = parse("prove_timeout")
    assert res.verdict == "timeout" and res.goals.timeout == 1 and res.goal_results[0]["time_s"] == 1.0
    res = parse("prove_eprover")  # E 3.2.5 rejects the E 2.0 command line Why3 1.8.0 gives it
    assert res.verdict == "failed" and res.goal_results[0]["status"] == "highfailure"
    assert "Option -t (--term-ordering)" in recorded("prove_eprover")["stdout"]
    res = parse("prove_split")
    assert res.verdict == "verified" and res.goals.total == 3
    assert {g["name"] for g in res.goal_results} == {"pair'vc/Postcondition"}
    res = parse("prove_type_error")
    assert res.verdict == "invalid"
    assert res.messages == ["typo.mlw:10:8-12: This expression has type bool, but is expected to have type int"]


# ----------------------------------------------------------------------------- real Why3

@pytest.mark.container
@pytest.mark.realtool
def test_real_why3_in_container(engine_image):
    from harness import toolchains
    from harness.sandbox import images
    from harness.sandbox.container import ContainerSandbox

    image = engine_image(lambda: images.resolve("rocq"))  # Why3 1.8.0 and its provers
    why3 = Why3()
    fixture = {"fixture.mlw": (RECORDED / "fixture.mlw").read_bytes()}
    with ContainerSandbox(image, slots=1) as sb:
        probed = toolchains.probe("rocq", sb)
        assert probed.versions["why3"] == "1.8.0"
        setup = why3.setup(sb)
        assert "Auto_level_3" in setup.strategies
        files = {**fixture, **why3.files(setup)}
        opts = why3.options(probed, mlw="fixture.mlw", theory="Fixture", goal="inc'vc", max_wall_s=60)
        argv, env, collect = why3.command(opts)
        res = why3.parse(sb.run(argv, files=files, env=env, collect=collect, limits=Limits(wall_s=240, mem_mb=6144)),
                         opts)
        assert res.verdict == "verified", res.reason
        opts = why3.options(probed, mlw="fixture.mlw", theory="Fixture", goal="wrong'vc", mode="prove", prover="z3",
                            time_limit_s=2)
        argv, env, collect = why3.command(opts)
        res = why3.parse(sb.run(argv, files=files, env=env, collect=collect, limits=Limits(wall_s=120)), opts)
        assert res.verdict in ("failed", "timeout") and res.goals.proved == 0, res.reason


# ----------------------------------------------------------------------------- the why3 mode's helpers

def _task(mlw: str, goal: str):
    from harness.benchmarks.ntp4vc import Task

    return Task(task_id=f"x::{goal}", goal=goal, isabelle="", lean="", rocq="", mlw=mlw, source="pearl",
                project="pearl")


def test_goal_name_mapping():
    text = "module AVL\n  let balance () = ()\nend\n(* module Fake *)\nmodule AVL_extra\nend\n"
    assert why3_al3.why3_target(_task("data/why3/pearl/avl/avl.mlw", "avl_AVL_balanceqtvc"), text) \
        == ("AVL", "balance'vc")
    assert why3_al3.why3_target(_task("data/why3/pearl/wcf.mlw", "wcf_Top_powerqtvc"), "let power () = ()\n") \
        == ("Top", "power'vc")
    with pytest.raises(ValueError, match="0 theories"):
        why3_al3.why3_target(_task("data/why3/pearl/avl/avl.mlw", "avl_Fake_fqtvc"), text)


def test_dependency_closure(tmp_path):
    d = tmp_path / "data" / "p"
    d.mkdir(parents=True)
    (d / "main.mlw").write_text("module M\n use int.Int\n clone monoid.Monoid as X\n (* use fake.F *)\nend\n")
    (d / "monoid.mlw").write_text("module Monoid\n use import preorder.Pre\nend\n")
    (d / "preorder.mlw").write_text("module Pre end\n")
    (d / "fake.mlw").write_text("module F end\n")
    (d / "unpinned.mlw").write_text("module U end\n")
    fetched = SimpleNamespace(root=tmp_path, files={f"data/p/{n}.mlw": d / f"{n}.mlw"
                                                    for n in ("main", "monoid", "preorder", "fake")})
    deps = why3_al3.dependencies(fetched, "data/p/main.mlw")
    assert sorted(deps) == ["main.mlw", "monoid.mlw", "preorder.mlw"]
    assert deps["preorder.mlw"] == "module Pre end\n"
    (d / "main.mlw").write_text("module M\n use unpinned.U\nend\n")
    with pytest.raises(ValueError, match="data/p/unpinned.mlw is used by data/p/main.mlw but is not a pinned file"):
        why3_al3.dependencies(fetched, "data/p/main.mlw")


@pytest.mark.slow
def test_rerun_results_are_consistent():
    if not RERUN_JSON.is_file():
        pytest.skip(f"{RERUN_JSON} has not been produced yet")
    data = json.loads(RERUN_JSON.read_text())
    ran = [g for g in data["goals"] if g["verdict"] not in ("not_run", "invalid", "infra_error")]
    a = data["agreement"]
    assert a["both_true"] == sum(g["published"] and g["rerun"] for g in ran)
    assert a["both_false"] == sum(not g["published"] and not g["rerun"] for g in ran)
    assert a["published_only"] == sum(g["published"] and not g["rerun"] for g in ran)
    assert a["rerun_only"] == sum(not g["published"] and g["rerun"] for g in ran)
    assert a["compared"] == len(ran) == a["agree"] + a["published_only"] + a["rerun_only"]
    assert all(g["rerun"] == (g["verdict"] == "verified") for g in ran)
    sub = data["subset"]
    assert [g["task_id"] for g in data["goals"]] == sub["task_ids"]
    assert sum(g["published"] for g in data["goals"]) == sub["n_published_true"]
    assert data["why3"]["version"] == "1.8.0" and data["image"]["id"].startswith("sha256:")
    if not os.environ.get("VERIKIT_DATA_MIRRORS"):
        return
    from harness import datasets
    from harness.benchmarks import ntp4vc

    try:
        fetched = datasets.fetch("ntp4vc", offline=True)
    except datasets.DatasetUnavailable as exc:
        pytest.skip(f"no mirror holds the ntp4vc files: {exc}")
    tasks = ntp4vc.load_tasks(fetched)
    published = ntp4vc.rescore_auto_level_3(fetched, tasks)["per_task"]
    subset = why3_al3.sample_goals(tasks, sub["n_published_true"], sub["n_published_false"], sub["seed"])
    assert subset == sub["task_ids"]  # the subset is reproducible from its seed
    assert all(g["published"] == published[g["task_id"]] for g in data["goals"])
    # every source file the re-run shipped is the pinned file (the run predates the pin)
    for g in data["goals"]:
        base = g["mlw"].rsplit("/", 1)[0]
        for name, digest in g["files"].items():
            assert fetched.sha256[f"{base}/{name}"] == digest, (g["task_id"], name)


# ----------------------------------------------------------------------------- recording the fixtures

FIXTURE_CASES = [
    # (case name, options overrides, target theory, goal, file name to give the job)
    ("strategy_proved", {"max_wall_s": 60}, "Fixture", "inc'vc", "fixture.mlw"),
    ("strategy_failed", {"max_wall_s": 120}, "Fixture", "wrong'vc", "fixture.mlw"),
    ("strategy_cut", {"max_wall_s": 8}, "Fixture", "fermat3", "fixture.mlw"),
    ("strategy_goal_not_found", {"max_wall_s": 30}, "Fixture", "nosuch'vc", "fixture.mlw"),
    ("strategy_syntax_error", {"max_wall_s": 30}, "Fixture", "inc'vc", "broken.mlw"),
    ("prove_valid", {"mode": "prove", "prover": "z3", "time_limit_s": 5}, "Fixture", "inc'vc", "fixture.mlw"),
    ("prove_unknown", {"mode": "prove", "prover": "cvc4", "time_limit_s": 5}, "Fixture", "wrong'vc", "fixture.mlw"),
    ("prove_timeout", {"mode": "prove", "prover": "cvc4", "time_limit_s": 1}, "Fixture", "fermat3", "fixture.mlw"),
    ("prove_eprover", {"mode": "prove", "prover": "Eprover", "time_limit_s": 2}, "Fixture", "inc'vc", "fixture.mlw"),
    ("prove_split", {"mode": "prove", "prover": "z3", "time_limit_s": 5, "transformations": ["split_vc"]},
     "Fixture", "pair'vc", "fixture.mlw"),
    ("prove_type_error", {"mode": "prove", "prover": "z3", "time_limit_s": 5}, "Fixture", "inc'vc", "typo.mlw"),
]


def test_fixture_cases_cover_the_recorded_files():
    assert [c[0] for c in FIXTURE_CASES] == list(CASES)
    for case, _over, theory, goal, fname in FIXTURE_CASES:
        opts = recorded(case)["options"]
        assert (opts["theory"], opts["goal"], opts["mlw"]) == (theory, goal, fname)


def fixture_files(name: str) -> dict[str, bytes]:
    """The job's WhyML file for a fixture case: fixture.mlw itself, or a broken variant
    derived from it (``broken.mlw``: a syntax error; ``typo.mlw``: a type error)."""
    text = (RECORDED / "fixture.mlw").read_text()
    if name == "broken.mlw":
        text = text.replace("= x + 1", "= x +", 1)
    elif name == "typo.mlw":
        text = text.replace("= x + 1", "= x + true", 1)
    return {name: text.encode()}


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_record_fixtures(engine_image):
    """Re-records tests/recorded/why3/ with the real Why3 of the rocq image when
    ``VERIKIT_RECORD_WHY3`` names the output directory (about 4 minutes); each case's
    verdict must be the one of the committed recording."""
    outdir = os.environ.get("VERIKIT_RECORD_WHY3")
    if not outdir:
        pytest.skip("set VERIKIT_RECORD_WHY3=tests/recorded/why3 to re-record the Why3 fixtures")
    from harness import toolchains
    from harness.sandbox import images
    from harness.sandbox.container import ContainerSandbox

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    image = engine_image(lambda: images.resolve("rocq"))
    why3 = Why3()
    expected = {case: parse(case).verdict for case in CASES}

    def provenance(sb, probed, argv) -> dict:
        return {"recorded_by": "VERIKIT_RECORD_WHY3=DIR pytest tests/test_why3.py -k test_record_fixtures",
                "command": argv, "image": sb.image, "image_id": sb.image_digest,
                "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "versions": {k: probed.versions.get(k) for k in ("why3", "z3", "cvc4", "cvc5", "eprover")}}

    with ContainerSandbox(image, slots=1) as sb:
        probed = toolchains.probe("rocq", sb)
        setup = why3.setup(sb, running_provers_max=1)
        shared = why3.files(setup)
        (outdir / "setup.json").write_text(json.dumps({
            "provenance": provenance(sb, probed, ["why3", "config", "detect"]),
            "detect_stdout": setup.detect_log, "strategies": setup.strategies, "provers": setup.provers,
            "why3_conf": setup.conf.decode()}, indent=1) + "\n")
        for case, over, theory, goal, fname in FIXTURE_CASES:
            opts = why3.options(probed, mlw=fname, theory=theory, goal=goal, **over)
            argv, env, collect = why3.command(opts)
            proc = sb.run(argv, files={**fixture_files(fname), **shared}, env=env, collect=collect,
                          limits=Limits(wall_s=300, mem_mb=6144, cpus=1))
            rec = {"provenance": provenance(sb, probed, argv), "options": opts, "env": env, "collect": collect,
                   "argv": proc.argv, "returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
                   "wall_s": round(proc.wall_s, 2), "timed_out": proc.timed_out,
                   "files": {k: v.decode("utf-8", "replace") for k, v in proc.files.items()}}
            (outdir / f"{case}.json").write_text(json.dumps(rec, indent=1, ensure_ascii=False) + "\n")
            got = (termination(proc, why3.name) or why3.parse(proc, opts)).verdict
            assert got == expected[case], (case, got)


def test_copy_is_not_shared():
    # parse() must not mutate the options it is given
    rec = recorded("strategy_proved")
    opts = copy.deepcopy(rec["options"])
    Why3().parse(proc_of(rec), opts)
    assert opts == rec["options"]
