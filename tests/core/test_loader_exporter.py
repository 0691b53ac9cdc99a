"""Input formats, mixes, malformed input, sharded and atomic export."""
import bz2
import gzip
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
import zstandard

from data_juicer.cli.process import main
from data_juicer.core.exporter import Exporter
from data_juicer.core.loader import DataLoadError, Loader, SourceSpec, parse_dataset_path
from tests.conftest import read_jsonl, write_jsonl

ROWS = [{"id": i, "text": f"sample number {i} " * (i + 1)} for i in range(6)]


def _load(path, **kw):
    return Loader(text_keys=["text"], **kw).load([SourceSpec(str(path))])


def test_parse_weighted_mix():
    specs = parse_dataset_path("0.5 a.jsonl b.jsonl 2 'c d.parquet'")
    assert [(s.path, s.weight) for s in specs] == [("a.jsonl", 0.5), ("b.jsonl", 1.0), ("c d.parquet", 2.0)]


@pytest.mark.parametrize("fmt", ["jsonl", "jsonl.gz", "jsonl.zst", "json.bz2", "parquet", "csv", "tsv"])
def test_formats(tmp_path, fmt):
    path = tmp_path / f"d.{fmt}"
    if fmt.startswith("json"):
        data = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
        opener = {"gz": gzip.compress, "zst": zstandard.ZstdCompressor().compress, "bz2": bz2.compress}
        ext = fmt.rsplit(".", 1)[-1]
        path.write_bytes(opener[ext](data) if ext in opener else data)
    elif fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(ROWS), path)
    else:
        sep = "," if fmt == "csv" else "\t"
        path.write_text("id" + sep + "text\n" + "".join(f"{r['id']}{sep}{r['text']}\n" for r in ROWS))
    ds = _load(path).dataset
    assert ds.num_rows == 6 and ds[3]["text"] == ROWS[3]["text"]


def test_text_files_one_sample_each_and_folder(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("line one\nline two\n")
    (tmp_path / "docs" / "b.md").write_text("# title\nbody")
    write_jsonl(tmp_path / "docs" / "c.jsonl", [{"text": "from jsonl"}])
    res = _load(tmp_path / "docs", add_suffix=True)
    texts = sorted(res.dataset["text"])
    assert texts == ["# title\nbody", "from jsonl", "line one\nline two\n"]
    assert sorted(res.dataset["__dj__suffix__"]) == [".jsonl", ".md", ".txt"]
    res = _load(tmp_path / "docs", suffixes=[".txt"])
    assert res.dataset["text"] == ["line one\nline two\n"]


def test_null_text_rows_go_to_ledger(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": 1, "text": "ok"}, {"id": 2, "text": None}])
    res = _load(path)
    assert res.dataset["id"] == [1] and res.rejected[0]["sample"]["id"] == 2


def test_malformed_json_line_is_located(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"text": "a"}\n{"text": "b"}\n{"text": broken}\n{"text": "d"}\n')
    with pytest.raises(DataLoadError, match=r"d.jsonl, line 3: not valid JSON.*load_jsonl_lenient"):
        _load(path)
    res = _load(path, lenient=True, tmp_dir=str(tmp_path / "tmp"))
    assert res.dataset["text"] == ["a", "b", "d"]
    assert res.rejected[0]["line"] == 3 and "broken" in res.rejected[0]["sample"]


def test_missing_text_key_is_clear(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"content": "x"}])
    with pytest.raises(DataLoadError, match="has no field 'text'.*content.*text_keys"):
        _load(path)


def test_relative_media_paths_become_absolute(tmp_path):
    path = write_jsonl(tmp_path / "sub" / "d.jsonl", [{"text": "x", "images": ["img/a.png", "/abs/b.png"]}])
    ds = _load(path).dataset
    assert ds[0]["images"] == [str(tmp_path / "sub" / "img" / "a.png"), "/abs/b.png"]


def test_weighted_mix_with_max_sample_num(make_recipe, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"src": "a", "text": f"a{i}"} for i in range(10)])
    b = write_jsonl(tmp_path / "b.jsonl", [{"src": "b", "text": f"b{i}"} for i in range(10)])
    recipe = make_recipe(None, [], dataset={"max_sample_num": 12,
                                            "configs": [{"type": "local", "path": a, "weight": 1.0},
                                                        {"type": "local", "path": b, "weight": 2.0}]})
    assert main(["--config", recipe]) == 0
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["src"] for r in out].count("a") == 4 and [r["src"] for r in out].count("b") == 8


def test_sharded_export_names_and_content(tmp_path):
    table = pa.Table.from_pylist([{"text": "x" * 100, "__dj__stats__": {"n": i}} for i in range(50)])
    out = tmp_path / "res.jsonl"
    rep = Exporter(str(out), export_shard_size=1000).export(table)
    n = len(rep.files)
    assert n == min(int(table.nbytes / 1000) + 1, 50) and n >= 2
    width = len(str(n)) + 1
    assert os.path.basename(rep.files[0]) == f"res-{0:0{width}d}-of-{n:0{width}d}.jsonl"
    rows = [r for f in rep.files for r in read_jsonl(f)]
    assert len(rows) == 50 and "__dj__stats__" not in rows[0]
    assert [s["__dj__stats__"]["n"] for s in read_jsonl(tmp_path / "res_stats.jsonl")] == list(range(50))
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]


def test_parquet_export_and_keep_hashes(tmp_path):
    table = pa.Table.from_pylist([{"text": "a", "__dj__hash": "h1", "__dj__stats__": {"k": 1}}])
    Exporter(str(tmp_path / "r.parquet"), keep_hashes_in_res_ds=True).export(table)
    assert pq.read_table(tmp_path / "r.parquet").column_names == ["text", "__dj__hash"]
    Exporter(str(tmp_path / "r2.parquet")).export(table)
    assert pq.read_table(tmp_path / "r2.parquet").column_names == ["text"]


def test_failed_write_leaves_previous_output_intact(tmp_path):
    from decimal import Decimal

    from data_juicer.core.exporter import write_jsonl

    target = tmp_path / "r.jsonl"
    target.write_text('{"text": "previous complete run"}\n')
    # the first batch is written, then a value that JSON cannot hold stops the write half-way
    values = [None] * 5000 + [Decimal("1.5")]
    table = pa.table({"text": ["t"] * 5001, "v": pa.array(values, type=pa.decimal128(5, 2))})
    with pytest.raises(TypeError):
        write_jsonl(table, str(target), batch_rows=1000)
    assert target.read_text() == '{"text": "previous complete run"}\n'
    assert os.listdir(tmp_path) == ["r.jsonl"]
