import pytest
from text_filter_data import SENTENCEPIECE_MD5, TEXTS, train_sentencepiece

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models.loader import MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.ops.common import repetition_numba
from data_juicer.ops.common.text_words import stripped_words_context_key
from data_juicer.utils.constant import Fields, InterVars
from data_juicer.utils.lazy import is_available

KEY = "num_words"


def make(**kw):
    return OPERATORS.get("words_num_filter")(**kw)


def stats_and_keep(op, texts=TEXTS, context=False):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    if context:
        samples[Fields.context] = [{} for _ in texts]
    op.compute_stats_batched(samples, context=context)
    return [s[KEY] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)], samples


# values from Data-Juicer 1.6.1
NUM = [0, 1, 8, 7, 1, 5, 3, 72, 1, 6, 0, 0, 7, 0, 3, 6, 1, 5, 0, 40, 20, 37, 9, 5]
KEEP_DEFAULT = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0]
KEEP_3_12 = [0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 0, 1, 1]
# with the tiny sentencepiece model of text_filter_data, min_num=5, max_num=40
NUM_SP = [0, 1, 33, 33, 18, 21, 3057, 168, 42, 30, 0, 0, 30, 7, 10, 40, 10, 20, 7, 176, 57, 65, 44, 24]
KEEP_SP = [0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1]


@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize("kw,keep", [({}, KEEP_DEFAULT), ({"min_num": 3, "max_num": 12}, KEEP_3_12)])
def test_matches_data_juicer(kw, keep, context):
    stats, kept, samples = stats_and_keep(make(**kw), context=context)
    assert stats == NUM
    assert kept == [bool(k) for k in keep]
    if context:
        # compiled count: no word list built, none left in the context; else the split, and the stripped
        # words word_repetition_filter lower-cases instead of splitting again
        shared = set() if repetition_numba.text_available() else {
            f"{InterVars.words}-None-text", stripped_words_context_key(None, "text")}
        assert all(set(c) == shared for c in samples[Fields.context])
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(TEXTS, keep) if k]


def test_words_split_on_space_newline_tab_and_strip_special_characters():
    texts = ["a  b\n\nc\td", "a\u3000b\xa0c", "...hi!! (there) 42 😀 ---", "一一 中文"]
    stats, _, samples = stats_and_keep(make(), texts, context=True)
    assert stats == [4, 1, 2, 1]
    if not repetition_numba.text_available():
        assert samples[Fields.context][2][f"{InterVars.words}-None-text"] == ["...hi!!", "(there)", "42", "😀", "---"]
    stats, _, _ = stats_and_keep(make(), texts, context=False)
    assert stats == [4, 1, 2, 1]


def test_words_from_context_are_reused():
    key = f"{InterVars.words}-None-text"
    samples = {"text": ["one"], Fields.stats: [{}], Fields.context: [{key: ["x", "y", "!!", "z"]}]}
    make().compute_stats_batched(samples, context=True)
    assert samples[Fields.stats][0][KEY] == 3


def test_missing_sentencepiece_model_is_a_clear_error(tmp_path, monkeypatch):
    from data_juicer.models import loader

    monkeypatch.setattr(loader, "is_available", lambda dist: True)
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError) as err:
        make(tokenization=True, lang="fr")
    assert str(tmp_path / "fr.sp.model") in str(err.value) and MODELS_DIR_ENV in str(err.value)


def test_tokenization_needs_sentencepiece(monkeypatch):
    from data_juicer.models import loader

    monkeypatch.setattr(loader, "is_available", lambda dist: dist != "sentencepiece")
    with pytest.raises(ImportError, match="sentencepiece"):
        make(tokenization=True)


@pytest.fixture
def sp_model(tmp_path, monkeypatch):
    """Path and md5 of a tiny English sentencepiece model placed in the models folder."""
    if not is_available("sentencepiece"):
        pytest.skip("the tokenized path needs sentencepiece (pip install sentencepiece)")
    path = tmp_path / "en.sp.model"
    md5 = train_sentencepiece(str(path))
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    clear_models()
    yield str(path), md5
    clear_models()


def test_tokenized_counts_match_data_juicer(sp_model):
    if sp_model[1] != SENTENCEPIECE_MD5:
        pytest.skip("this sentencepiece version trains a different model than the one Data-Juicer was run with")
    for context in (False, True):
        stats, kept, samples = stats_and_keep(make(tokenization=True, min_num=5, max_num=40), context=context)
        assert stats == NUM_SP
        assert kept == [bool(k) for k in KEEP_SP]
    assert set(samples[Fields.context][0]) == {f"{InterVars.words}-sentencepiece(lang='en')-text"}


def test_tokenized_words_are_sentencepiece_pieces(sp_model):
    import sentencepiece as spm

    pieces = spm.SentencePieceProcessor(model_file=sp_model[0]).encode_as_pieces
    texts = ["the quick brown fox", "Hello world!", ""]
    stats, _, samples = stats_and_keep(make(tokenization=True), texts, context=True)
    key = f"{InterVars.words}-sentencepiece(lang='en')-text"
    assert [c[key] for c in samples[Fields.context]] == [pieces(t) for t in texts]
    assert stats[0] == len(pieces(texts[0])) and stats[2] == 0
