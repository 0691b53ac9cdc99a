"""Inputs Ray reads itself, in the cluster (never through the driver): plain-text files (one sample
per file, as the default loader) and ``add_suffix`` (suffix_filter) on JSON Lines; the rows, their
order and the output are the default executor's."""
import glob
import gzip
import os

from tests.conftest import read_jsonl, write_jsonl

FALLBACK = "reading the input with the default loader on the driver"


def _log(folder):
    logs = glob.glob(os.path.join(str(folder), "**", "dj-process.log"), recursive=True)
    assert logs, f"no job log under {folder}"
    return open(logs[0], encoding="utf-8").read()


def test_plain_text_files_are_read_by_ray_with_the_default_output(run_both, tmp_path):
    src = tmp_path / "docs"
    os.makedirs(src / "sub")
    (src / "a.txt").write_text("first document\nwith two lines\n")
    (src / "b.md").write_text("# a markdown file\n\nbody text here")
    (src / "sub" / "c.txt").write_bytes(b"windows\r\nline endings\r\n")
    with gzip.open(src / "d.txt.gz", "wt") as f:
        f.write("compressed text document")
    (src / "e.txt").write_text("tiny")
    d, r = run_both(None, [{"text_length_filter": {"min_len": 5}}], dataset_path=str(src))
    out = read_jsonl(os.path.join(r, "result.jsonl"))
    assert out == read_jsonl(os.path.join(d, "result.jsonl"))
    # the .txt files (sorted paths), then the .md one: the default loader's order
    assert [x["text"] for x in out] == ["first document\nwith two lines\n", "compressed text document",
                                        "windows\nline endings\n", "# a markdown file\n\nbody text here"]
    assert FALLBACK not in _log(r)


def test_add_suffix_on_json_lines_is_read_by_ray(run_both, tmp_path):
    src = tmp_path / "mixed"
    os.makedirs(src)
    write_jsonl(src / "a.jsonl", [{"id": i, "text": f"plain sample {i}"} for i in range(4)])
    with gzip.open(src / "b.jsonl.gz", "wt") as f:
        f.write('{"id": 10, "text": "gzipped sample"}\n')
    d, r = run_both(None, [{"suffix_filter": {"suffixes": [".jsonl"]}}], dataset_path=str(src))
    out = read_jsonl(os.path.join(r, "result.jsonl"))
    assert out == read_jsonl(os.path.join(d, "result.jsonl"))
    assert [x["id"] for x in out] == [0, 1, 2, 3, 10]
    assert FALLBACK not in _log(r)


def test_a_weighted_mix_still_says_it_goes_through_the_driver(run_both, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": i, "text": f"a text {i}"} for i in range(6)])
    d, r = run_both(None, [{"text_length_filter": {"min_len": 1}}], dataset_path=f"1.0 {a} 1.0 {a}")
    assert read_jsonl(os.path.join(r, "result.jsonl")) == read_jsonl(os.path.join(d, "result.jsonl"))
    assert FALLBACK in _log(r)
