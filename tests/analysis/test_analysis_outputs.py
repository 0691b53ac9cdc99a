"""dj-analyze outputs: stats, overall.csv numbers (checked with numpy), plots, thresholds, --auto."""

import csv
import math
import os

import numpy as np
import pyarrow as pa
import pytest

from data_juicer.analysis.columns import stat_columns
from data_juicer.analysis.overall import overall_table
from data_juicer.cli.analyze import main as analyze
from data_juicer.cli.process import main as process
from data_juicer.utils.constant import Fields
from tests.analysis.helpers import FILTERS, TEXTS, check_png, job_analysis_dir, rows
from tests.conftest import read_jsonl

pytest.importorskip("matplotlib")
pytest.importorskip("PIL")


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """One analysis (what dj-analyze runs) of the small corpus, with extra percentiles and the one-file plot."""
    import yaml

    from data_juicer.config.recipe import load_recipe
    from data_juicer.core.analyzer import Analyzer
    from tests.conftest import write_jsonl

    d = tmp_path_factory.mktemp("analyse")
    data = write_jsonl(d / "data.jsonl", rows())
    recipe = {"project_name": "t", "np": 1, "dataset_path": data, "export_path": str(d / "out" / "result.jsonl"),
              "percentiles": [0.1, 0.9], "save_stats_in_one_file": True,
              "process": [{"whitespace_normalization_mapper": None}] + FILTERS}
    path = d / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe, allow_unicode=True, sort_keys=False))
    analyzer = Analyzer(load_recipe(["--config", str(path)], "dj-analyze"))
    analyzer.run()
    return d, str(path), analyzer


def _overall_csv(path):
    with open(path, newline="") as f:
        table = list(csv.reader(f))
    header = table[0][1:]
    return {name: {row[0]: row[1 + i] for row in table[1:]} for i, name in enumerate(header)}


def test_stats_file_keeps_every_sample(analysed):
    d, _, _ = analysed
    stats = [r[Fields.stats] for r in read_jsonl(d / "out" / "result_stats.jsonl")]
    assert len(stats) == len(TEXTS)  # nothing dropped
    assert [s["text_len"] for s in stats] == [len(t) for t in TEXTS]  # stats on the raw text: no mapper ran


def test_overall_csv_matches_numpy(analysed):
    d, _, _ = analysed
    stats = [r[Fields.stats] for r in read_jsonl(d / "out" / "result_stats.jsonl")]
    table = _overall_csv(os.path.join(job_analysis_dir(d / "out"), "overall.csv"))
    assert set(table) == set(stats[0])
    for name, col in table.items():
        raw = np.array([s[name] for s in stats], dtype=float)
        assert set(col) == {"count", "mean", "std", "min", "10%", "25%", "50%", "75%", "90%", "max"}
        assert float(col["count"]) == raw.size
        assert math.isclose(float(col["mean"]), raw.mean(), rel_tol=1e-12, abs_tol=1e-12)
        assert math.isclose(float(col["std"]), raw.std(ddof=1), rel_tol=1e-9, abs_tol=1e-12)
        assert float(col["min"]) == raw.min() and float(col["max"]) == raw.max()
        for p in (10, 25, 50, 75, 90):
            assert math.isclose(float(col[f"{p}%"]), np.percentile(raw, p), rel_tol=1e-12, abs_tol=1e-12), (name, p)
    with open(os.path.join(job_analysis_dir(d / "out"), "overall.md"), encoding="utf-8") as f:
        header = f.readline()
    assert [c.strip() for c in header.strip().strip("|").split("|")][1:] == list(table)


def test_every_plot_is_a_real_image(analysed):
    d, _, _ = analysed
    folder = job_analysis_dir(d / "out")
    stats = read_jsonl(d / "out" / "result_stats.jsonl")[0][Fields.stats]
    expected = {f"{k}-{kind}.png" for k in stats for kind in ("hist", "box")}
    expected |= {"stats-corr-pearson.png", "all-stats.png"}
    pngs = {f for f in os.listdir(folder) if f.endswith(".png")}
    assert expected <= pngs, expected - pngs
    for f in pngs:
        check_png(os.path.join(folder, f))
    w, h = check_png(os.path.join(folder, "all-stats.png"))
    assert w > 1000  # every stat side by side


def test_thresholds_match_the_filters_decisions(analysed, tmp_path):
    """'would drop' comes from the filters' own decisions: dj-process keeps exactly the rest."""
    import yaml

    from data_juicer.core.runner import run_ops_on_rows
    from data_juicer.ops.registry import OPERATORS

    d, recipe_path, analyzer = analysed
    drops = analyzer.drops
    assert [x.op for x in drops] == [next(iter(f)) for f in FILTERS]
    assert drops[0].settings == {"min_len": 10, "max_len": 200} and drops[0].stat_keys == ["text_len"]
    assert drops[0].sentence().startswith("text_length_filter min_len 10, max_len 200 would drop 25.0% (3 of 12)")
    n = len(TEXTS)
    assert drops[0].dropped == sum(not 10 <= len(t) <= 200 for t in TEXTS)  # recomputed from the raw texts
    # each filter alone, run row-wise as the executor runs it
    for f, drop in zip(FILTERS, drops):
        name, params = next(iter(f.items()))
        kept = run_ops_on_rows([OPERATORS.get(name)(**params)], rows())
        assert drop.dropped == n - len(kept), (name, drop.dropped, n - len(kept))
    # all together, against dj-process on the same data
    r = dict(yaml.safe_load(open(recipe_path)), process=FILTERS, export_path=str(tmp_path / "p" / "r.jsonl"))
    p = tmp_path / "p.yaml"
    p.write_text(yaml.safe_dump(r, allow_unicode=True))
    assert process(["--config", str(p)]) == 0
    together = n - len(read_jsonl(tmp_path / "p" / "r.jsonl"))
    html = open(analyzer.report_path, encoding="utf-8").read()
    assert f"All filters together would drop {100 * together / n:.1f}% ({together:,} of {n:,})" in html


def test_columns_strings_lists_bools_and_meta():
    """String, list, bool and nullable stats, and only __dj__ meta tags, summarised as pandas describe does."""
    words = [["a", "b"], [], None, ["a"], ["c", "a", "b"]]
    scores = [[0.5, 1.5], [2.0], [], None, [4.0]]
    tbl = pa.table({
        Fields.stats: pa.array([
            {"lang": "en", "lang_score": 0.9, "flag": True, "words": words[0], "scores": scores[0]},
            {"lang": "zh", "lang_score": None, "flag": False, "words": words[1], "scores": scores[1]},
            {"lang": "en", "lang_score": 0.5, "flag": True, "words": words[2], "scores": scores[2]},
            {"lang": None, "lang_score": 0.1, "flag": True, "words": words[3], "scores": scores[3]},
            {"lang": "en", "lang_score": 0.7, "flag": False, "words": words[4], "scores": scores[4]},
        ]),
        Fields.meta: pa.array([{"__dj__tag__": "x", "plain": 1}] * 5),
    })
    cols = {c.name: c for c in stat_columns(tbl)}
    assert list(cols) == ["lang", "lang_score", "flag", "words", "scores", "__dj__tag__"]  # 'plain' meta skipped
    res = overall_table(cols.values(), [0.1])
    assert res["lang"]["count"] == 4 and res["lang"]["unique"] == 2 and res["lang"]["top"] == "en"
    assert res["lang"]["freq"] == 3
    score = np.array([0.9, 0.5, 0.1, 0.7])
    assert res["lang_score"]["count"] == 4 and math.isclose(res["lang_score"]["mean"], score.mean())
    assert math.isclose(res["lang_score"]["10%"], np.percentile(score, 10))
    flat = [w for ws in words if ws for w in ws]
    assert res["words"]["count"] == len(flat) and res["words"]["top"] == "a" and res["words"]["freq"] == 3
    flat_scores = np.array([s for ss in scores if ss for s in ss])
    assert res["scores"]["count"] == flat_scores.size
    assert math.isclose(res["scores"]["std"], flat_scores.std(ddof=1))
    assert res["flag"]["top"] == True and res["flag"]["freq"] == 3  # noqa: E712 (numpy bool)
    assert res["__dj__tag__"]["top"] == "x"
    # correlations use each list's mean, 0 for an empty or missing list (as Data-Juicer)
    np.testing.assert_allclose(cols["scores"].per_sample, [1.0, 2.0, 0.0, 0.0, 4.0])
    assert cols["words"].per_sample is None and cols["lang"].per_sample is None


def test_string_stats_get_top_k_bars(tmp_path):
    from data_juicer.analysis import plots

    tbl = pa.table({Fields.stats: pa.array([{"lang": lang} for lang in ["en"] * 30 + ["zh"] * 12 + ["de"] * 5])})
    (col,) = stat_columns(tbl)
    out = plots.draw_column(col, str(tmp_path))
    assert {"hist", "topk"} <= set(out)
    for p in out.values():
        check_png(p)
    assert plots.top_values(col) == [("en", 30), ("zh", 12), ("de", 5)]


def test_auto_mode_analyses_auto_num_samples(tmp_path):
    from tests.conftest import write_jsonl

    data = write_jsonl(tmp_path / "d.jsonl", rows())
    out = tmp_path / "auto"
    assert analyze(["--auto", "--dataset_path", data, "--export_path", str(out / "r.jsonl"), "--auto_num", "5"]) == 0
    stats = read_jsonl(out / "r_stats.jsonl")
    assert len(stats) == 5
    table = _overall_csv(os.path.join(job_analysis_dir(out), "overall.csv"))
    assert {"text_len", "num_words", "alnum_ratio"} <= set(table)
    assert all(float(col["count"]) == 5 for col in table.values() if "count" in col)
    assert os.path.isfile(os.path.join(job_analysis_dir(out), "report.html"))


def test_one_stats_pass_for_all_filters_names_the_failing_filter():
    """All filters score in one pass; a sample a filter fails on is set aside with that filter's name."""
    import json

    from data_juicer.core.analyzer import StatsOnly
    from data_juicer.core.runner import FusedRun
    from data_juicer.ops.filter.text_length_filter import TextLengthFilter
    from data_juicer.ops.filter.words_num_filter import WordsNumFilter
    from data_juicer.utils.batch import rows_to_batch

    class Picky(TextLengthFilter):
        def compute_stats_batched(self, samples):
            if "boom" in samples["text"]:
                raise ValueError("cannot score 'boom'")
            return super().compute_stats_batched(samples)

    ops = [WordsNumFilter(min_num=100), Picky(min_len=100)]
    stats_pass = StatsOnly(ops)
    assert stats_pass.name == "words_num_filter + text_length_filter"
    assert stats_pass.uses == ops[0].uses
    out = FusedRun([stats_pass]).apply(rows_to_batch([{"text": "a b c"}, {"text": "boom"}, {"text": "x y"}]))
    good, bad = out
    assert good["text"] == ["a b c", "x y"]  # nothing dropped by the thresholds
    assert [s["num_words"] for s in good[Fields.stats]] == [3, 2]
    assert [s["text_len"] for s in good[Fields.stats]] == [5, 3]
    err = json.loads(bad["__dj__error_tmp__"][0])
    assert bad["text"] == ["boom"] and err["message"].startswith("text_length_filter: ValueError: cannot score")
