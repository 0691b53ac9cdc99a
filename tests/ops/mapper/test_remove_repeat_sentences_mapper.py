import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

TEXTS = [
    "", "Hello world. Hello world. 你好。你好。",
    "This is a sentence. This is a sentence! Another one? Another one?\nThis is a sentence.",
    "he said “Stop.” Then left. He said “Stop.” ok",
    "A. a. A! b......c......d……e……f\n\nOK. ok. OK.",
    "重复的句子。不重复的句子！重复的句子。\n😀😀. 😀😀. x. x.",
    "Short. Sh. Short?? Sh.",
]


def _run(texts, **params):
    op = OPERATORS.get("remove_repeat_sentences_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_removes_repeats_across_lines():
    assert _run(["One. Two. One.\nTwo. Three."]) == ["One. Two.\n Three."]


def test_callable_tokenizer_rejoins_with_spaces():
    assert _run(["a b|c d|a b"], tokenizer=lambda line: line.split("|")) == ["a b c d"]


def test_bad_tokenizer_is_a_clear_error():
    with pytest.raises(ValueError, match="tokenizer"):
        _run(["x"], tokenizer="str.split")
    with pytest.raises(ValueError, match="tokenizer"):
        _run(["x"], tokenizer=42)


def test_op_with_lambda_string_tokenizer_pickles():
    import pickle

    op = OPERATORS.get("remove_repeat_sentences_mapper")(tokenizer="lambda t: t.split('|')")
    clone = pickle.loads(pickle.dumps(op))
    assert clone.process_batched({"text": ["a b|c d|a b"]}) == {"text": ["a b c d"]}


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        '',
        'Hello world. 你好。',
        'This is a sentence. Another one?\n',
        'he said “Stop.” Then left. He said “Stop.” ok',
        'A. a. A! b......c......d……e……f\n\nOK. ok.',
        '重复的句子。不重复的句子！\n😀😀. 😀😀. x. x.',
        'Short. Sh.? Sh.',
    ]
    assert _run(TEXTS, lowercase=True) == [
        '',
        'Hello world. 你好。',
        'This is a sentence. Another one?\n',
        'he said “Stop.” Then left. ok',
        'A. a. A! b......c......d……e……f\n\nOK.',
        '重复的句子。不重复的句子！\n😀😀. 😀😀. x. x.',
        'Short. Sh.? Sh.',
    ]
    assert _run(TEXTS, ignore_special_character=False) == [
        '',
        'Hello world. 你好。',
        'This is a sentence. This is a sentence! Another one?\n',
        'he said “Stop.” Then left. He said “Stop.” ok',
        'A. a. A! b....c..d……e……f\n\nOK. ok.',
        '重复的句子。不重复的句子！\n😀😀. x.',
        'Short. Sh. Short?? Sh.',
    ]
    assert _run(TEXTS, min_repeat_sentence_length=5) == [
        '',
        'Hello world. 你好。你好。',
        'This is a sentence. Another one?\n',
        'he said “Stop.” Then left. He said “Stop.” ok',
        'A. a. A! b......c......d……e……f\n\nOK. ok. OK.',
        '重复的句子。不重复的句子！\n😀😀. 😀😀. x. x.',
        'Short. Sh.? Sh.',
    ]
    assert _run(TEXTS, tokenizer="lambda t: t.split('. ')") == [
        '',
        'Hello world 你好。你好。',
        'This is a sentence This is a sentence! Another one? Another one?\n',
        'he said “Stop.” Then left He said “Stop.” ok',
        'A a A! b......c......d……e……f\n\nOK ok',
        '重复的句子。不重复的句子！重复的句子。\n😀😀 😀😀 x x.',
        'Short Sh Short?? Sh.',
    ]
