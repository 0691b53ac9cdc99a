import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

ROWS = [{"text": "Hello World", "id": 1}, {"text": "", "id": 2}, {"text": "中文😀", "id": 3}]


def _run(lambda_str, batched=False, rows=ROWS):
    op = OPERATORS.get("python_lambda_mapper")(lambda_str=lambda_str, batched=batched, skip_op_error=False)
    return run_ops_on_rows([op], [dict(r) for r in rows])


def test_per_sample_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run("lambda s: {**s, 'text': s['text'].upper()}") == [
        {"text": "HELLO WORLD", "id": 1}, {"text": "", "id": 2}, {"text": "中文😀", "id": 3}]
    # fields the lambda leaves out are kept
    assert _run("lambda s: {'n': len(s['text'])}") == [
        {"text": "Hello World", "id": 1, "n": 11}, {"text": "", "id": 2, "n": 0}, {"text": "中文😀", "id": 3, "n": 3}]
    assert _run("lambda s: {**s, 'meta': {'lang': 'en', 'n': s['id']}}") == [
        {"text": "Hello World", "id": 1, "meta": {"lang": "en", "n": 1}},
        {"text": "", "id": 2, "meta": {"lang": "en", "n": 2}},
        {"text": "中文😀", "id": 3, "meta": {"lang": "en", "n": 3}}]
    assert _run("lambda s: {'text': s['text'] + '!'} if s['id'] > 1 else s") == [
        {"text": "Hello World", "id": 1}, {"text": "!", "id": 2}, {"text": "中文😀!", "id": 3}]


def test_batched_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run("lambda b: {'text': [t[::-1] for t in b['text']]}", batched=True) == [
        {"text": "dlroW olleH", "id": 1}, {"text": "", "id": 2}, {"text": "😀文中", "id": 3}]
    assert _run("lambda b: {'len': [len(t) for t in b['text']], 'id': [i * 10 for i in b['id']]}", batched=True) == [
        {"text": "Hello World", "id": 10, "len": 11}, {"text": "", "id": 20, "len": 0},
        {"text": "中文😀", "id": 30, "len": 3}]


def test_empty_lambda_is_identity():
    assert _run("") == ROWS
    assert _run("", batched=True) == ROWS  # Data-Juicer 1.6.1 fails here; identity is what it documents


def test_the_batched_flag_decides_what_the_lambda_gets():
    assert _run("lambda x: {'kind': type(x['id']).__name__}")[0]["kind"] == "int"
    assert _run("lambda x: {'kind': [type(x['id']).__name__] * len(x['id'])}", batched=True)[0]["kind"] == "list"


@pytest.mark.parametrize("src, message", [
    ("x + 1", "must be a lambda expression"),
    ("lambda a, b: a", "exactly 1 argument"),
    ("lambda: 1", "exactly 1 argument"),
    ("lambda s: (", "not valid Python"),
    ("import os", "not valid Python"),
])
def test_bad_lambda_string_is_a_clear_error(src, message):
    with pytest.raises(ValueError, match=message):
        OPERATORS.get("python_lambda_mapper")(lambda_str=src)


def test_lambda_must_return_a_dict():
    with pytest.raises(Exception, match="must return a dict"):
        _run("lambda s: s['text']")
    with pytest.raises(Exception, match="one value per sample"):
        _run("lambda b: {'text': b['text'][:1]}", batched=True)


def test_op_pickles_for_worker_processes():
    import pickle

    op = OPERATORS.get("python_lambda_mapper")(lambda_str="lambda s: {'text': s['text'] + '!'}")
    clone = pickle.loads(pickle.dumps(op))
    assert clone.process_batched({"text": ["a", "中"]}) == {"text": ["a!", "中!"]}
