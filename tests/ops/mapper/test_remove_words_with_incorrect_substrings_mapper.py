import hashlib
import io

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models.loader import MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.lazy import is_available

NAME = "remove_words_with_incorrect_substrings_mapper"
TEXTS = [
    "", "   ", "\n\t\n",
    "visit http://example.com or www.google.com now",
    "Go to https://github.com/alibaba/data-juicer!\tSee <a href='x'>link</a>\n\nthe end",
    "(http) [www] plain words here // slashes",
    "中文 http 链接 www.例子.com 测试 😀 emoji",
    "a//b c.comma x.com, HTTP caps WWW",
    "Tab\tseparated\t\tcells  double  spaces\n\n\nnew para",
    "nothing to remove here at all",
    "urls:http://a.b  ...www... ©www© 12.com34",
    "line one\r\nhttp://x line two\u3000www wide\xa0space",
]
# the tiny sentencepiece model the tokenized path was run with (in Data-Juicer 1.6.1 too)
CORPUS = [
    "visit http://example.com and https://www.example.org for more",
    "the quick brown fox jumps over the lazy dog",
    "links like www.site.com or href attributes are noise",
    "中文文本也需要处理，这是一个测试句子。",
    "Hello world! Tokenizers split words into pieces.",
] * 20
SP_MD5 = "4db1975f8252f483432309382f82cc9d"  # sentencepiece 0.2.x


def _run(texts, **params):
    op = OPERATORS.get(NAME)(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_defaults_match_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        "", "", "",
        "visit or now",
        "Go to\tSee <a\nthe end",
        "plain words here // slashes",  # a bare "//" is all special characters: stripped to nothing
        "中文 链接 测试 😀 emoji",
        "HTTP caps WWW",  # case-sensitive
        "Tab\tseparated\tcells double spaces\nnew para",
        "nothing to remove here at all",
        "12.com34",  # stripped to "com"
        "line one\r\nline wide\xa0space",
    ]


def test_custom_and_empty_substrings_match_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS, substrings=["中", "ab", "."]) == [
        "", "", "",
        "visit or now",
        "Go to\tSee <a href='x'>link</a>\nthe end",
        "(http) [www] plain words here // slashes",
        "http 链接 测试 😀 emoji",
        "a//b HTTP caps WWW",
        "separated\tcells double spaces\nnew para",
        "nothing to remove here at all",
        "...www... ©www© 12.com34",
        "line one\r\nhttp://x line two\u3000www wide\xa0space",
    ]
    # nothing removed, but spacing is still normalised
    assert _run(TEXTS, substrings=[]) == [
        "", "", "",
        "visit http://example.com or www.google.com now",
        "Go to https://github.com/alibaba/data-juicer!\tSee <a href='x'>link</a>\nthe end",
        "(http) [www] plain words here // slashes",
        "中文 http 链接 www.例子.com 测试 😀 emoji",
        "a//b c.comma x.com, HTTP caps WWW",
        "Tab\tseparated\tcells double spaces\nnew para",
        "nothing to remove here at all",
        "urls:http://a.b ...www... ©www© 12.com34",
        "line one\r\nhttp://x line two\u3000www wide\xa0space",
    ]
    assert _run(["a b"], substrings=[""]) == [""]


def test_very_long_text():
    text = ("keep http://x.com " * 20_000).strip()
    assert _run([text]) == [" ".join(["keep"] * 20_000)]


def test_bad_substrings_and_requirements():
    with pytest.raises(ValueError, match="list of strings"):
        OPERATORS.get(NAME)(substrings="http")
    assert OPERATORS.get(NAME).required_packages({"tokenization": True}) == ("sentencepiece",)
    assert OPERATORS.get(NAME).required_packages({}) == ()


def _train_sentencepiece(path):
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_writer=buf, vocab_size=70,
                                   model_type="unigram", num_threads=1, character_coverage=1.0, minloglevel=2)
    path.write_bytes(buf.getvalue())
    return hashlib.md5(buf.getvalue()).hexdigest()


def test_tokenized_matches_data_juicer(tmp_path, monkeypatch):
    if not is_available("sentencepiece"):
        pytest.skip("the tokenized path needs sentencepiece (pip install sentencepiece)")
    if _train_sentencepiece(tmp_path / "en.sp.model") != SP_MD5:
        pytest.skip("this sentencepiece version trains a different model than the one Data-Juicer was run with")
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    clear_models()
    try:
        # values from Data-Juicer 1.6.1: once a piece goes, the kept pieces are joined without spaces
        assert _run(TEXTS, tokenization=True) == [
            "", "   ", "\n\t\n",
            "visit://example.comorwww.google.comnow",
            "Gotos://github.com/alibaba/data-juicer!See<ahref='x'>link</a>theend",
            "(http) [www] plain words here // slashes",
            "中文链接www.例子.com测试😀emoji",
            "a//b c.comma x.com, HTTP caps WWW",
            "Tab\tseparated\t\tcells  double  spaces\n\n\nnew para",
            "nothing to remove here at all",
            "urls:http://a.b  ...www... ©www© 12.com34",
            "lineone://xlinetwowwwwidespace",
        ]
        # no piece contains "the": every text is left exactly as it was
        assert _run(TEXTS, tokenization=True, substrings=["the"]) == TEXTS
    finally:
        clear_models()


def test_tokenized_needs_the_model(tmp_path, monkeypatch):
    if not is_available("sentencepiece"):
        pytest.skip("needs sentencepiece")
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError, match="xx.sp.model"):
        OPERATORS.get(NAME)(lang="xx", tokenization=True)
