"""A user's own datasets (``--dataset PATH``): harness/datasets/local.py and the CASP
formats of harness/benchmarks/casp_sources.py.

The annotated C files below are the project's own (not taken from CASP): a max of two
ints, an abs with ``requires x > INT_MIN``, a bounded array sum with loop invariants, and
a clamp helper with a caller and a ``main``. Their gold texts are verified by the real
Frama-C of this machine with the kit's flags (``harness/verifiers/framac/``) through
``HostSandbox``.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import huggingface_hub
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness import datasets as D
from harness.benchmarks.casp import sources as S

MAX2 = """\
/* The larger of two ints. */
/*@ assigns \\nothing;
    ensures \\result >= a && \\result >= b;
    ensures \\result == a || \\result == b;
*/
int max2(int a, int b) {
  return a >= b ? a : b;
}
"""

ABS = """\
#include <limits.h>

/*@ requires x > INT_MIN;
    assigns \\nothing;
    ensures \\result >= 0;
    ensures \\result == x || \\result == -x;
*/
int my_abs(int x) {
  if (x < 0)
    return -x;
  return x;
}
"""

SUM = """\
/*@ requires 0 <= n <= 1000;
    requires \\valid_read(a + (0 .. n-1));
    requires \\forall integer k; 0 <= k < n ==> -1000 <= a[k] <= 1000;
    assigns \\nothing;
    ensures -1000 * n <= \\result <= 1000 * n;
*/
int bounded_sum(const int *a, int n) {
  int s = 0;
  /*@ loop invariant 0 <= i <= n;
      loop invariant -1000 * i <= s <= 1000 * i;
      loop assigns i, s;
      loop variant n - i;
  */
  for (int i = 0; i < n; i++) {
    s += a[i];
  }
  return s;
}
"""

CLAMP_HELPER = """\
/*@ requires lo <= hi;
    assigns \\nothing;
    ensures lo <= \\result <= hi;
    ensures (lo <= v <= hi) ==> \\result == v;
    ensures v > hi ==> \\result == hi;
*/
static int clamp(int v, int lo, int hi) {
  if (v < lo) return lo;
  if (v > hi) return hi;
  return v;
}

"""
PERCENT_CONTRACT = """\
/*@ assigns \\nothing;
    ensures 0 <= \\result <= 100;
    ensures v >= 100 ==> \\result == 100;
*/"""
PERCENT_CODE = """\
int percent(int v) {
  return clamp(v, 0, 100);
}"""
MAIN = """

int main(void) {
  int p = percent(250);
  //@ assert p == 100;
  return p == 100 ? 0 : 1;
}
"""
CLAMP = CLAMP_HELPER + PERCENT_CONTRACT + "\n" + PERCENT_CODE + MAIN

NO_CONTRACT = """\
int twice(int x) { return 2 * x; }

/*@ requires \\true; */
int half(int x);

int main(void) { return twice(1) - 2; }
"""


def _write(root, files: dict[str, str]):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def c_dir(tmp_path):
    """A directory of the four annotated C files (one in a subdirectory) and a .git dir."""
    root = _write(tmp_path / "my-c", {"max2.c": MAX2, "abs.c": ABS, "arrays/sum.c": SUM, "clamp.c": CLAMP,
                                      "README.md": "my own C files\n", ".git/config": "[core]\n",
                                      ".hidden.c": "int x;\n"})
    return root


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# --- open_dataset: directories ---------------------------------------------------------

def test_directory_hashes_every_file_and_skips_hidden_ones(c_dir):
    fetched = D.open_dataset(c_dir)
    assert sorted(fetched.files) == ["README.md", "abs.c", "arrays/sum.c", "clamp.c", "max2.c"]
    assert fetched.root == c_dir and fetched.files["arrays/sum.c"] == c_dir / "arrays/sum.c"
    assert fetched.sha256["arrays/sum.c"] == _sha(SUM)
    assert fetched.dataset.name == str(c_dir)
    assert fetched.dataset.source == D.Source("local", str(c_dir))
    assert fetched.dataset.source.revision is None and fetched.dataset.format is None
    assert {f.path: f.size for f in fetched.dataset.files}["max2.c"] == len(MAX2.encode())


def test_directory_provenance_names_the_path_and_every_file(c_dir):
    prov = D.open_dataset(c_dir).provenance()
    files = {"README.md": _sha("my own C files\n"), "abs.c": _sha(ABS), "arrays/sum.c": _sha(SUM),
             "clamp.c": _sha(CLAMP), "max2.c": _sha(MAX2)}
    lines = "".join(sorted(f"{p}\t{h}\n" for p, h in files.items()))
    assert prov == {"name": str(c_dir), "source": {"kind": "local", "path": str(c_dir), "revision": None},
                    "files_sha256": hashlib.sha256(lines.encode()).hexdigest(), "n_files": 5,
                    "unpinned": [], "locations": ["local"], "files": files}
    text = json.dumps(prov)
    assert all(name not in text for name in D.DATASETS), "no dataset entry's name it did not come from"
    assert prov == json.loads(text)


def test_relative_path_is_made_absolute(c_dir, monkeypatch):
    monkeypatch.chdir(c_dir.parent)
    assert D.open_dataset("my-c").dataset.name == str(c_dir)


def test_missing_or_empty_path_is_a_clear_error(tmp_path):
    with pytest.raises(D.DatasetError, match="no such directory or file"):
        D.open_dataset(tmp_path / "nope")
    (tmp_path / "empty" / ".git").mkdir(parents=True)
    (tmp_path / "empty" / ".git" / "HEAD").write_text("x")
    with pytest.raises(D.DatasetError, match="no files"):
        D.open_dataset(tmp_path / "empty")


def test_single_data_file(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"c_code_snippet": "int f(void) { return 0; }", "acsl_snippet": ""}\n')
    fetched = D.open_dataset(path)
    assert fetched.files == {"rows.jsonl": path} and fetched.root == tmp_path
    assert fetched.provenance()["source"] == {"kind": "local", "path": str(path), "revision": None}


# --- open_dataset: YAML descriptions ---------------------------------------------------------

def test_yaml_with_a_local_location(c_dir, tmp_path):
    desc = tmp_path / "mine.yaml"
    desc.write_text("format: c-files\nlocation: my-c\nlicense: MIT\ncitation: me, 2026\n"
                    "description: four small annotated C files\n")
    fetched = D.open_dataset(desc)
    ds = fetched.dataset
    assert (ds.name, ds.format, ds.license, ds.citation) == (str(desc), "c-files", "MIT", "me, 2026")
    assert ds.source == D.Source("local", str(c_dir)) and fetched.root == c_dir
    prov = fetched.provenance()
    assert prov["descriptor"] == {"path": str(desc), "sha256": _sha(desc.read_text())}
    assert prov["source"]["path"] == str(c_dir) and len(prov["files"]) == 5


@pytest.mark.parametrize("text, line, words", [
    ("format: c-files\nlocation: [unclosed\n", 3, ["not valid YAML"]),
    ("format: c-files\nlicense: MIT\n", 1, ["location is required"]),
    ("format: c-files\nlocation: my-c\nlicence: MIT\n", 3, ["unknown key 'licence'"]),
    ("format: c-files\n\nlocation: no-such-dir\n", 3, ["no such directory or file", "no-such-dir"]),
    ("format: C Files\nlocation: my-c\n", 1, ["format"]),
    ("location:\n  hf: owner/name\n  files: [a.parquet]\n", 1, ["location.revision is required"]),
    ("location:\n  hf: owner/name\n  revision: abc\n", 1, ["location.files is required"]),
    ("location:\n  hf: owner/name\n  revision: abc\n  files:\n    - a.parquet\n    - {path: ../x}\n", 6,
     ["files[1]", "plain relative path"]),
    ("location:\n  hf: noslash\n  revision: abc\n  files: [a]\n", 1, ["bad Source"]),
    ("- just\n- a list\n", 1, ["a YAML mapping"]),
])
def test_bad_yaml_names_file_and_line(c_dir, tmp_path, text, line, words):
    desc = tmp_path / "bad.yaml"
    desc.write_text(text)
    with pytest.raises(D.DatasetError) as info:
        D.open_dataset(desc)
    msg = str(info.value)
    assert msg.startswith(f"{desc}:{line}: "), msg
    for w in words:
        assert w in msg, msg


def test_yaml_with_a_hub_location_records_that_repo_and_revision(tmp_path, monkeypatch):
    upstream = tmp_path / "hub" / "train.jsonl"
    upstream.parent.mkdir()
    upstream.write_text('{"c_code_snippet": "int f(void) { return 0; }", "acsl_snippet": "/*@ ensures \\\\result == 0; */"}\n')
    calls = []

    def fake_hub(repo_id, filename, *, repo_type=None, revision=None, **kw):
        calls.append((repo_id, filename, repo_type, revision))
        return str(upstream)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_hub)
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", "")
    digest = hashlib.sha256(upstream.read_bytes()).hexdigest()
    desc = tmp_path / "hub.yaml"
    desc.write_text(f"format: table\nlocation:\n  hf: me/my-casp\n  revision: 0123abcd\n"
                    f"  files:\n    - {{path: data/train.jsonl, sha256: {digest}}}\n")
    cache = tmp_path / "cache"
    fetched = D.open_dataset(desc, data_dir=cache)
    assert calls == [("me/my-casp", "data/train.jsonl", "dataset", "0123abcd")]
    assert fetched.files == {"data/train.jsonl": cache / "hf/datasets/me/my-casp/0123abcd/data/train.jsonl"}
    prov = fetched.provenance()
    assert prov["name"] == str(desc)
    assert prov["source"] == {"kind": "hf", "repo": "me/my-casp", "revision": "0123abcd", "repo_type": "dataset"}
    assert prov["files"] == {"data/train.jsonl": digest} and prov["unpinned"] == []
    assert prov["descriptor"]["path"] == str(desc)
    tasks = S.tasks_from(fetched)
    assert [(t.task_id, t.function, t.published) for t in tasks] == [("0", "f", None)]
    monkeypatch.setenv("VERIKIT_OFFLINE", "1")
    with pytest.raises(D.DatasetUnavailable, match="me/my-casp"):
        D.open_dataset(desc, data_dir=tmp_path / "other-cache")


# --- pin_entry ----------------------------------------------------------------------------

def test_pin_entry_lists_every_file_and_loads_once_filled_in(c_dir, tmp_path):
    entry = D.pin_entry(c_dir)
    assert entry["name"] == "my-c" and entry["source"] == {"kind": "github", "repo": None, "revision": None}
    assert [f["path"] for f in entry["files"]] == ["README.md", "abs.c", "arrays/sum.c", "clamp.c", "max2.c"]
    assert entry["files"][2] == {"path": "arrays/sum.c", "sha256": _sha(SUM), "size": len(SUM.encode())}
    text = D.dump_entry(entry)
    reg = tmp_path / "pins"
    reg.mkdir()
    (reg / "my-c.yaml").write_text(text)
    with pytest.raises(D.DatasetError, match=r"my-c\.yaml:2: description: a non-empty string"):
        D.load_entry(reg / "my-c.yaml")
    filled = dict(entry, description="mine", citation="me",
                  source={"kind": "github", "repo": "me/my-c", "revision": "c0ffee"})
    (reg / "my-c.yaml").write_text(D.dump_entry(filled))
    ds = D.load_entry(reg / "my-c.yaml")
    assert {f.path: f.sha256 for f in ds.files} == D.open_dataset(c_dir).sha256


def test_pin_entry_reads_the_source_from_a_mirror_layout(tmp_path):
    root = _write(tmp_path / "github" / "Owner" / "Repo" / "c0ffee", {"a/b.txt": "x\n"})
    entry = D.pin_entry(root)
    assert entry["name"] == "repo"
    assert entry["source"] == {"kind": "github", "repo": "Owner/Repo", "revision": "c0ffee"}
    hub = _write(tmp_path / "hf" / "models" / "o" / "m" / "rev1", {"w.txt": "w"})
    assert D.pin_entry(hub)["source"] == {"kind": "hf", "repo": "o/m", "revision": "rev1", "repo_type": "model"}
    with pytest.raises(D.DatasetError, match="not a directory"):
        D.pin_entry(root / "a" / "b.txt")


# --- CASP: annotated C files -------------------------------------------------------------

def test_c_files_one_task_per_file(c_dir):
    tasks = {t.task_id: t for t in S.tasks_from(D.open_dataset(c_dir))}
    assert sorted(tasks) == ["abs", "arrays/sum", "clamp", "max2"]
    texts = {"abs": ABS, "arrays/sum": SUM, "clamp": CLAMP, "max2": MAX2}
    for tid, t in tasks.items():
        assert t.gold_text == texts[tid], "gold verifies the whole file as it is"
        assert t.published is None
        assert t.gold_text.startswith(t.prelude + t.contract)
        assert t.gold_text.endswith(t.code + t.suffix)
        assert t.where.startswith(str(c_dir / f"{tid}.c") + ":")
    assert [tasks[k].function for k in ("abs", "arrays/sum", "clamp", "max2")] == \
        ["my_abs", "bounded_sum", "percent", "max2"]
    m = tasks["max2"]
    assert m.prelude == "/* The larger of two ints. */\n" and m.contract.startswith("/*@ assigns")
    assert m.code == "int max2(int a, int b) {\n  return a >= b ? a : b;\n}" and m.suffix == "\n"
    assert m.where.endswith("max2.c:2")
    assert tasks["abs"].prelude == "#include <limits.h>\n\n" and "x > INT_MIN" in tasks["abs"].contract
    assert "loop invariant" in tasks["arrays/sum"].code and tasks["arrays/sum"].prelude == ""


def test_c_file_targets_the_last_function_with_a_contract(c_dir):
    (t,) = [t for t in S.tasks_from(D.open_dataset(c_dir)) if t.task_id == "clamp"]
    assert t.function == "percent"
    assert t.prelude == CLAMP_HELPER, "the helper (with its own contract) stays in the prelude"
    assert t.contract == PERCENT_CONTRACT and t.code == PERCENT_CODE
    assert t.suffix == MAIN, "the caller without a contract is kept after the function"
    assert t.where.endswith("clamp.c:13")


def test_c_file_without_a_contract_names_file_and_line(tmp_path):
    root = _write(tmp_path / "d", {"ok.c": MAX2, "sub/nocontract.c": NO_CONTRACT})
    with pytest.raises(S.TaskError) as info:
        S.tasks_from(D.open_dataset(root))
    msg = str(info.value)
    assert msg.startswith(f"{root / 'sub/nocontract.c'}:6: no function definition carrying an ACSL contract")
    assert "twice (line 1), main (line 6)" in msg


def test_c_file_that_cannot_be_lexed_names_the_line(tmp_path):
    root = _write(tmp_path / "d", {"bad.c": MAX2 + "\n/* never closed\nint g(void) { return 0; }\n"})
    with pytest.raises(S.TaskError, match=rf"^{root / 'bad.c'}:10: cannot be read as C"):
        S.tasks_from(D.open_dataset(root))


def test_directory_without_task_files(tmp_path):
    root = _write(tmp_path / "d", {"notes.txt": "nothing here\n"})
    with pytest.raises(S.TaskError, match=rf"^{root}: no CASP task files"):
        S.tasks_from(D.open_dataset(root))
    with pytest.raises(S.TaskError, match="unknown CASP dataset format 'dafny'"):
        S.tasks_from(D.open_dataset(root), format="dafny")


# --- CASP: <id>/code.c + <id>/spec.acsl pairs ----------------------------------------------

def _pairs_dir(tmp_path):
    return _write(tmp_path / "pairs", {
        "p_max/spec.acsl": MAX2.split("int max2")[0].rstrip("\n"),
        "p_max/code.c": "int max2(int a, int b) {\n  return a >= b ? a : b;\n}\n",
        "p_max/meta.txt": "file_name: mine/max2.c\nverified: True\nverified_goals: 4\ntotal_goals: 4\n",
        "p_max/code_with_llm_spec_me_model.c": "int ignored(void) { return 0; }\n",
        "nested/p_abs/spec.acsl": ABS.split("int my_abs")[0],
        "nested/p_abs/code.c": "int my_abs(int x) {\n  if (x < 0)\n    return -x;\n  return x;\n}\n",
    })


def test_pairs_layout(tmp_path):
    root = _pairs_dir(tmp_path)
    tasks = {t.task_id: t for t in S.tasks_from(D.open_dataset(root))}
    assert sorted(tasks) == ["nested/p_abs", "p_max"]
    m = tasks["p_max"]
    spec = (root / "p_max/spec.acsl").read_text()
    assert m.gold_text == spec + "\n" + (root / "p_max/code.c").read_text()
    assert m.prelude + m.contract == spec and m.prelude == "/* The larger of two ints. */\n"
    assert m.function == "max2" and m.suffix == ""
    assert m.published == {"file_name": "mine/max2.c", "verified": True, "verified_goals": 4, "total_goals": 4}
    assert m.where == f"{root / 'p_max/code.c'}:1"
    a = tasks["nested/p_abs"]
    assert a.published is None and a.prelude.startswith("#include <limits.h>") and a.function == "my_abs"


def test_pairs_with_a_stray_c_file_ask_for_a_format(tmp_path):
    root = _pairs_dir(tmp_path)
    (root / "loose.c").write_text(MAX2)
    with pytest.raises(S.TaskError, match=r"loose\.c: a \.c file outside"):
        S.tasks_from(D.open_dataset(root))
    desc = tmp_path / "as-c-files.yaml"
    desc.write_text("format: c-files\nlocation: pairs\n")
    with pytest.raises(S.TaskError, match=r"p_abs/code\.c:1: no function definition carrying"):
        S.tasks_from(D.open_dataset(desc))  # the format named wins over detection


def test_sample_layout_reads_like_the_casp_loader(casp_fetched):
    tasks = S.tasks_from(casp_fetched, subdir="casp_10")
    assert [t.task_id for t in tasks] == ["00_327", "01_57", "02_12", "03_379", "04_140", "05_125",
                                          "06_114", "07_71", "08_377", "09_52"]
    t = tasks[1]
    code = casp_fetched.files["casp_10/01_57/code.c"].read_text()
    spec = casp_fetched.files["casp_10/01_57/spec.acsl"].read_text()
    assert t.gold_text == spec + "\n" + code and t.prelude + t.contract == spec
    assert set(t.published) == {"file_name", "verified", "verified_goals", "total_goals"}


# --- CASP: parquet / JSONL with the Hub dataset's columns -----------------------------------

ROWS = [
    {"file_name": "a.c", "c_code_snippet": "int max2(int a, int b) {\n  return a >= b ? a : b;\n}\n",
     "acsl_snippet": MAX2.split("int max2")[0].rstrip("\n"), "verified": True, "verified_goals": 4,
     "total_goals": 4},
    {"c_code_snippet": "int my_abs(int x) {\n  return x < 0 ? -x : x;\n}\n",
     "acsl_snippet": ABS.split("int my_abs")[0]},
]


def test_jsonl_and_parquet_rows(tmp_path):
    jsonl = tmp_path / "t" / "rows.jsonl"
    jsonl.parent.mkdir()
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    by_jsonl = S.tasks_from(D.open_dataset(jsonl))
    assert [(t.task_id, t.function) for t in by_jsonl] == [("0", "max2"), ("1", "my_abs")]
    assert by_jsonl[0].published == {"file_name": "a.c", "verified": True, "verified_goals": 4, "total_goals": 4}
    assert by_jsonl[1].published is None, "a row without verdict columns has no published verdict"
    assert by_jsonl[1].where == f"{jsonl}:2"
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "t" / "rows.parquet")
    both = S.tasks_from(D.open_dataset(tmp_path / "t"))
    assert [t.task_id for t in both] == ["rows.jsonl/0", "rows.jsonl/1", "rows.parquet/0", "rows.parquet/1"]
    by_parquet = both[2:]
    assert [t.gold_text for t in by_parquet] == [t.gold_text for t in by_jsonl]
    assert by_parquet[1].where == f"{tmp_path / 't' / 'rows.parquet'}: row 1"


def test_bad_rows_name_file_and_line(tmp_path):
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text(json.dumps(ROWS[0]) + "\n\n{not json\n")
    with pytest.raises(S.TaskError, match=rf"^{jsonl}:3: not valid JSON"):
        S.tasks_from(D.open_dataset(jsonl))
    jsonl.write_text(json.dumps({"c_code_snippet": "int f(void) { return 0; }"}) + "\n")
    with pytest.raises(S.TaskError, match=rf"^{jsonl}:1: missing column\(s\) \['acsl_snippet'\]"):
        S.tasks_from(D.open_dataset(jsonl))
    jsonl.write_text(json.dumps({"c_code_snippet": "int x;", "acsl_snippet": ""}) + "\n")
    with pytest.raises(S.TaskError, match=rf"^{jsonl}:1: no function definition found"):
        S.tasks_from(D.open_dataset(jsonl))


# --- the gold texts verify with the real Frama-C and the kit's flags -----------------------

@pytest.fixture(scope="module")
def framac():
    """(run(text) -> VerifierResult, argv) with the kit's Frama-C flags on this machine."""
    if shutil.which("frama-c") is None:
        pytest.skip("frama-c is not installed on this machine")
    from harness import toolchains
    from harness.sandbox import Limits
    from harness.sandbox.local import HostSandbox
    from harness.verifiers.framac import SOURCE, FramaC

    sandbox, fc = HostSandbox(), FramaC()
    probed = toolchains.probe("framac", sandbox)
    prepared = fc.prepare(sandbox, probed)
    argv, env, collect = fc.command(fc.options(probed, smoke=False))

    def run(text: str):
        proc = sandbox.run(argv, files={**prepared, SOURCE: text}, env=env, collect=collect,
                           limits=Limits(wall_s=300))
        return fc.parse(proc)

    return run, argv


@pytest.mark.realtool
def test_gold_texts_verify_with_frama_c(c_dir, tmp_path, framac):
    run, argv = framac
    assert argv[:4] == ["sh", "verikit_framac_job.sh", "-wp", "-wp-rte"] and "-wp-steps" in argv
    c_tasks = S.tasks_from(D.open_dataset(c_dir))
    pair_tasks = S.tasks_from(D.open_dataset(_pairs_dir(tmp_path)))
    for t in c_tasks + pair_tasks:
        res = run(t.gold_text)
        assert res.verdict == "verified", (t.task_id, res.reason)
        assert res.goals.total > 0 and res.goals.proved == res.goals.total, t.task_id
    # the candidate modes keep the rest of the file around the target function
    (clamp,) = [t for t in c_tasks if t.task_id == "clamp"]
    rebuilt = run(clamp.prelude + clamp.contract + "\n" + clamp.code + clamp.suffix)
    assert rebuilt.verdict == "verified", rebuilt.reason
