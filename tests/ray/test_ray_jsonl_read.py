"""The Ray backend's own JSON Lines read (byte ranges parsed by pyarrow in tasks) and the grouping
of small blocks into whole batches for the row-wise pass tasks."""
import json
import os

from data_juicer.core.backends import ray as rb


def _lines(n):
    return [json.dumps({"id": i, "text": f"row {i} " + "x" * (i % 7)}) + "\n" for i in range(n)]


def test_byte_ranges_cover_every_line_once(tmp_path):
    p = tmp_path / "a.jsonl"
    for body in ("".join(_lines(300)), "".join(_lines(300)).rstrip("\n")):  # with and without a final newline
        p.write_text(body)
        data, size = p.read_bytes(), os.path.getsize(p)
        for n in (1, 2, 3, 7, 64, size):
            step = -(-size // n)
            chunks = [rb._jsonl_chunk_bytes(str(p), a, min(size, a + step)) for a in range(0, size, step)]
            assert b"".join(chunks) == data, n
            assert all(c == b"" or c.startswith(b'{"id"') for c in chunks)  # every range starts at a line


def test_task_groups_make_whole_batches():
    refs = list("abcdefg")
    assert rb._task_groups(refs, [1] * 7, 5) == [list("abcdefg")]  # 7 one-row blocks, batch 5: one task
    assert rb._task_groups(refs, [3] * 7, 5) == [["a", "b"], ["c", "d"], ["e", "f", "g"]]
    assert rb._task_groups(refs[:3], [10, 10, 10], 5) == [["a"], ["b"], ["c"]]
    assert rb._task_groups(refs[:3], [10, 10, 2], 5) == [["a"], ["b", "c"]]  # a short tail joins the last


def test_ranges_with_different_schemas_read_the_file_whole(run_both, monkeypatch):
    """A field null in the first ranges and a string later: that file is read again whole (one
    schema), and the output is the default executor's, byte for byte."""
    monkeypatch.setattr(rb, "_JSONL_MIN_CHUNK", 256)
    rows = [{"id": i, "text": f"sample number {i} " + "word " * (i % 5), "note": None if i < 40 else f"n{i}"}
            for i in range(60)]
    d, r = run_both(rows, [{"clean_email_mapper": None}, {"text_length_filter": {"min_len": 18}}])
    for name in ("result.jsonl", "result_stats.jsonl"):
        assert (r / name).read_bytes() == (d / name).read_bytes()
    out = [json.loads(x) for x in (r / "result.jsonl").read_text().splitlines()]
    assert out[-1]["note"] == "n59" and out[0]["note"] is None


def test_many_ranges_keep_order(run_both, monkeypatch):
    monkeypatch.setattr(rb, "_JSONL_MIN_CHUNK", 512)
    rows = [{"id": i, "text": f"sample {i} " + "word " * (i % 9)} for i in range(400)]
    d, r = run_both(rows, [{"words_num_filter": {"min_num": 4}}, {"document_deduplicator": None}])
    assert (r / "result.jsonl").read_bytes() == (d / "result.jsonl").read_bytes()
    ids = [json.loads(x)["id"] for x in (r / "result.jsonl").read_text().splitlines()]
    assert ids == [i for i in range(400) if i % 9 >= 3]  # "sample" + 3 "word"s or more (a number is no word), in order


def test_bad_line_in_a_later_range_is_named(make_recipe, tmp_path, capsys, monkeypatch, ray_local):
    from data_juicer.cli.process import main

    monkeypatch.setattr(rb, "_JSONL_MIN_CHUNK", 512)
    src = tmp_path / "data.jsonl"
    lines = _lines(200)
    lines[150] = '{"id": 150, "text": "broken\n'
    src.write_text("".join(lines))
    recipe = make_recipe(None, [{"text_length_filter": {"min_len": 1}}], executor_type="ray", dataset_path=str(src))
    assert main(["--config", recipe]) != 0
    err = capsys.readouterr().err
    assert "data.jsonl, line 151" in err and "not valid JSON" in err
