"""Tests of harness/benchmarks/ntp4vc/ on the real NTP4VC files (dataset ``ntp4vc``,
fetched from the mirror in ``VERIKIT_DATA_MIRRORS``): the benchmark's declared interface,
tasks, exact rescoring of the published Auto_level_3 and Sledgehammer results, and
published-vs-reproduced (``verikit reproduce ntp4vc`` through the runner)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from harness import datasets, registry
from harness.benchmarks import ntp4vc
from harness.model import GOLD
from harness.plugin import Benchmark, Reproduction

X_ITEMS = {
    "frama_c/klibc_stdio/__fflush_Why3_ide::__fflush_Why3_ide_VC__fflush_call_write_pre_goal31",
    "frama_c/klibc_stdio/_fwrite_Why3_ide::_fwrite_Why3_ide_VC_fwrite_call___fflush_pre_part1_goal15",
    "frama_c/klibc_stdio/_fwrite_Why3_ide::_fwrite_Why3_ide_VC_fwrite_call___fflush_pre_part4_goal16",
    "frama_c/verker/__tolower_Why3_ide::__tolower_Why3_ide_VC__tolower_post_goal0",
    "frama_c/verker/__toupper_Why3_ide::__toupper_Why3_ide_VC__toupper_post_goal0",
    "frama_c/x509_parser/_parse_arc_Why3_ide::_parse_arc_Why3_ide_VC_parse_arc_assert_rte_mem_access_part1_goal5",
}
DUP_SH = ("data/why3/frama_c/klibc_string/memmem_Why3_ide_vcg/isabelle/"
          "memmem_Why3_ide_VCmemmem_disjoint_occr_not_occur_err_part1_goal1.thy")
PAPER = Path(__file__).resolve().parents[1] / "results" / "published" / "ntp4vc.json"


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    if not os.environ.get("VERIKIT_DATA_MIRRORS"):
        pytest.skip("VERIKIT_DATA_MIRRORS is not set: the real data mirror (../shared/data beside "
                    "the checkout) is needed for the NTP4VC tests")
    try:
        return datasets.fetch("ntp4vc", data_dir=tmp_path_factory.mktemp("verikit-data"),
                              offline=True)
    except datasets.DatasetUnavailable as exc:
        pytest.skip(f"no mirror in VERIKIT_DATA_MIRRORS holds the ntp4vc files: {exc}")


@pytest.fixture(scope="module")
def tasks(fetched):
    return ntp4vc.load_tasks(fetched)


@pytest.fixture(scope="module")
def al3(fetched, tasks):
    return ntp4vc.rescore_auto_level_3(fetched, tasks)


@pytest.fixture(scope="module")
def sh(fetched, tasks):
    return ntp4vc.rescore_sledgehammer(fetched, tasks)


@pytest.fixture(scope="module")
def published():
    return json.loads(PAPER.read_text())


def fig(published, name):
    (f,) = [f for f in published["figures"] if f["name"] == name]
    return f


def copy_files(fetched, dest: Path, rels) -> Path:
    for rel in rels:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fetched.files[rel], dest / rel)
        os.chmod(dest / rel, 0o644)
    return dest


# --- entry and tasks --------------------------------------------------------------------

def test_dataset_entry_is_fully_pinned():
    ds = datasets.DATASETS["ntp4vc"]
    assert ds.source.repo == "xqyww123/NTP4VC" and len(ds.source.revision) == 40
    paths = {f.path for f in ds.files}
    assert {"test_set.isabelle.lst", "test_set.lean.txt.lst", "test_set.rocq.lst",
            "data/why3/NTP4VC-SH.db.csv", "README.md"} <= paths
    assert sum(p.endswith("why3_auto_level_3.db.csv") for p in paths) == 10
    assert all(f.sha256 and f.size for f in ds.files)


def test_600_tasks_300_per_source(tasks):
    assert len(tasks) == 600
    assert len({t.task_id for t in tasks}) == 600
    assert sum(t.source == "pearl" for t in tasks) == 300
    assert sum(t.source == "frama_c" for t in tasks) == 300
    for t in tasks:
        assert t.isabelle.endswith(".thy") and t.lean.endswith(".lean") and t.rocq.endswith(".v")
        assert t.goal in Path(t.lean).stem
        assert t.category is None  # not derivable from the released data


def test_table3_project_counts(tasks):
    counts = {}
    for t in tasks:
        if t.table3_project:
            counts[t.table3_project] = counts.get(t.table3_project, 0) + 1
    assert counts == {"contiki_list": 78, "contiki_memb": 21, "standard_algorithms": 53,
                      "x509_parser": 9, "should_we_balance": 24, "verker": 85, "klibc": 14,
                      "airborne": 16}


def test_x_prefix_normalized(tasks):
    x = {t.task_id: t for t in tasks if t.x_prefixed}
    assert set(x) == X_ITEMS
    for t in x.values():
        assert t.x_prefixed == ("isabelle", "rocq")  # Lean's file has no X
        assert Path(t.isabelle).stem == "X" + t.goal
        assert Path(t.rocq).stem == "X" + t.goal
        assert Path(t.lean).stem == t.goal
        assert t.source == "frama_c"


def test_malformed_manifest_line_names_file_and_line(fetched, tmp_path):
    root = copy_files(fetched, tmp_path, ntp4vc.MANIFESTS.values())
    lst = root / "test_set.rocq.lst"
    lines = lst.read_text().splitlines()
    lines[41] = lines[41].replace("/rocq/", "/coq/")
    lst.write_text("\n".join(lines) + "\n")
    with pytest.raises(ntp4vc.ManifestError, match=rf"{lst}:42: malformed manifest line"):
        ntp4vc.load_tasks(root)


def test_item_missing_from_one_manifest_is_an_error(fetched, tmp_path):
    root = copy_files(fetched, tmp_path, ntp4vc.MANIFESTS.values())
    lst = root / "test_set.isabelle.lst"
    lines = lst.read_text().splitlines()
    lst.write_text("\n".join(lines[:-1] + [lines[0]]) + "\n")  # last item replaced: duplicate
    with pytest.raises(ntp4vc.ManifestError, match=rf"{lst}:600: duplicate item"):
        ntp4vc.load_tasks(root)
    lst.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(ntp4vc.ManifestError, match="not in all three manifests"):
        ntp4vc.load_tasks(root)


# --- Auto_level_3 (Table 2) -------------------------------------------------------------

def test_auto_level_3_reproduces_table2(al3, published):
    assert al3["overall"] == {"passed": 132, "total": 600, "percent": 22.00}
    assert al3["by_source"]["pearl"]["passed"] == 59
    assert al3["by_source"]["frama_c"]["passed"] == 73
    assert sum(al3["per_task"].values()) == 132 and len(al3["per_task"]) == 600
    for name, got in (("table2.auto_level_3.total", al3["overall"]),
                      ("table2.auto_level_3.source.pearl", al3["by_source"]["pearl"]),
                      ("table2.auto_level_3.source.frama_c", al3["by_source"]["frama_c"])):
        f = fig(published, name)
        assert (got["passed"], got["total"], got["percent"]) == (f["passed"], f["total"], f["percent"])


@pytest.mark.slow
def test_auto_level_3_one_row_per_item_and_conflicts_rejected(fetched, tasks, al3, tmp_path):
    """Each item joins exactly one goal row; a second, contradicting row for a proved item
    is an error rather than silently and-ed or overwritten."""
    assert set(al3["goals_per_task"].values()) == {1}
    al3_files = [p for p in fetched.files if p.endswith("why3_auto_level_3.db.csv")]
    root = copy_files(fetched, tmp_path, al3_files)
    proved = next(t for t in tasks if t.source == "pearl"
                  and ntp4vc.rescore_auto_level_3(fetched, [t])["per_task"][t.task_id])
    csv_path = root / "data/why3/pearl/why3_auto_level_3.db.csv"
    with open(csv_path, "a") as fh:
        fh.write(f"{proved.mlw},{proved.goal},False\n")
    with pytest.raises(ntp4vc.ManifestError, match="conflicting results"):
        ntp4vc.rescore_auto_level_3(root, tasks)


def test_table2_category_rows_are_not_reproducible(al3, published):
    rows = [f for f in published["figures"] if f["name"].startswith("table2.auto_level_3.category.")]
    assert {f["row"] for f in rows} == {c for cs in ntp4vc.CATEGORIES.values() for c in cs}
    # the paper's rows add up to what is reproduced per source
    pearl = sum(f["passed"] for f in rows if f["row"] in ntp4vc.CATEGORIES["pearl"])
    real_c = sum(f["passed"] for f in rows if f["row"] in ntp4vc.CATEGORIES["frama_c"])
    assert (pearl, real_c) == (al3["by_source"]["pearl"]["passed"],
                               al3["by_source"]["frama_c"]["passed"])
    for f in rows:
        assert "category labels are not in the released data" in f["not_reproducible"]
        assert al3["by_category"][f["row"]]["passed"] is None


# --- Sledgehammer (Table 5) ---------------------------------------------------------------

def test_sledgehammer_reproduces_table5(sh, published):
    f = fig(published, "table5.sledgehammer.isabelle.pass_at_1")
    assert sh["overall"] == {"passed": 108, "total": 600, "percent": 18.00}
    assert (f["passed"], f["percent"]) == (108, 18.00)
    assert sh["by_source"]["pearl"]["passed"] + sh["by_source"]["frama_c"]["passed"] == 108


def test_sledgehammer_duplicate_row_counted_once(sh):
    assert list(sh["duplicates"]) == [DUP_SH]
    assert sh["duplicates"][DUP_SH]["rows"] == 2
    assert sh["naive_success_rows_in_test_set"] == 109  # counting rows would be wrong
    assert sh["outside_test_set"] == {"files": 75, "success": 44}
    assert any("counted once" in n for n in sh["notes"])


def test_sledgehammer_conflicting_duplicate_is_an_error(fetched, tasks, tmp_path):
    root = copy_files(fetched, tmp_path, [ntp4vc.SLEDGEHAMMER_CSV])
    path = root / ntp4vc.SLEDGEHAMMER_CSV
    with open(path, "a", newline="") as fh:
        fh.write(f"{DUP_SH}:14,Status.FAIL,1,[1.0],x,END\n")
    with pytest.raises(ntp4vc.ManifestError, match="conflicting statuses"):
        ntp4vc.rescore_sledgehammer(root, tasks)


def test_hammer_union_is_not_reproducible(fetched, tasks, published, sh):
    rep = ntp4vc.reproduce_figures(fetched, tasks, published)
    union = [f for f in rep["figures"] if f["name"].startswith("table6.hammers.")]
    assert len(union) == 12
    total = next(f for f in union if f["name"] == "table6.hammers.overall.total")
    assert total["published"]["passed"] == 114
    for f in union:
        assert f["status"] == "not_reproducible" and f["reproduced"] is None and f["equal"] is None
        assert "CoqHammer" in f["notes"][0]
    coq = next(f for f in rep["figures"] if f["name"] == "table5.coqhammer.rocq.pass_at_1")
    assert coq["status"] == "not_reproducible"
    assert all(c["ok"] for c in rep["consistency"])  # Sledgehammer alone <= the union


# --- published vs reproduced -----------------------------------------------------------

def test_reproduce_equal_for_every_reproducible_figure(fetched, tasks, published):
    rep = ntp4vc.reproduce_figures(fetched, tasks)
    assert len(rep["figures"]) == len(published["figures"])
    done = [f for f in rep["figures"] if f["status"] != "not_reproducible"]
    names = {f["name"] for f in done}
    assert {"table2.auto_level_3.total", "table2.auto_level_3.source.pearl",
            "table2.auto_level_3.source.frama_c", "table5.sledgehammer.isabelle.pass_at_1",
            "table3.vcs.total"} <= names
    for f in done:
        assert f["equal"] is True, f
        assert f["reproduced"] == f["published"], f
    assert rep["summary"]["differs"] == 0 and rep["summary"]["all_reproducible_equal"]


def test_reproduce_detects_a_wrong_published_figure(fetched, tasks, published):
    bad = json.loads(json.dumps(published))
    fig(bad, "table5.sledgehammer.isabelle.pass_at_1")["passed"] = 109
    rep = ntp4vc.reproduce_figures(fetched, tasks, bad)
    f = next(f for f in rep["figures"] if f["name"] == "table5.sledgehammer.isabelle.pass_at_1")
    assert f["equal"] is False and f["status"] == "differs"
    assert not rep["summary"]["all_reproducible_equal"]


def test_published_json_references(published):
    assert published["benchmark"] == "ntp4vc"
    assert published["source"]["paper"].startswith("Neural Theorem Proving for Verification Conditions")
    for f in published["figures"]:
        assert f["table"] in ("Table 2", "Table 3", "Table 5", "Table 6") and f["row"]
        if "passed" in f:
            assert round(100 * f["passed"] / f["total"], 2) == f["percent"], f


def test_benchmark_reproduce_is_a_rescoring(fetched):
    rep = ntp4vc.BENCHMARK.reproduce(fetched, None)
    assert isinstance(rep, Reproduction) and ntp4vc.BENCHMARK.reproduce_modes() == ()
    assert rep.summary() == {"reproduced": 13, "differs": 0, "not_reproducible": 22}
    total = next(f for f in rep.figures if f["name"] == "table2.auto_level_3.total")
    assert total["reproduced"] == {"passed": 132, "total": 600, "percent": 22.00}
    assert all(c["ok"] for c in rep.sections["consistency"])
    assert any("X prefix dropped" in n for n in rep.notes)


@pytest.mark.slow
def test_runner_reproduce_writes_a_valid_run_dir(fetched, tmp_path, monkeypatch):
    """``verikit reproduce ntp4vc --out DIR``: no job runs, a schema-valid directory."""
    from rich.console import Console

    from harness.results import validate_run_dir
    from harness.runner import reproduce
    from harness.runspec import RunSettings, RunSpec

    monkeypatch.setenv("VERIKIT_DATA", str(tmp_path / "data"))
    rep, code = reproduce(RunSpec(benchmark="ntp4vc"), tmp_path / "rep", settings=RunSettings(command=["test"]),
                          console=Console(stderr=True, quiet=True))
    assert code == 0 and rep.summary()["reproduced"] == 13
    assert validate_run_dir(tmp_path / "rep") == []
    report = json.loads((tmp_path / "rep" / "report.json").read_text())
    assert report["reproduction"]["summary"] == {"reproduced": 13, "differs": 0, "not_reproducible": 22}
    assert (tmp_path / "rep" / "records.jsonl").read_text() == ""


# --- the declared interface -------------------------------------------------------------

def test_benchmark_is_registered_with_its_declared_interface():
    b = registry.benchmark("ntp4vc")
    assert b is ntp4vc.BENCHMARK and isinstance(b, Benchmark)
    assert b.mode_option == "lang" and b.modes == ("isabelle", "lean", "rocq", "why3")
    assert b.default_modes == ("rocq",) and b.container_only
    assert b.derived_images() == {"ntp4vc-rocq": "rocq"}
    assert b.adaptation("rocq") == ntp4vc.ROCQ_ADAPTATION and b.adaptation("lean") is None
    assert {m: b.verifier_for(m) for m in b.modes} == {m: m for m in b.modes}
    with pytest.raises(ValueError, match="unknown NTP4VC language"):
        b.verifier_for("coq")
    with pytest.raises(ValueError, match="no derived image"):
        b.derived_image_spec("lean", None, lambda toolchain: "unused")


def test_gold_is_the_task_file_with_its_placeholder(tasks):
    for lang, placeholder in (("rocq", "Admitted."), ("lean", "sorry"), ("isabelle", "sorry")):
        gold = ntp4vc.BENCHMARK.gold_candidates(tasks, lang)
        assert len(gold) == 600 and {(c.model, c.output, c.origin) for c in gold} == {(GOLD, placeholder, "gold")}
    canaries = ntp4vc.BENCHMARK.canaries(tasks, "rocq")
    assert len(canaries) == len(ntp4vc.proofs.ROCQ_CANARIES) == 15 and {c.task_id for c, _ in canaries} == {ntp4vc.CANARY_TASK}
    assert ntp4vc.BENCHMARK.canaries(tasks, "lean") == [] and ntp4vc.BENCHMARK.canaries(tasks, "why3") == []


def test_tasks_carry_the_published_al3_result_and_source_pin(fetched, tasks, al3):
    assert {t.task_id: t.published_al3 for t in tasks} == al3["per_task"]
    assert {t.mlw_pinned for t in tasks if t.source == "pearl"} == {True}
    assert {t.mlw_pinned for t in tasks if t.source == "frama_c"} == {False}
    t = tasks[0]
    assert dict(t.files_sha256)[t.rocq] == fetched.sha256[t.rocq] and len(t.sha256) == 64
    assert len({x.sha256 for x in tasks}) == 600


def test_sample_draws_the_recorded_rerun_goals(tasks):
    rerun = json.loads((Path(__file__).resolve().parents[1] / "results" / "reproduced" / "ntp4vc"
                        / "why3-al3-rerun.json").read_text())
    ids = ntp4vc.BENCHMARK.sample(tasks, "why3", 30, 0)
    assert ids == rerun["subset"]["task_ids"]
    by_id = {t.task_id: t for t in tasks}
    assert sum(by_id[i].published_al3 for i in ids) == 20
    other = ntp4vc.BENCHMARK.sample(tasks, "rocq", 5, 1)
    assert len(other) == 5 and other == ntp4vc.BENCHMARK.sample(tasks, "rocq", 5, 1)
    with pytest.raises(ValueError, match="cannot draw"):
        ntp4vc.BENCHMARK.sample(tasks, "why3", 300, 0)


# --- library closures (the per-project lib/ trees are pinned) ----------------------------

@pytest.mark.slow
def test_every_task_resolves_in_every_language_from_pinned_files(fetched, tasks):
    """No tool needed: every import of every task file, in Rocq, Lean and Isabelle, and of
    every library file they load, is a pinned file of the dataset or comes from outside the
    repository (Mathlib; Isabelle/HOL and the AFP sessions NTP4Verif's ROOT lists)."""
    from harness.benchmarks.ntp4vc import libraries

    pinned = set(fetched.files)
    lib = ntp4vc.RocqLibrary.load(fetched)
    rocq_missing = {t.task_id: lib.closure(t.rocq)[1] for t in tasks}
    assert not any(rocq_missing.values()), [kv for kv in rocq_missing.items() if kv[1]][:3]
    for language, external in (("lean", {"Mathlib"}),
                               ("isabelle", {"Complex_Main", "Automation_Base.Automation_Base",
                                             "HOL-Combinatorics.List_Permutation", "HOL-Library.Char_ord",
                                             "HOL-Library.FSet", "HOL-Library.Finite_Map",
                                             "HOL-Library.List_Lexorder", "HOL-Library.Multiset_Order",
                                             "HOL-Library.Sublist", "HOL-Number_Theory.Prime_Powers",
                                             "List-Index.List_Index", "Minilang.Minilang",
                                             "Word_Lib.Word_Lemmas"})):
        closures = libraries.closures(fetched, tasks, language)
        assert len(closures) == 600
        missing = {tid: c.missing for tid, c in closures.items() if c.missing}
        assert not missing, f"{language}: {len(missing)} task(s) do not resolve, e.g. {list(missing.items())[:2]}"
        assert set().union(*(c.external for c in closures.values())) == external
        files = set().union(*(c.files for c in closures.values()))
        assert files <= pinned and len(files) == 271
        # every real-C project's own lib/ theories are among them (what was missing before)
        projects = {tuple(f.split("/")[2:4]) for f in files if f.startswith("data/why3/frama_c/") and "/lib/" in f}
        assert {p[1] for p in projects} >= {"airborne", "contiki_list", "verker", "standard_algorithms",
                                          "klibc_string", "x509_parser", "should_we_balance"}


def test_rocq_modules_resolve_by_coqcs_q_rule(fetched):
    """``RocqLibrary.resolve`` (a look-up per dotted prefix) gives what the ``-Q dir name``
    rule gives read as a scan of every theory in declaration order, for every module the
    pinned files require and for a module two theories' names are prefixes of."""
    lib = ntp4vc.RocqLibrary.load(fetched)

    def scan(logical: str) -> str | None:
        for name, directory in lib.theories.items():
            if logical.startswith(name + "."):
                rel = f"{directory}/{logical[len(name) + 1:].replace('.', '/')}.v"
                if rel in lib.files:
                    return rel
        return None

    modules = sorted({m for text in lib.files.values() for m in lib.requires(text)})
    assert len(modules) > 400 and len(lib.theories) > 600
    assert [lib.resolve(m) for m in modules] == [scan(m) for m in modules]
    assert sum(lib.resolve(m) is None for m in modules) < len(modules) // 2
    both = ntp4vc.RocqLibrary({"A.B": "second", "A": "first"}, {"second/C.v": "", "first/B/C.v": ""})
    assert both.resolve("A.B.C") == "second/C.v" and both.resolve("A.D") is None
    both.theories = {"A": "first", "A.B": "second"}  # declared first wins
    assert both.resolve("A.B.C") == "first/B/C.v"


@pytest.mark.slow
def test_a_missing_library_file_is_named(fetched, tasks, tmp_path):
    """The closure check can fail: with one library file gone, the tasks that import it
    report the import and the file that wanted it."""
    import shutil

    from harness.benchmarks.ntp4vc import libraries

    task = next(t for t in tasks if t.project == "verker")
    lean = libraries.closures(fetched, [task], "lean")[task.task_id]
    gone = lean.files[-1]
    root = tmp_path / "repo"
    for rel, path in fetched.files.items():
        if rel != gone:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, root / rel)
    again = libraries.closures(root, [task], "lean")[task.task_id]
    module = gone.split("/", 2)[2][:-len(".lean")].replace("/", ".")  # data/why3/... or generation/lean/...
    assert any(m.endswith(f": {module}") for m in again.missing), again.missing


def test_lean_jobs_allow_the_axioms_of_the_imported_library(fetched, tasks):
    """With the library trees pinned, a Lean job's allowed assumptions are the task's own
    axioms plus those its imported library modules declare (qualified as ``#print
    axioms`` prints them); nothing else (command line and parser: tests/test_lean.py)."""
    from harness import registry
    from harness.benchmarks.ntp4vc import libraries

    task = next(t for t in tasks if t.project == "verker")
    ctx = ntp4vc.BENCHMARK.context(fetched, tasks, "lean", registry.verifier("lean"), 0)
    job = ntp4vc.BENCHMARK.build_job(task, ntp4vc.BENCHMARK.gold_candidates([task], "lean")[0], "lean", {},
                                     {"name": "ntp4vc", "revision": "x"}, ctx)
    assert job.precheck is None
    lean = registry.verifier("lean")
    own = lean.declared_axioms(fetched.files[task.lean].read_text())
    lib = set()
    for f in libraries.closures(fetched, [task], "lean")[task.task_id].files:
        lib |= lean.declared_axioms(fetched.files[f].read_text())
    assert lib - own and set(job.options["allowed_assumptions"]) == own | lib
