import os

import pytest
from text_filter_data import TEXTS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models.loader import MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields


def make(**kw):
    return OPERATORS.get("alphanumeric_filter")(**kw)


def stats_and_keep(op, key, texts=TEXTS):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    op.compute_stats_batched(samples)
    return [s[key] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)]


# values from Data-Juicer 1.6.1
ALNUM = [0.0, 1.0, 0.7567567567567568, 0.509090909090909, 0.8387096774193549, 0.2222222222222222,
         0.9993457638207393, 0.7391304347826086, 1.0, 0.7272727272727273, 0.0, 0.0, 0.8285714285714286, 0.0,
         0.7083333333333334, 0.5967741935483871, 0.8333333333333334, 0.76, 0.5, 0.8161764705882353,
         0.7323943661971831, 0.5068493150684932, 0.7719298245614035, 0.38181818181818183]
KEEP_DEFAULT = [0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
KEEP_05_09 = [0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]
ALPHA_TOKEN = [0.0, 1.0, 0.8235294117647058, 0.5833333333333334, 0.3291139240506329, 0.11428571428571428,
               0.99967277486911, 1.3972602739726028, 1.0, 0.7804878048780488, 0.0, 0.0, 0.6904761904761905, 0.0,
               0.0, 0.6727272727272727, 0.9523809523809523, 0.3584905660377358, 0.24324324324324326,
               1.3058823529411765, 1.04, 0.5967741935483871, 0.9565217391304348, 0.375]
KEEP_TOKEN_1_3 = [0, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0]


@pytest.mark.parametrize("kw,keep", [({}, KEEP_DEFAULT), ({"min_ratio": 0.5, "max_ratio": 0.9}, KEEP_05_09)])
def test_matches_data_juicer(kw, keep):
    stats, kept = stats_and_keep(make(**kw), "alnum_ratio")
    assert stats == ALNUM
    assert kept == [bool(k) for k in keep]
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(TEXTS, keep) if k]


def test_counts_unicode_alphanumerics():
    stats, _ = stats_and_keep(make(), "alnum_ratio", ["ab_1", "中文。", "½Ⅻ٣ ", "😀a"])
    assert stats == [0.75, 2 / 3, 0.75, 0.5]


def test_reuses_existing_stat():
    rows = [{"text": "!!!!", Fields.stats: {"alnum_ratio": 0.9}}]
    assert run_ops_on_rows([make()], rows)[0][Fields.stats] == {"alnum_ratio": 0.9}


def test_tokenization_without_tokenizer_names_where_to_put_it(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from data_juicer.models import loader

    monkeypatch.setattr(loader, "is_available", lambda dist: True)  # get past the package check
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    with pytest.raises(FileNotFoundError) as err:
        make(tokenization=True)
    msg = str(err.value)
    assert str(tmp_path / "EleutherAI" / "pythia-6.9b-deduped") in msg and MODELS_DIR_ENV in msg


def test_tokenization_needs_transformers(monkeypatch):
    from data_juicer.models import loader

    monkeypatch.setattr(loader, "is_available", lambda dist: dist != "transformers")
    with pytest.raises(ImportError, match="transformers"):
        make(tokenization=True)


@pytest.mark.slow  # importing transformers alone takes ~1-2 s
def test_tokenized_ratio_matches_data_juicer(tmp_path, monkeypatch):
    pytest.importorskip("transformers", reason="the tokenized path needs transformers")
    from text_filter_data import build_hf_tokenizer

    build_hf_tokenizer(os.path.join(tmp_path, "EleutherAI", "pythia-6.9b-deduped"))
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    clear_models()
    try:
        stats, kept = stats_and_keep(make(tokenization=True, min_ratio=1.0, max_ratio=3.0), "alpha_token_ratio")
    finally:
        clear_models()
    assert stats == ALPHA_TOKEN
    assert kept == [bool(k) for k in KEEP_TOKEN_1_3]
