import pytest
from text_filter_data import SENTENCEPIECE_MD5, TEXTS, train_sentencepiece

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models.loader import MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.ops.common import repetition_numba
from data_juicer.utils.constant import Fields, InterVars
from data_juicer.utils.lazy import is_available

KEY = "word_rep_ratio"
WORDS_KEY = f"{InterVars.words}-None-text"
REFINED_KEY = f"{InterVars.refined_words}-None-text-True-SPECIAL_CHARS-False-[2]-"


def make(**kw):
    return OPERATORS.get("word_repetition_filter")(**kw)


def stats_and_keep(op, texts=TEXTS, context=False):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    if context:
        samples[Fields.context] = [{} for _ in texts]
    op.compute_stats_batched(samples, context=context)
    return [s[KEY] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)], samples


# values from Data-Juicer 1.6.1
CASES = [
    ({}, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
          0.8387096774193549, 0.0, 0.14285714285714285, 0.0, 0.0],
     [1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1]),
    ({"rep_len": 1, "max_ratio": 0.4},
     [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.9, 0.8,
      0.5945945945945946, 0.0, 0.0],
     [1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1]),
    ({"rep_len": 2, "min_ratio": 0.1, "max_ratio": 0.6},
     [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
      0.8717948717948718, 0.6842105263157895, 0.5555555555555556, 0.0, 0.0],
     [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]),
]
# with the tiny sentencepiece model of text_filter_data, rep_len=3, max_ratio=0.5
RATIOS_SP = [0.0, 0.0, 0.16129032258064516, 0.0, 0.0, 0.10526315789473684, 0.9970540098199673, 1.0, 0.975,
             0.21428571428571427, 0.0, 0.0, 0.0, 1.0, 0.5, 0.05263157894736842, 1.0, 0.0, 1.0, 0.8908045977011494,
             0.6727272727272727, 0.5396825396825397, 0.0, 0.0]
KEEP_SP = [1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 0, 0, 0, 0, 1, 1]


@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize("kw,expected,keep", CASES)
def test_matches_data_juicer(kw, expected, keep, context):
    stats, kept, samples = stats_and_keep(make(**kw), context=context)
    assert stats == expected and all(type(v) is float for v in stats)
    assert kept == [bool(k) for k in keep]
    if context:  # the compiled pass builds no word lists (none left in the context), except for a text
        # whose lower-casing does not commute with the strip (ΣΑΣ): that one is split in Python
        fast = repetition_numba.text_available()
        assert [set(c) for c in samples[Fields.context]] == [
            set() if fast and "Σ" not in t else {WORDS_KEY, REFINED_KEY} for t in TEXTS]
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(TEXTS, keep) if k]


def test_ngrams_are_lower_cased_and_stripped():
    # "The" / "the," / "THE!" are one word; 2-grams: (the cat) x2, (cat the) x2, (the dog) x1 -> 4/5
    stats, _, samples = stats_and_keep(make(rep_len=2), ["The cat the, CAT THE! dog", "a", "😀 😀"], context=True)
    assert stats == [0.8, 0.0, 0.0]
    if not repetition_numba.text_available():
        assert samples[Fields.context][0][REFINED_KEY] == ["the", "cat", "the", "cat", "the", "dog"]
        assert samples[Fields.context][2][REFINED_KEY] == []
    assert stats_and_keep(make(rep_len=2), ["The cat the, CAT THE! dog", "a", "😀 😀"])[0] == [0.8, 0.0, 0.0]


def test_context_words_are_reused():
    # refined words in the context win; else raw words in the context are refined
    samples = {"text": ["x y", "x y"], Fields.stats: [{}, {}],
               Fields.context: [{REFINED_KEY: ["a", "a", "a"]}, {WORDS_KEY: ["B", "b!", "c"]}]}
    make(rep_len=1).compute_stats_batched(samples, context=True)
    assert [s[KEY] for s in samples[Fields.stats]] == [1.0, 2 / 3]
    assert samples[Fields.context][1][REFINED_KEY] == ["b", "b", "c"]


def test_fused_with_words_num_filter_shares_the_split():
    rows = [{"text": "to be or not to be " * 3}, {"text": "all different words in this sample right here ok"}]
    ops = [OPERATORS.get("words_num_filter")(min_num=5), make(rep_len=2, max_ratio=0.5)]
    out = run_ops_on_rows(ops, rows)
    assert [r["text"] for r in out] == [rows[1]["text"]]
    assert out[0][Fields.stats] == {"num_words": 9, KEY: 0.0}


def test_rejects_bad_rep_len():
    with pytest.raises(ValueError, match="rep_len"):
        make(rep_len=-1)


def test_missing_sentencepiece_model_is_a_clear_error(tmp_path, monkeypatch):
    from data_juicer.models import loader

    monkeypatch.setattr(loader, "is_available", lambda dist: True)
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(FileNotFoundError, match="zh.sp.model"):
        make(tokenization=True, lang="zh")


def test_tokenized_ratio_matches_data_juicer(tmp_path, monkeypatch):
    if not is_available("sentencepiece"):
        pytest.skip("the tokenized path needs sentencepiece (pip install sentencepiece)")
    md5 = train_sentencepiece(str(tmp_path / "en.sp.model"))
    if md5 != SENTENCEPIECE_MD5:
        pytest.skip("this sentencepiece version trains a different model than the one Data-Juicer was run with")
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    clear_models()
    try:
        for context in (False, True):
            stats, kept, samples = stats_and_keep(make(tokenization=True, rep_len=3, max_ratio=0.5), context=context)
            assert stats == RATIOS_SP
            assert kept == [bool(k) for k in KEEP_SP]
    finally:
        clear_models()
    model = "sentencepiece(lang='en')"
    assert set(samples[Fields.context][0]) == {f"{InterVars.words}-{model}-text",
                                                f"{InterVars.refined_words}-{model}-text-True-SPECIAL_CHARS-False-[2]-"}


def test_numpy_ratio_equals_counter_ratio():
    import random

    from data_juicer.ops.filter.word_repetition_filter import word_rep_ratio, word_rep_ratio_fast

    rng = random.Random(5)
    vocab = ["a", "b", "the", "中文", "😀", "x y", "word", "again", "c"]
    for _ in range(300):
        words = [rng.choice(vocab) for _ in range(rng.randint(0, 300))]
        for n in (1, 2, 3, 10):
            assert word_rep_ratio_fast(words, n) == word_rep_ratio(words, n)
