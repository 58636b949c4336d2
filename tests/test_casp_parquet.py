"""The full-CASP loader (``casp``: nicher92/CASP_dataset parquet on the Hub).

The Hub cannot be reached here, so these tests write a parquet file themselves, with the
dataset's column names, from the 10 real sample pairs, put it where the data cache
expects the Hub file, and check that the real fetch + loader path reads it. The file is
the project's own fixture, not upstream data.
"""

from __future__ import annotations

import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness import datasets
from harness.benchmarks import casp
from harness.benchmarks.casp import sources as casp_sources


def _write_parquet(data_dir, rows) -> None:
    ds = datasets.DATASETS["casp"]
    ref = ds.files[0]
    target = data_dir / ds.source.layout_prefix() / ref.path
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), target)


def test_parquet_rows_become_tasks(casp_tasks, tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_OFFLINE", "1")
    sample = [casp_tasks[k] for k in sorted(casp_tasks)]
    rows = [{"file_name": t.published["file_name"], "c_code_snippet": t.code, "acsl_snippet": t.spec,
             "verified": True, "total_goals": t.published["total_goals"],
             "verified_goals": t.published["verified_goals"]} for t in sample]
    _write_parquet(tmp_path, rows)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fetched = datasets.fetch("casp", data_dir=tmp_path)
    assert any("unpinned" in str(w.message).lower() or "not pinned" in str(w.message).lower() for w in caught)
    tasks = casp.load_tasks(fetched)
    assert [t.task_id for t in tasks] == [str(i) for i in range(len(sample))]
    for got, want in zip(tasks, sample):
        assert got.gold == want.gold
        assert got.function == want.function
        assert got.contract == want.contract
        assert got.published["total_goals"] == want.published["total_goals"]
        assert got.published["verified"] is True


def test_parquet_missing_column_names_file_and_row(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_OFFLINE", "1")
    _write_parquet(tmp_path, [{"file_name": "x.c", "c_code_snippet": "int f(void) { return 0; }"}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fetched = datasets.fetch("casp", data_dir=tmp_path)
    with pytest.raises(casp.TaskError) as err:
        casp.load_tasks(fetched)
    assert "row 0" in str(err.value) and "acsl_snippet" in str(err.value)
    assert "train-00000-of-00001.parquet" in str(err.value)


def test_own_parquet_file_records_its_own_path_not_the_hub(casp_tasks, tmp_path):
    """The same rows passed as ``--dataset FILE`` (harness.datasets.open_dataset): the
    tasks are the pinned dataset's, and the provenance names the file and its sha256,
    never nicher92/CASP_dataset@main."""
    sample = [casp_tasks[k] for k in sorted(casp_tasks)]
    rows = [{"file_name": t.published["file_name"], "c_code_snippet": t.code, "acsl_snippet": t.spec,
             "verified": t.published["verified"], "total_goals": t.published["total_goals"],
             "verified_goals": t.published["verified_goals"]} for t in sample]
    path = tmp_path / "mine" / "casp.parquet"
    path.parent.mkdir()
    pq.write_table(pa.Table.from_pylist(rows), path)
    fetched = datasets.open_dataset(path)
    prov = fetched.provenance()
    assert prov["source"] == {"kind": "local", "path": str(path), "revision": None}
    assert prov["files"] == {"casp.parquet": datasets.sha256_file(path)}
    assert "nicher92" not in str(prov) and prov["name"] == str(path)
    tasks = casp_sources.tasks_from(fetched)
    assert [t.task_id for t in tasks] == [str(i) for i in range(len(sample))]
    for got, want in zip(tasks, sample):
        assert (got.gold_text, got.prelude, got.contract, got.code, got.function) == \
            (want.gold, want.prelude, want.contract, want.code, want.function)
        assert got.published == {k: want.published[k] for k in casp_sources.PUBLISHED_COLUMNS}
        assert got.suffix == "" and got.where.startswith(f"{path}: row ")


def test_hub_parquet_through_casp_sources_matches_the_loader(casp_tasks, tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_OFFLINE", "1")
    sample = [casp_tasks[k] for k in sorted(casp_tasks)]
    _write_parquet(tmp_path, [{"c_code_snippet": t.code, "acsl_snippet": t.spec, "file_name": None,
                               "verified": True, "total_goals": 1, "verified_goals": 1} for t in sample])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fetched = datasets.fetch("casp", data_dir=tmp_path)
    assert [t.gold_text for t in casp_sources.tasks_from(fetched)] == [t.gold for t in casp.load_tasks(fetched)]
