"""The analyzer's overlaps: the load beside the filters' build, the stats export and the overall table in
the driver while forked workers draw the per-stat plots; same files, same numbers, errors not swallowed."""

import math
import os
import threading

import pytest
import yaml

from data_juicer.core import analyzer as A
from data_juicer.utils.constant import Fields
from tests.analysis.helpers import FILTERS, job_analysis_dir, rows
from tests.conftest import write_jsonl

pytest.importorskip("matplotlib")


def test_overall_of_five_rows_literal_values():
    stats = [{"text_len": v, "lang": g} for v, g in zip([1, 2, 3, 4, 10], ["en", "en", "zh", "fr", "en"])]
    t = A.overall(stats, [0.1, 0.9])
    n = t["text_len"]
    assert list(t.index) == ["count", "mean", "std", "min", "10%", "25%", "50%", "75%", "90%", "max",
                             "unique", "top", "freq"]
    assert [n["count"], n["mean"], n["min"], n["25%"], n["50%"], n["75%"], n["max"]] == [5, 4, 1, 2, 3, 4, 10]
    assert math.isclose(n["std"], math.sqrt(12.5))  # sample std: (9 + 4 + 1 + 0 + 36) / 4
    assert math.isclose(n["10%"], 1.4) and math.isclose(n["90%"], 7.6)  # linear interpolation
    g = t["lang"]
    assert (g["count"], g["unique"], g["top"], g["freq"]) == (5, 3, "en", 3)


def _recipe(d, np_, folder=False):
    data = write_jsonl(d / "data.jsonl", rows())
    if folder:  # a folder of JSONL files as the dataset path
        os.makedirs(d / "folder")
        os.replace(data, d / "folder" / "data.jsonl")
        data = str(d / "folder")
    cfg = {"project_name": "t", "np": np_, "dataset_path": data, "export_path": str(d / "out" / "result.jsonl"),
           "percentiles": [0.1, 0.9], "process": FILTERS}
    path = d / "recipe.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True, sort_keys=False))
    from data_juicer.config.recipe import load_recipe

    return load_recipe(["--config", str(path)], "dj-analyze")


def _run(d, np_, monkeypatch=None, seen=None):
    if monkeypatch is not None:
        from data_juicer.core import exporter

        real = exporter.write_jsonl

        def spy(table, path, *a, **k):
            seen.append((A._PLOT_JOB is not None, threading.current_thread().name, os.path.basename(path)))
            return real(table, path, *a, **k)

        monkeypatch.setattr(exporter, "write_jsonl", spy)
    an = A.Analyzer(_recipe(d, np_))
    an.run()
    return an


def test_np2_exports_while_plotting_same_files_as_np1(tmp_path, monkeypatch):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    _run(tmp_path / "one", 1)
    seen = []
    an = _run(tmp_path / "two", 2, monkeypatch, seen)
    # written once, in the driver, while the plotting pool (np=2, 5 numeric stats) was drawing
    assert seen == [(True, "MainThread", "result_stats.jsonl")]
    one, two = job_analysis_dir(tmp_path / "one" / "out"), job_analysis_dir(tmp_path / "two" / "out")
    assert sorted(os.listdir(one)) == sorted(os.listdir(two))
    assert len(os.listdir(two)) == 14  # 5 stats x (hist, box) + corr + overall.csv/.md + report.html
    for name in ("overall.csv", "overall.md"):
        with open(os.path.join(one, name), "rb") as a, open(os.path.join(two, name), "rb") as b:
            assert a.read() == b.read(), name
    with open(tmp_path / "one" / "out" / "result_stats.jsonl", "rb") as a, \
            open(tmp_path / "two" / "out" / "result_stats.jsonl", "rb") as b:
        assert a.read() == b.read()
    assert len(an.plot_files) == 11 and all(os.path.isfile(p) for p in an.plot_files)


@pytest.mark.slow
def test_export_error_propagates_from_the_overlap(tmp_path, monkeypatch):
    from data_juicer.core import exporter

    def broken(table, path, *a, **k):
        raise OSError(28, "No space left on device", path)

    monkeypatch.setattr(exporter, "write_jsonl", broken)
    an = A.Analyzer(_recipe(tmp_path, 2))
    with pytest.raises(OSError, match="No space left"):
        an.run()
    assert A._PLOT_JOB is None  # the plotting pool was stopped


def test_load_runs_in_a_thread_beside_the_build_for_one_file(tmp_path, monkeypatch):
    from data_juicer.core.backends.hf import HFBackend

    where = []
    real_load, real_ops = HFBackend.load, A.Analyzer._stats_ops

    def load(self):
        where.append(("load", threading.current_thread().name.split("_")[0]))
        return real_load(self)

    def stats_ops(self):
        where.append(("build", threading.current_thread().name))
        return real_ops(self)

    monkeypatch.setattr(HFBackend, "load", load)
    monkeypatch.setattr(A.Analyzer, "_stats_ops", stats_ops)
    an = A.Analyzer(_recipe(tmp_path, 1))
    stats_file, _, result = an.run()
    assert sorted(where) == [("build", "MainThread"), ("load", "dj-load")]
    assert not [t for t in threading.enumerate() if t.name.startswith("dj-load")]  # joined before the pass
    assert list(result.columns) == ["text_len", "num_words", "alnum_ratio", "special_char_ratio",
                                    "max_line_length"]
    assert result["text_len"]["count"] == len(rows())


@pytest.mark.slow
def test_load_of_a_folder_runs_first_in_this_thread(tmp_path, monkeypatch):
    from data_juicer.core.backends.hf import HFBackend

    where = []
    real_load = HFBackend.load

    def load(self):
        where.append(threading.current_thread().name)
        return real_load(self)

    monkeypatch.setattr(HFBackend, "load", load)
    an = A.Analyzer(_recipe(tmp_path, 1, folder=True))
    an.run()
    assert where == ["MainThread"]
    with open(tmp_path / "out" / "result_stats.jsonl", encoding="utf-8") as f:
        assert sum(1 for _ in f) == len(rows())
    assert Fields.stats == "__dj__stats__"
