"""The HF backend's lean path (``HFBackend.lean``, ``Loader.load_lean``, ``ArrowRows``): a recipe of
MinHash dedups over JSONL runs without importing ``datasets`` and gives the same export, byte for
byte, as the full path (``DJ_LEAN=0``); anything it cannot read as the full path does goes the
full way (same output, same errors)."""
import json
import os
import random
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest
import yaml

from data_juicer.cli.process import main
from data_juicer.core import loader as loader_mod
from data_juicer.core.dataset import ArrowRows, DJDataset, numpy_array, to_numpy
from data_juicer.core.loader import Loader, SourceSpec

MINHASH = {"document_minhash_deduplicator": {"tokenization": "space", "window_size": 3, "lowercase": True,
                                             "num_permutations": 64, "jaccard_threshold": 0.7}}


def _docs(n=40, seed=3):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(500)] + ["naïve", "日本語", "emoji😀", "Ünïcödé"]
    return [" ".join(rng.choice(vocab) for _ in range(30)) for _ in range(n)]


def _rows_nested():
    docs = _docs()
    rows = [{"id": i, "text": t, "meta": {"src": f"s{i % 3}", "tags": [f"t{i}", None], "deep": {"x": i / 7}},
             "score": None if i % 4 == 0 else i * 0.5, "opt": None}
            for i, t in enumerate(docs)]
    rows += [dict(rows[i], id=100 + i) for i in range(0, 10, 2)]  # exact copies: dropped
    return rows


def _write(path, rows, raw_lines=()):
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
        for line in raw_lines:
            f.write(line + "\n")
    return path


def _run(tmp_path, name, data, lean: bool, monkeypatch, extra=None):
    folder = tmp_path / name
    folder.mkdir()
    recipe = {"project_name": name, "dataset_path": str(data), "np": 2, "use_cache": False,
              "export_path": str(folder / "out.jsonl"), "work_dir": str(folder), "process": [MINHASH],
              **(extra or {})}
    path = folder / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    monkeypatch.setenv("DJ_LEAN", "1" if lean else "0")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / f"hf-{name}"))
    rc = main(["--config", str(path)])
    loader_mod._join_prefetch()
    return rc, folder


def _both(tmp_path, data, monkeypatch, extra=None, lean_load=True):
    got = Loader(text_keys=["text"], cache_dir=str(tmp_path / "probe")).load_lean([SourceSpec(str(data))])
    assert (got is not None) == lean_load  # the lean run below does (not) take the lean load
    loader_mod._join_prefetch()
    rc_full, full = _run(tmp_path, "full", data, False, monkeypatch, extra)
    rc_lean, lean = _run(tmp_path, "lean", data, True, monkeypatch, extra)
    assert rc_full == rc_lean == 0
    out_full, out_lean = (full / "out.jsonl").read_bytes(), (lean / "out.jsonl").read_bytes()
    assert out_lean == out_full
    return out_lean.decode("utf-8").splitlines()


@pytest.fixture(params=["small", "streamed"])
def size(request, monkeypatch):
    if request.param == "streamed":  # the memory-mapped Arrow file (a large JSONL), in small blocks
        monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)
        monkeypatch.setattr(loader_mod, "STREAM_BLOCK_BYTES", 4096)
    yield request.param
    loader_mod._join_prefetch()


def test_nested_nulls_unicode_same_export(tmp_path, monkeypatch, size):
    data = _write(tmp_path / "in.jsonl", _rows_nested())
    lines = _both(tmp_path, data, monkeypatch)
    assert len(lines) == 40  # the 5 copies dropped
    first = json.loads(lines[0])
    assert first["meta"] == {"src": "s0", "tags": ["t0", None], "deep": {"x": 0.0}}
    assert first["score"] is None and first["opt"] is None
    assert "__dj__" not in lines[0]


def test_skip_op_error_off_and_kept_all(tmp_path, monkeypatch, size):
    rows = [{"text": t} for t in _docs(25, seed=9)]
    data = _write(tmp_path / "in.jsonl", rows)
    lines = _both(tmp_path, data, monkeypatch, {"skip_op_error": False})
    assert len(lines) == 25


@pytest.mark.parametrize("extra", [{"np": 1}, {"keep_hashes_in_res_ds": True}, {"open_tracer": True},
                                   {"use_cache": True}, {"op_fusion": True}])
def test_settings_outside_the_lean_surface_same(tmp_path, monkeypatch, extra):
    # these leave the hashing shortcut or probe the data: the lean run turns its rows into a
    # datasets.Dataset where it must (HFBackend._hf) and gives the same export
    data = _write(tmp_path / "in.jsonl", _rows_nested())
    lines = _both(tmp_path, data, monkeypatch, extra)
    assert len(lines) == 40


def test_stats_and_shards_same(tmp_path, monkeypatch):
    data = _write(tmp_path / "in.jsonl", _rows_nested())
    extra = {"export_shard_size": 1000}
    rc_full, full = _run(tmp_path, "full", data, False, monkeypatch, extra)
    rc_lean, lean = _run(tmp_path, "lean", data, True, monkeypatch, extra)
    assert rc_full == rc_lean == 0
    names = sorted(p.name for p in full.iterdir() if p.suffix == ".jsonl")
    assert names == sorted(p.name for p in lean.iterdir() if p.suffix == ".jsonl") and len(names) > 1
    for n in names:
        assert (full / n).read_bytes() == (lean / n).read_bytes()


def test_mixed_types_fall_back(tmp_path, monkeypatch):
    # a field that changes kind: pyarrow rejects it, the full load names the line; the lean load declines
    rows = [{"text": t, "v": 1} for t in _docs(10)]
    data = _write(tmp_path / "in.jsonl", rows, ['{"text": "a b c d", "v": "x"}'])
    ld = Loader(text_keys=["text"], cache_dir=str(tmp_path / "c"))
    assert ld.load_lean([SourceSpec(str(data))]) is None
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf"))
    with pytest.raises(Exception) as full_err:
        ld.load([SourceSpec(str(data))])
    assert "line 11" in str(full_err.value)


@pytest.mark.parametrize("case", ["empty", "blank", "null_text", "int_text", "media", "bad_utf8", "no_text"])
def test_lean_load_declines(tmp_path, case):
    path = tmp_path / "in.jsonl"
    docs = _docs(5)
    if case == "empty":
        path.write_bytes(b"")
    elif case == "blank":
        path.write_bytes(b"\n\n  \n")
    elif case == "null_text":
        _write(path, [{"text": docs[0]}, {"text": None}])
    elif case == "int_text":
        _write(path, [{"text": 5}, {"text": 6}])
    elif case == "media":
        _write(path, [{"text": docs[0], "images": ["a.png"]}])
    elif case == "bad_utf8":
        path.write_bytes(b'{"text": "ok \xff\xfe here"}\n')
    else:
        _write(path, [{"content": docs[0]}])
    ld = Loader(text_keys=["text"], cache_dir=str(tmp_path / "c"))
    assert ld.load_lean([SourceSpec(str(path))]) is None


def test_null_text_same_export_and_ledger(tmp_path, monkeypatch):
    rows = [{"text": t} for t in _docs(12)] + [{"text": None}]
    data = _write(tmp_path / "in.jsonl", rows)
    lines = _both(tmp_path, data, monkeypatch, lean_load=False)
    assert len(lines) == 12


def test_empty_file_same_error(tmp_path, monkeypatch):
    data = tmp_path / "in.jsonl"
    data.write_bytes(b"")
    errs = []
    for lean in (False, True):
        folder = tmp_path / f"r{lean}"
        folder.mkdir()
        recipe = {"dataset_path": str(data), "export_path": str(folder / "o.jsonl"), "work_dir": str(folder),
                  "process": [MINHASH]}
        (folder / "r.yaml").write_text(yaml.safe_dump(recipe))
        monkeypatch.setenv("DJ_LEAN", "1" if lean else "0")
        errs.append(main(["--config", str(folder / "r.yaml")]))
    assert errs[0] == errs[1] != 0


@pytest.mark.parametrize("streamed", [False, True])
def test_lean_table_equals_full(tmp_path, monkeypatch, streamed):
    if streamed:
        monkeypatch.setattr(loader_mod, "SMALL_BYTES", 0)
        monkeypatch.setattr(loader_mod, "STREAM_BLOCK_BYTES", 4096)
    data = _write(tmp_path / "in.jsonl", _rows_nested())
    ld = Loader(text_keys=["text"], cache_dir=str(tmp_path / "c"))
    lean = ld.load_lean([SourceSpec(str(data))]).dataset
    full = ld.load([SourceSpec(str(data))]).dataset
    assert isinstance(lean, ArrowRows) and (lean.path is not None) == streamed
    assert lean.data.table.equals(full.data.table)
    assert [c.num_chunks for c in lean.data.table.columns] == [c.num_chunks for c in full.data.table.columns]
    hf = lean.to_hf()
    assert hf.data.table.equals(full.data.table) and hf.features == full.features


def test_arrow_rows_select_matches_hf(tmp_path):
    table = pa.table({"text": [f"t{i}" for i in range(10)], "n": list(range(10))})
    rows = ArrowRows(table)
    import datasets

    hf = datasets.Dataset(datasets.table.InMemoryTable(table))
    a = DJDataset(rows).select(np.array([9, 3, 3, 0, 5])).select(np.array([4, 1, 0]))
    b = DJDataset(hf).select(np.array([9, 3, 3, 0, 5])).select(np.array([4, 1, 0]))
    assert a.num_rows == b.num_rows == 3 and a.column("n") == b.column("n") == [5, 3, 9]
    assert a.arrow_table().equals(b.arrow_table())
    assert a.hf._indices.column(0).equals(b.hf._indices.column(0))
    assert a.hf.to_hf()[:] == b.hf[:]
    assert to_numpy(a.hf._indices.column(0)).tolist() == [5, 3, 9]
    with pytest.raises(IndexError):
        rows.select(np.array([10]))
    assert rows.select(np.array([], dtype=np.int64)).num_rows == 0


def test_numpy_helpers_match_arrow():
    for arr in (np.arange(7, dtype=np.int64), np.arange(7, dtype=np.uint64)[::2], np.array([1.5, -2.0]),
                np.array([], dtype=np.int32)):
        assert numpy_array(arr).equals(pa.array(arr))
    chunked = pa.chunked_array([pa.array([1, 2, 3], pa.uint64()).slice(1), pa.array([], pa.uint64()),
                                pa.array([7], pa.uint64())])
    got = to_numpy(chunked)
    assert got.tolist() == [2, 3, 7] and got.dtype == np.uint64
    with_null = pa.chunked_array([pa.array([1, None])])
    assert np.isnan(to_numpy(with_null)[1])


def test_plain_recipe_imports_no_datasets(tmp_path):
    """In a fresh process: the lean run imports neither ``datasets`` nor pandas (and gives the export)."""
    data = _write(tmp_path / "in.jsonl", _rows_nested())
    recipe = {"dataset_path": str(data), "np": 2, "use_cache": False, "export_path": str(tmp_path / "o.jsonl"),
              "work_dir": str(tmp_path), "process": [MINHASH]}
    out = modules_after_run(tmp_path, recipe, ("datasets", "pandas", "huggingface_hub"))
    assert "MODS [] 0" in out
    assert len((tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()) == 40


def modules_after_run(tmp_path, recipe: dict, modules) -> str:
    """Run ``recipe`` with ``dj-process`` in a fresh process; its output, with ``MODS <those of modules it
    imported> <exit code>``."""
    (tmp_path / "r.yaml").write_text(yaml.safe_dump(recipe))
    code = ("import sys; from data_juicer.cli.process import main; rc = main(['--config', sys.argv[1]]); "
            f"print('MODS', sorted(m for m in {tuple(modules)!r} if m in sys.modules), rc)")
    env = dict(os.environ, DJ_LEAN="1", HF_DATASETS_CACHE=str(tmp_path / "hf"))
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r.yaml")], capture_output=True, text=True,
                         env=env, timeout=300)
    return out.stdout + out.stderr
