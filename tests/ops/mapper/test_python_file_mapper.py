import pickle

import pytest

from data_juicer.cli.process import main
from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from tests.conftest import read_jsonl

FUNCS = '''
def process_single(sample):
    return {"text": sample["text"].upper(), "n": len(sample["text"])}

def only_new(sample):
    return {"len": len(sample["text"])}

def batched_fn(samples):
    return {"text": [t + "!" for t in samples["text"]]}

def expand(samples):
    out = {k: [] for k in samples}
    for i, t in enumerate(samples["text"]):
        for part in t.split():
            for k in samples:
                out[k].append(part if k == "text" else samples[k][i])
    return out

def expand_text_only(samples):
    return {"text": [p for t in samples["text"] for p in t.split()]}

def ragged(samples):
    return {"text": samples["text"], "x": [1]}

def not_lists(samples):
    return {"text": "x"}

def bad_return(sample):
    return [sample]

def two_args(a, b):
    return a

def default_arg(a, b=1):
    return a

def varargs(*a):
    return a[0]

def kwonly(a, *, b=1):
    return a

not_callable = 3
'''

ROWS = [{"text": "hello world", "id": 1}, {"text": "中文 😀", "id": 2}, {"text": "", "id": 3}]


@pytest.fixture
def funcs(tmp_path):
    path = tmp_path / "funcs.py"
    path.write_text(FUNCS, encoding="utf-8")
    return str(path)


def make(**kw):
    return OPERATORS.get("python_file_mapper")(**kw)


def run(rows=ROWS, **kw):
    return run_ops_on_rows([make(**kw)], [dict(r) for r in rows])


# values from Data-Juicer 1.6.1
def test_empty_file_path_is_identity():
    assert run() == ROWS


def test_per_sample_default_function(funcs):
    assert run(file_path=funcs) == [{"text": "HELLO WORLD", "id": 1, "n": 11}, {"text": "中文 😀", "id": 2, "n": 4},
                                    {"text": "", "id": 3, "n": 0}]


def test_fields_left_out_are_kept(funcs):
    assert run(file_path=funcs, function_name="only_new") == [
        {"text": "hello world", "id": 1, "len": 11}, {"text": "中文 😀", "id": 2, "len": 4},
        {"text": "", "id": 3, "len": 0}]
    assert run(file_path=funcs, function_name="kwonly") == ROWS


def test_batched(funcs):
    assert run(file_path=funcs, function_name="batched_fn", batched=True) == [
        {"text": "hello world!", "id": 1}, {"text": "中文 😀!", "id": 2}, {"text": "!", "id": 3}]


def test_batched_may_change_the_number_of_samples(funcs):
    assert run(file_path=funcs, function_name="expand", batched=True) == [
        {"text": "hello", "id": 1}, {"text": "world", "id": 1}, {"text": "中文", "id": 2}, {"text": "😀", "id": 2}]
    # ... but only when it returns every field (Data-Juicer fails there too)
    with pytest.raises(ValueError, match=r"did not return field\(s\) \['id'\]"):
        make(file_path=funcs, function_name="expand_text_only", batched=True).process_batched(
            {"text": ["a b"], "id": [1]})


def test_bad_return_values(funcs):
    with pytest.raises(ValueError, match="must return a dict, got list"):
        make(file_path=funcs, function_name="bad_return").process_batched({"text": ["a"]})
    with pytest.raises(ValueError, match="must return a dict, got list"):
        make(file_path=funcs, function_name="bad_return", batched=True).process_batched({"text": ["a"]})
    with pytest.raises(ValueError, match="different lengths"):
        make(file_path=funcs, function_name="ragged", batched=True).process_batched({"text": ["a", "b"]})
    with pytest.raises(ValueError, match="dict of lists; field 'text' is a str"):
        make(file_path=funcs, function_name="not_lists", batched=True).process_batched({"text": ["a"]})


@pytest.mark.parametrize("name, message", [
    ("two_args", "must take exactly one argument"),
    ("default_arg", "must take exactly one argument"),
    ("varargs", "must take exactly one argument"),
    ("not_callable", "is not callable"),
    ("missing", "function 'missing' not found in"),
])
def test_bad_functions_fail_at_construction(funcs, name, message):
    with pytest.raises(ValueError, match=message):
        make(file_path=funcs, function_name=name)


def test_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        make(file_path=str(tmp_path / "nope.py"))
    with pytest.raises(ValueError, match="does not exist"):  # also a ValueError: a bad parameter
        make(file_path=str(tmp_path))
    other = tmp_path / "f.txt"
    other.write_text("def process_single(s):\n    return s\n")
    with pytest.raises(ValueError, match="not a Python file"):
        make(file_path=str(other))


def test_pickles_by_reloading_the_file(funcs):
    op = pickle.loads(pickle.dumps(make(file_path=funcs)))
    assert op.process_batched({"text": ["ab"]}) == {"text": ["AB"], "n": [2]}


def test_end_to_end_with_dj_process(make_recipe, tmp_path, funcs):
    recipe = make_recipe(ROWS, [{"python_file_mapper": {"file_path": funcs, "function_name": "expand",
                                                         "batched": True}},
                                {"text_length_filter": {"min_len": 2}}], np=2)
    assert main(["--config", recipe]) == 0
    # values from Data-Juicer 1.6.1 (its dj-process on the same recipe)
    assert read_jsonl(tmp_path / "out" / "result.jsonl") == [
        {"text": "hello", "id": 1}, {"text": "world", "id": 1}, {"text": "中文", "id": 2}]


def test_fan_out_may_leave_out_internal_columns(funcs):
    op = make(file_path=funcs, function_name="expand_text_only", batched=True)
    out = op.process_batched({"text": ["a b", "c"], "__dj__index__": [0, 1]})
    assert out == {"text": ["a", "b", "c"], "__dj__index__": [None, None, None]}
