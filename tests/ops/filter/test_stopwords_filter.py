import json

import pytest
from text_filter_data import SENTENCEPIECE_MD5, TEXTS, train_sentencepiece

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models.loader import MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields, InterVars
from data_juicer.utils.lazy import is_available

KEY = "stopwords_ratio"
TX = TEXTS + ["中文文本 测试 上上 士", "The THE the, (a) cat MAT! is"]
# the list file given to both Data-Juicer 1.6.1 and this op for the equality checks
STOP = {"en": ["the", "a", "is", "and", "it's", "on", "to", "be", "or", "not", "that", "here", "in", "this", "hello"],
        "zh": ["是", "一个", "的", "上上", "一一一"],
        "fr": ["le", "la", "et"]}


@pytest.fixture
def lists_dir(tmp_path):
    (tmp_path / "stopwords.json").write_text(json.dumps(STOP), encoding="utf-8")
    (tmp_path / "unrelated.json").write_text("not json", encoding="utf-8")  # ignored: no "stopwords" in name
    return str(tmp_path)


def make(**kw):
    return OPERATORS.get("stopwords_filter")(**kw)


def stats_and_keep(op, texts=TX, context=False):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    if context:
        samples[Fields.context] = [{} for _ in texts]
    op.compute_stats_batched(samples, context=context)
    return [s[KEY] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)], samples


# values from Data-Juicer 1.6.1 (stopwords_dir holding STOP as stopwords.json)
CASES = [
    ({}, [0.0, 1.0, 0.5, 0.14285714285714285, 0.0, 0.2, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
          0.0, 0.15, 0.95, 0.05405405405405406, 0.2222222222222222, 0.2, 0.0, 0.7142857142857143],
     [0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]),
    ({"lang": "zh", "use_words_aug": True, "min_ratio": 0.1}, [0.0] * 26, [0] * 26),
    ({"lang": "all", "use_words_aug": True, "words_aug_group_sizes": [2, 3], "words_aug_join_char": " ",
      "max_ratio": 0.5},
     [0.0, 1.0, 0.19047619047619047, 0.05555555555555555, 0.0, 0.08333333333333333, 0.0, 0.16901408450704225, 0.0,
      0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.05128205128205128, 0.3333333333333333,
      0.018518518518518517, 0.08333333333333333, 0.08333333333333333, 0.0, 0.2777777777777778],
     [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]),
]


@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize("kw,expected,keep", CASES)
def test_matches_data_juicer(lists_dir, kw, expected, keep, context):
    stats, kept, _ = stats_and_keep(make(stopwords_dir=lists_dir, **kw), context=context)
    assert stats == expected and all(type(v) is float for v in stats)
    assert kept == [bool(k) for k in keep]
    out = run_ops_on_rows([make(stopwords_dir=lists_dir, **kw)], [{"text": t} for t in TX])
    assert [r["text"] for r in out] == [t for t, k in zip(TX, keep) if k]


def test_single_file_path_and_context_keys(lists_dir):
    op = make(stopwords_dir=lists_dir + "/stopwords.json", use_words_aug=True)
    stats, _, samples = stats_and_keep(op, ["The cat, is here!"], context=True)
    refined = f"{InterVars.refined_words}-None-text-True-SPECIAL_CHARS-True-[2]-"
    assert samples[Fields.context][0] == {
        f"{InterVars.words}-None-text": ["The", "cat,", "is", "here!"],
        refined: ["the", "cat", "is", "here", "thecat", "catis", "ishere"]}
    assert stats == [3 / 7]


def test_default_lists_come_from_stopwordsiso(tmp_path):
    op = make(stopwords_dir=str(tmp_path))  # empty folder: bundled lists
    assert {"the", "and", "of"} <= op.words
    stats, kept, _ = stats_and_keep(op, ["The cat and the dog", "", "zebra quantum"])
    assert stats == [0.6, 0.0, 0.0] and kept == [True, False, False]
    assert "的" in make(stopwords_dir=str(tmp_path), lang="zh").words
    assert op.words < make(stopwords_dir=str(tmp_path), lang="all").words


def test_existing_stats_are_reused(lists_dir):
    samples = {"text": ["the the the"], Fields.stats: [{KEY: 0.1}]}
    make(stopwords_dir=lists_dir).compute_stats_batched(samples)
    assert samples[Fields.stats][0][KEY] == 0.1


def test_bad_params(lists_dir, tmp_path):
    with pytest.raises(ValueError, match="no stopword list for lang='xx'"):
        make(stopwords_dir=lists_dir, lang="xx")
    with pytest.raises(ValueError, match="does not exist"):
        make(stopwords_dir=str(tmp_path / "missing"))
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "my_stopwords.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="language codes"):
        make(stopwords_dir=str(bad))


# values from Data-Juicer 1.6.1 with the tiny sentencepiece model of text_filter_data
RATIOS_SP = [0.0, 0.0, 0.12121212121212122, 0.0, 0.0, 0.0, 0.0, 0.0, 0.30952380952380953, 0.0, 0.0, 0.0,
             0.03333333333333333, 0.0, 0.0, 0.05, 0.0, 0.1, 0.0, 0.005681818181818182, 0.0, 0.0, 0.13636363636363635,
             0.08333333333333333]


def test_tokenized_matches_data_juicer(lists_dir, tmp_path, monkeypatch):
    if not is_available("sentencepiece"):
        pytest.skip("the tokenized path needs sentencepiece (pip install sentencepiece)")
    models = tmp_path / "models"
    models.mkdir()
    if train_sentencepiece(str(models / "en.sp.model")) != SENTENCEPIECE_MD5:
        pytest.skip("this sentencepiece version trains a different model than the one Data-Juicer was run with")
    monkeypatch.setenv(MODELS_DIR_ENV, str(models))
    clear_models()
    try:
        for context in (False, True):
            stats, _, samples = stats_and_keep(make(stopwords_dir=lists_dir, tokenization=True), TEXTS, context)
            assert stats == RATIOS_SP
    finally:
        clear_models()
    model = "sentencepiece(lang='en')"
    assert set(samples[Fields.context][0]) == {f"{InterVars.words}-{model}-text",
                                                f"{InterVars.refined_words}-{model}-text-True-SPECIAL_CHARS-False-[2]-"}


def test_default_folder_is_data_juicers_asset_cache(tmp_path, monkeypatch):
    # ASSET_DIR resolves like Data-Juicer's asset cache, so its downloaded stopwords.json is used
    monkeypatch.setenv("DATA_JUICER_ASSETS_CACHE", str(tmp_path))
    (tmp_path / "stopwords.json").write_text(json.dumps({"en": ["zebra"]}))
    assert make().words == frozenset({"zebra"})
    monkeypatch.setenv("DATA_JUICER_ASSETS_CACHE", str(tmp_path / "absent"))
    assert "the" in make().words  # no folder: bundled lists
