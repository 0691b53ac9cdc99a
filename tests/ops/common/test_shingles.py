import pytest

from data_juicer.ops.common.shingles import char_shingles, joined_shingles, punctuation_tokens, shingles, space_tokens

TEXTS = ["", "a", "one two  three\nfour\tfive ", "数据 处理 是 大模型 训练", "😀 e\u0301 ñ ß 中 x", "a,b;;c. d!e",
         "  leading and trailing  "]


def naive_joined(tokens, sep, window):
    return [sep.join(tokens[i:i + window]).encode() for i in range(len(tokens) - window + 1)]


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("window", [1, 2, 3, 5])
def test_shingles_are_joined_windows_of_tokens(text, window):
    for tokens in (space_tokens(text), punctuation_tokens(text), list(text)):
        for sep in (" ", "", "--"):
            assert joined_shingles(tokens, sep, window) == naive_joined(tokens, sep, window)
    assert char_shingles(text, window) == [text[i:i + window].encode() for i in range(len(text) - window + 1)]


def test_tokens():
    assert space_tokens(" a  b\nc\td ") == ["a", "b\nc\td"]  # only spaces split
    assert punctuation_tokens("a,b;;c. d") == ["a", "b", "", "c", " d"]
    assert shingles("a b c", "space", 2) == [b"a b", b"b c"]
    assert shingles(["▁a", "b"], "sentencepiece", 2) == ["▁ab".encode()]
    with pytest.raises(ValueError, match="unknown tokenization"):
        shingles("a", "words", 2)


def test_unencodable_text_fails_like_data_juicer():
    with pytest.raises(UnicodeEncodeError):
        char_shingles("ab\ud800cd", 2)
