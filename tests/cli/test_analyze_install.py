import csv
import os

import pandas as pd

from data_juicer.cli.analyze import main as analyze
from data_juicer.cli.install import main as install
from tests.conftest import read_jsonl

TEXTS = ["a" * 5, "b" * 12, "c" * 30, "d" * 7, "中文" * 10]


def test_analyze_writes_stats_and_overall_without_dropping(make_recipe, tmp_path, capsys):
    rows = [{"id": i, "text": t} for i, t in enumerate(TEXTS)]
    recipe = make_recipe(rows, [{"whitespace_normalization_mapper": None}, {"text_length_filter": {"min_len": 10}}],
                         percentiles=[0.1])
    assert analyze(["--config", recipe]) == 0
    stats = read_jsonl(tmp_path / "out" / "result_stats.jsonl")
    lengths = [s["__dj__stats__"]["text_len"] for s in stats]
    assert lengths == [len(t) for t in TEXTS]  # all five kept: analysis drops nothing
    job = [d for d in os.listdir(tmp_path / "out") if (tmp_path / "out" / d).is_dir()][0]
    analysis = tmp_path / "out" / job / "analysis"
    table = {row[0]: row[1] for row in csv.reader(open(analysis / "overall.csv"))}
    expected = pd.Series(lengths)
    assert float(table["mean"]) == expected.mean()
    assert float(table["std"]) == expected.std()
    assert float(table["10%"]) == expected.quantile(0.1)
    assert float(table["50%"]) == expected.median()
    assert (analysis / "overall.md").exists()


def test_install_lists_needs(make_recipe, capsys):
    recipe = make_recipe([{"text": "x"}], [{"text_length_filter": None}])
    assert install(["--config", recipe, "--dry_run"]) == 0
    assert "Nothing to install." in capsys.readouterr().out


def test_install_sees_tokenizer_needs(make_recipe, capsys):
    recipe = make_recipe([{"text": "x"}], [{"words_num_filter": {"tokenization": True}}, {"words_num_filter": None}])
    from data_juicer.cli.install import required_packages
    from data_juicer.config.recipe import load_recipe

    assert required_packages(load_recipe(["--config", recipe], check_paths=False)) == {
        "sentencepiece": ["words_num_filter"]}
