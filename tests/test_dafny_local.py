"""Dafny intent on a directory of one's own MBPP-DFY-style test programs:
any file names, at any depth; task id = relative path without ``.dfy``.

The programs below were written for these tests (not taken from MBPP-DFY). The dataset is
a minimal stand-in with the two attributes a fetched dataset has (``root``, ``files``).
Without Dafny: tasks, skips, candidates, jobs, report sections. With the real Dafny of
the ``dafny`` image (marked ``container``): the gold specification of one program
verifies, with every mutant rejected, and a wrong one fails.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness import toolchains
from harness.benchmarks import dafny_intent as di
from harness.benchmarks.dafny_intent import Arr, Ty
from harness.model import Candidate, Limits, sha256_text

CLAMP = """\
// Clamp a value into a closed interval.
method Clamp(x: int, lo: int, hi: int) returns (r: int)
  requires lo <= hi
  ensures lo <= r <= hi
  ensures lo <= x <= hi ==> r == x
  ensures x < lo ==> r == lo
  ensures x > hi ==> r == hi
{
  if x < lo {
    r := lo;
  } else if x > hi {
    r := hi;
  } else {
    r := x;
  }
  ghost var inside := lo <= x <= hi;
}

method ClampTest(){
  var r1 := Clamp(5, 0, 3);
  print(r1);print("\\n");
  assert r1 == 3;

  var lo, hi := -1, 4;
  var r2 := Clamp(-2, lo, hi);
  assert r2 == -1;

  var r3 := Clamp(2, 0, 9);
  print(r3);print("\\n");
              //expected 2;
}

method Main(){
  ClampTest();
}
"""

DOUBLE_ALL = """\
function Double(x: int): int
{
  2 * x
}

method DoubleAll(a: seq<int>) returns (r: seq<int>)
  ensures |r| == |a|
  ensures forall i :: 0 <= i < |a| ==> r[i] == Double(a[i])
{
  r := [];
  var i := 0;
  while i < |a|
    invariant 0 <= i <= |a|
    invariant |r| == i
    invariant forall j :: 0 <= j < i ==> r[j] == Double(a[j])
  {
    r := r + [Double(a[i])];
    i := i + 1;
  }
}

method DoubleAllTest(){
  var s1: seq<int> := [1, -2, 7];
  var out1 := DoubleAll(s1);
  expect out1 == [2, -4, 14];

  var out2 := DoubleAll([]);
  expect out2 == [];
}

method Main(){
  DoubleAllTest();
}
"""

MIN_MAX = """\
method MinMax(a: array<int>) returns (lo: int, hi: int)
  requires a.Length > 0
  ensures forall i :: 0 <= i < a.Length ==> lo <= a[i] <= hi
  ensures exists i :: 0 <= i < a.Length && a[i] == lo
  ensures exists i :: 0 <= i < a.Length && a[i] == hi
{
  lo, hi := a[0], a[0];
  var k := 1;
  while k < a.Length
    invariant 1 <= k <= a.Length
    invariant forall i :: 0 <= i < k ==> lo <= a[i] <= hi
    invariant exists i :: 0 <= i < k && a[i] == lo
    invariant exists i :: 0 <= i < k && a[i] == hi
  {
    if a[k] < lo { lo := a[k]; }
    if a[k] > hi { hi := a[k]; }
    k := k + 1;
  }
}

method MinMaxTest(){
  var a1 := new int[] [4, -1, 9, 3];
  var l1, h1 := MinMax(a1);
  assert l1 == -1;
  assert h1 == 9;
}

method Main(){
  MinMaxTest();
}
"""

NO_MAIN = """\
method Inc(x: int) returns (y: int)
  ensures y == x + 1
{
  y := x + 1;
}
"""

PROGRAMS = {"clamp.dfy": CLAMP, "seqs/double_all.dfy": DOUBLE_ALL, "extra/min_max.dfy": MIN_MAX,
            "broken/no_main.dfy": NO_MAIN, "README.md": "Programs written for verikit's tests.\n"}
INT, SEQI = Ty("int"), Ty("seq", (Ty("int"),))


def _stand_in(root, programs) -> SimpleNamespace:
    """A dataset with only the attributes the benchmark may use: ``root`` and ``files``."""
    for rel, text in programs.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    files = {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}
    return SimpleNamespace(root=root, files=files)


@pytest.fixture
def own(tmp_path):
    return _stand_in(tmp_path / "mine", PROGRAMS)


def test_tasks_of_a_directory_of_own_programs(own):
    tasks, skipped = di.survey(own)
    assert not di.has_upstream_layout(own)
    assert [t.task_id for t in tasks] == ["clamp", "extra/min_max", "seqs/double_all"]
    assert [t.path for t in tasks] == ["clamp.dfy", "extra/min_max.dfy", "seqs/double_all.dfy"]
    assert all(t.source == "gold" and t.label is None for t in tasks)
    # a program that cannot be used is explained with file:line
    assert [(s.task_id, s.category) for s in skipped] == [("broken/no_main", "no-test")]
    assert skipped[0].reason.startswith("broken/no_main.dfy:1: no Main method")
    by_id = {t.task_id: t for t in tasks}

    clamp = by_id["clamp"]
    assert clamp.method.name == "Clamp" and clamp.test_method == "ClampTest"
    assert [(f.name, f.type) for f in clamp.method.params] == [("x", INT), ("lo", INT), ("hi", INT)]
    assert [(f.name, f.type) for f in clamp.method.returns] == [("r", INT)]
    assert [c.text for c in clamp.spec] == ["requires lo <= hi", "ensures lo <= r <= hi",
                                            "ensures lo <= x <= hi ==> r == x", "ensures x < lo ==> r == lo",
                                            "ensures x > hi ==> r == hi"]
    assert "ghost var inside" in clamp.method.body  # after the if/else blocks
    assert [(t.inputs, t.outputs, t.forms, t.line) for t in clamp.tests] == [
        ((5, 0, 3), (3,), ("assert",), 20), ((-2, -1, 4), (-1,), ("assert",), 25),
        ((2, 0, 9), (2,), ("//expected",), 28)]

    dbl = by_id["seqs/double_all"]
    assert dbl.method.name == "DoubleAll" and list(dbl.helpers) == ["Double"]
    assert [(f.name, f.type) for f in dbl.method.params + dbl.method.returns] == [("a", SEQI), ("r", SEQI)]
    assert [(t.inputs, t.outputs, t.forms) for t in dbl.tests] == [(((1, -2, 7),), ((2, -4, 14),), ("expect",)),
                                                                   (((),), ((),), ("expect",))]

    mm = by_id["extra/min_max"]
    assert [f.name for f in mm.method.returns] == ["lo", "hi"] and [c.kind for c in mm.spec] == [
        "requires", "ensures", "ensures", "ensures"]
    assert [(t.inputs, t.outputs) for t in mm.tests] == [((Arr((4, -1, 9, 3)),), (-1, 9))]
    assert di.last_survey()["programs"] == 4


def test_a_plain_directory_path_gives_the_same_tasks(own):
    assert [(t.task_id, t.sha256) for t in di.load_tasks(own.root)] == [(t.task_id, t.sha256)
                                                                         for t in di.load_tasks(own)]


def test_the_kits_local_dataset_gives_the_same_tasks(own):
    """``verikit run dafny-intent --dataset DIR`` opens DIR with harness.datasets.local: the
    same tasks as the stand-in, and the provenance names the directory and every file's
    sha256 (never a dataset entry's name or revision)."""
    from harness.datasets import local

    opened = local.open_dataset(own.root)
    assert [(t.task_id, t.sha256) for t in di.load_tasks(opened)] == [(t.task_id, t.sha256)
                                                                       for t in di.load_tasks(own)]
    assert not di.has_upstream_layout(opened) and di.bundled_candidates(opened, "spec") == []
    prov = opened.provenance()
    assert prov["name"] == str(own.root) and prov["source"] == {"kind": "local", "path": str(own.root),
                                                                "revision": None}
    assert prov["files"] == {rel: sha256_text(path.read_bytes()) for rel, path in own.files.items()}


def test_no_labels_bundled_specs_or_canaries(own, tmp_path):
    tasks = di.load_tasks(own)
    assert di.read_labels(own) == {} and di.bundled_candidates(own, "spec") == []
    gold = di.gold_candidates(tasks, "spec")
    assert [(c.task_id, c.model, c.origin) for c in gold] == [
        ("clamp", "gold", "gold"), ("extra/min_max", "gold", "gold"), ("seqs/double_all", "gold", "gold")]
    assert gold[0].output == "\n".join(c.text for c in tasks[0].spec)
    # the pinned dataset's canaries belong to its task 17: an own program with that id gets none
    other = di.load_tasks(_stand_in(tmp_path / "other", {"17.dfy": CLAMP}))
    assert [t.task_id for t in other] == ["17"] and di.canaries(other, "spec") == []


def test_jobs_and_report_sections(own):
    tasks = {t.task_id: t for t in di.load_tasks(own)}
    gold = {c.task_id: c for c in di.gold_candidates(list(tasks.values()), "spec")}
    ds = {"name": "own", "revision": "local"}
    job = di.build_job(tasks["seqs/double_all"], gold["seqs/double_all"], "spec", {"dialect": "2"}, ds, di.Context(3))
    again = di.build_job(tasks["seqs/double_all"], gold["seqs/double_all"], "spec", {"dialect": "2"}, ds,
                         di.Context(3))
    assert job.precheck is None and job.reject is None and job.files == again.files  # seeded: same mutants
    kinds = [c["kind"] for c in job.options["checks"]]
    assert kinds.count("correct") == 2 and kinds.count("smoke") == 2 and "probe" not in kinds
    assert 0 < kinds.count("mutant") <= 2 * di.MUTANTS_PER_TEST and job.options["helpers"] == ["Double"]
    batch = job.files["batch.dfy"]
    assert batch.startswith("// verikit dafny-intent v1: task seqs/double_all (seqs/double_all.dfy), method DoubleAll")
    assert "method VkT1Correct(a: seq<int>) returns (r: seq<int>)" in batch and "function Double(x: int): int" in batch
    assert "assume {:axiom} a == [1, -2, 7];" in batch and "  r := [2, -4, 14];" in batch
    sec = di.report_sections([], list(tasks.values()), ["spec"])
    assert sec["findings"] == {}  # the paper's task-level findings are about its own tasks
    assert sec["coverage"]["handled"] == 3 and sec["coverage"]["skipped_by_category"] == {"no-test": 1}


@pytest.mark.container
@pytest.mark.realtool
@pytest.mark.slow
def test_gold_spec_of_an_own_program_verifies_with_real_dafny(own, engine_image, tmp_path):
    """Real Dafny (the ``dafny`` image): Clamp's own specification holds on its 3 tests and
    rejects every mutant (it fixes the result); ``ensures r == x`` fails test 1."""
    from harness.executor import Executor
    from harness.registry import sandbox as get_sandbox
    from harness.results import RecordLog
    from harness.verifiers.dafny import Dafny

    task = {t.task_id: t for t in di.load_tasks(own)}["clamp"]
    gold = next(c for c in di.gold_candidates([task], "spec"))
    wrong = Candidate("clamp", "wrong", 0, "requires lo <= hi\nensures r == x", "test")
    sandbox = engine_image(lambda: get_sandbox("container", toolchain="dafny", slots=1))
    try:
        probed = toolchains.probe("dafny", sandbox)
        verifier = Dafny()
        ds = {"name": "own", "revision": "local"}
        jobs = [di.build_job(task, c, "spec", verifier.options(probed), ds, di.Context(0)) for c in (gold, wrong)]
        ex = Executor(verifier, sandbox, probed, limits=Limits(wall_s=600), parallel=1)
        records = {r["candidate"]["model"]: r for r in ex.run(jobs, RecordLog(tmp_path / "r.jsonl"), di.judge)}
    finally:
        sandbox.close()
    ok = records["gold"]
    assert ok["verdict"] == "verified", ok["reason"]
    s = di.score(ok)
    assert (s["correct"], s["tests"], s["vacuous"], s["undecided"]) == (3, 3, [], 0)
    assert s["mutants"] > 0 and s["rejected"] == s["mutants"]
    bad = records["wrong"]
    assert bad["verdict"] == "failed" and di.score(bad)["per_test"][0]["correct"] == "failed"
