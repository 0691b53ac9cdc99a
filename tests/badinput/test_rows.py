"""Malformed, undecodable, non-object and wrongly typed rows, on both executors: exit 2 naming the file
and line (default loading), or a ledger entry with file and line and the run goes on
(``load_jsonl_lenient: true``) with every input row either exported or in the ledger."""
import gzip
import json
import os

import pytest

from tests.badinput.conftest import ledger, one_paragraph, read_rows, write_lines

GOOD = ['{"id": 0, "text": "first good row"}', '{"id": 2, "text": "third good row"}']

BAD_ROWS = {  # class -> (the bad line, error_type in the ledger, what the error says)
    "invalid_utf8": (b'{"id": 1, "text": "bad \xff\xfe bytes"}', "InvalidUTF8", "not valid UTF-8 (byte 0xff"),
    "malformed_json": ('{"id": 1, "text": "unclosed', "JSONDecodeError", "not valid JSON"),
    "json_list": ("[1, 2]", "NotAnObject", "the line is a list ([1, 2]), not a JSON object"),
    "json_string": ('"just a string"', "NotAnObject", 'the line is a string ("just a string"), not a JSON object'),
    "json_number": ("3", "NotAnObject", "the line is a number (3), not a JSON object"),
    "text_number": ('{"id": 1, "text": 5}', "WrongType", "field 'text' is a number (5), not a string"),
    "text_list": ('{"id": 1, "text": ["a", "b"]}', "WrongType",
                  "field 'text' is a list ([\"a\", \"b\"]), not a string"),
    "text_object": ('{"id": 1, "text": {"a": 1}}', "WrongType", "field 'text' is an object"),
}


def _recipe(make_recipe, tmp_path, data, executor_type, **kw):
    return make_recipe(None, [{"text_length_filter": {"min_len": 1}}], dataset_path=data,
                       executor_type=executor_type, **kw)


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_bad_row_default_loading_names_file_and_line(case, make_recipe, tmp_path, dj, executor_type):
    line, _, says = BAD_ROWS[case]
    data = write_lines(tmp_path / "data.jsonl", [GOOD[0], line, GOOD[1]])
    rc, _, err = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type))
    assert rc == 2
    msg = one_paragraph(err)
    assert f"{data}, line 2: " in msg and says in msg, msg
    assert "load_jsonl_lenient: true" in msg
    assert not (tmp_path / "out" / "result.jsonl").exists()


@pytest.mark.parametrize("case", sorted(BAD_ROWS))
def test_bad_row_lenient_goes_to_ledger_and_run_goes_on(case, make_recipe, tmp_path, dj, executor_type):
    line, etype, says = BAD_ROWS[case]
    data = write_lines(tmp_path / "data.jsonl", [GOOD[0], line, GOOD[1]])
    rc, out, _ = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type, load_jsonl_lenient=True))
    assert rc == 0
    rows = read_rows(tmp_path / "out" / "result.jsonl")
    assert [r["id"] for r in rows] == [0, 2]
    [entry] = ledger(tmp_path / "out")
    assert (entry["op"], entry["file"], entry["line"], entry["error_type"]) == ("load", data, 2, etype)
    assert says in entry["message"]
    assert len(rows) + 1 == 3  # conserved: 2 exported + 1 in the ledger = 3 input rows
    assert "Errors: 1 samples were not processed" in out


def test_several_bad_lines_each_in_ledger_with_its_line(make_recipe, tmp_path, dj, executor_type):
    lines = [GOOD[0], b"\xc3\x28 not utf8", "[1,2]", "", '"x"', '{"id": 5, "text": 7}', "{bad json", GOOD[1]]
    data = write_lines(tmp_path / "data.jsonl", lines)
    rc, _, _ = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type, load_jsonl_lenient=True))
    assert rc == 0
    entries = ledger(tmp_path / "out")
    assert [(e["line"], e["error_type"]) for e in entries] == [
        (2, "InvalidUTF8"), (3, "NotAnObject"), (5, "NotAnObject"), (6, "WrongType"), (7, "JSONDecodeError")]
    assert len(read_rows(tmp_path / "out" / "result.jsonl")) + len(entries) == 7  # 7 non-blank input lines


def test_compressed_file_bad_line_is_located(make_recipe, tmp_path, dj):
    path = tmp_path / "data.jsonl.gz"
    with gzip.open(path, "wb") as f:
        f.write(b'{"text": "ok one"}\n{"text": "bad \xff"}\n{"text": "ok two"}\n')
    rc, _, err = dj("--config", _recipe(make_recipe, tmp_path, str(path), "default"))
    assert rc == 2 and f"{path}, line 2: not valid UTF-8" in one_paragraph(err)
    rc, _, _ = dj("--config", _recipe(make_recipe, tmp_path, str(path), "default", load_jsonl_lenient=True))
    assert rc == 0
    assert [(e["file"], e["line"]) for e in ledger(tmp_path / "out")] == [(str(path), 2)]
    assert [r["text"] for r in read_rows(tmp_path / "out" / "result.jsonl")] == ["ok one", "ok two"]


def test_mixed_kinds_in_another_field_name_the_line(make_recipe, tmp_path, dj, executor_type):
    # on Ray this used to fail with "JSONDecodeError: Extra data: line 2 column 1" and pages of Ray tracebacks;
    # the default executor's datasets loader silently turned both values into JSON text ("x" -> "\"x\"")
    data = write_lines(tmp_path / "data.jsonl", ['{"id": 0, "text": "a", "meta": "x"}',
                                                 '{"id": 1, "text": "b", "meta": {"k": 1}}',
                                                 '{"id": 2, "text": "c", "meta": "y"}'])
    rc, _, err = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type))
    assert rc == 2
    msg = one_paragraph(err)
    assert f"{data}, line 2: field 'meta' is an object here but a string on line 1" in msg, msg
    rc, _, _ = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type, load_jsonl_lenient=True))
    assert rc == 0
    assert [(e["line"], e["error_type"]) for e in ledger(tmp_path / "out")] == [(2, "WrongType")]
    assert read_rows(tmp_path / "out" / "result.jsonl") == [{"id": 0, "text": "a", "meta": "x"},
                                                           {"id": 2, "text": "c", "meta": "y"}]


def test_null_text_rows_go_to_ledger_on_both(make_recipe, tmp_path, dj, executor_type):
    data = write_lines(tmp_path / "data.jsonl", [GOOD[0], '{"id": 1, "text": null}', GOOD[1]])
    rc, _, _ = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type))
    assert rc == 0
    rows = read_rows(tmp_path / "out" / "result.jsonl")
    [entry] = ledger(tmp_path / "out")
    assert entry["error_type"] == "NullText" and entry["sample"]["id"] == 1
    assert [r["id"] for r in rows] == [0, 2]


def test_every_line_rejected_is_a_clear_error(make_recipe, tmp_path, dj, executor_type):
    data = write_lines(tmp_path / "data.jsonl", ["[1]", "2"])
    rc, _, err = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type, load_jsonl_lenient=True))
    assert rc == 2
    msg = one_paragraph(err)
    assert f"no samples left in '{data}': all 2 of its lines were rejected (first: line 1: the line is a list" in msg


@pytest.mark.parametrize("content, says", [(b"", "is empty (0 bytes)"), (b"\n\n   \n\t\n", "has only blank lines")])
@pytest.mark.parametrize("lenient", [False, True])
def test_empty_data_file_says_so(content, says, lenient, make_recipe, tmp_path, dj, executor_type):
    data = tmp_path / "data.jsonl"
    data.write_bytes(content)
    rc, _, err = dj("--config", _recipe(make_recipe, tmp_path, str(data), executor_type, load_jsonl_lenient=lenient))
    assert rc == 2
    assert f"no samples to process: '{data}' {says}" in one_paragraph(err)


def test_empty_file_beside_good_ones_is_skipped(make_recipe, tmp_path, dj, executor_type):
    folder = tmp_path / "data"
    write_lines(folder / "a.jsonl", [GOOD[0]])
    write_lines(folder / "b.jsonl", [])
    (folder / "c.jsonl").write_bytes(b"\n\n")
    write_lines(folder / "d.jsonl", [GOOD[1]])
    rc, _, err = dj("--config", _recipe(make_recipe, tmp_path, str(folder), executor_type))
    assert rc == 0, err
    assert sorted(r["id"] for r in read_rows(tmp_path / "out" / "result.jsonl")) == [0, 2]


def test_good_rows_unchanged(make_recipe, tmp_path, dj, executor_type):
    # the checks change nothing for valid data (unicode kept, a field mixing ints and floats is fine)
    rows = [{"id": 0, "text": "héllo wörld ✓", "score": 1}, {"id": 1, "text": "二つ目", "score": 2.5}]
    data = write_lines(tmp_path / "data.jsonl", [json.dumps(r, ensure_ascii=False) for r in rows])
    rc, _, _ = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type))
    assert rc == 0
    assert read_rows(tmp_path / "out" / "result.jsonl") == rows
    assert not os.path.exists(os.path.join(tmp_path, "out", "errors.jsonl"))


def test_bad_row_far_into_a_file_is_located(make_recipe, tmp_path, dj, executor_type):
    # past the first blocks pyarrow reads (1 MiB each): the line number is still the file's own
    lines = [json.dumps({"id": i, "text": f"row {i} " + "y" * 40}) for i in range(30000)]
    lines.insert(25000, '{"id": -1, "text": 12}')
    data = write_lines(tmp_path / "data.jsonl", lines)
    rc, _, err = dj("--config", _recipe(make_recipe, tmp_path, data, executor_type))
    assert rc == 2
    assert f"{data}, line 25001: field 'text' is a number (12), not a string" in one_paragraph(err)
