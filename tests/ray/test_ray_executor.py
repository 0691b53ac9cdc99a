"""executor_type: ray on a real local Ray: the default executor's end-to-end recipes give equal outputs."""
import json
import os

import pytest

from data_juicer.cli.process import main
from tests.conftest import read_jsonl, write_jsonl
from tests.core.test_executor_failures import CUSTOM_OP
from tests.core.test_executor_failures import ROWS as FAIL_ROWS

ROWS = [{"id": i, "text": t} for i, t in enumerate(
    ["  hello\u3000world, this is long enough  ", "tiny", "another sample of decent length",
     "中文文本的长度超过十个字符了吧"])]


def _read(folder, name="result.jsonl"):
    path = os.path.join(folder, name)
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    return read_jsonl(path)


def _bytes(folder, name="result.jsonl"):
    with open(os.path.join(folder, name), "rb") as f:
        return f.read()


def _job(folder):
    return [os.path.join(folder, d) for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d))][0]


E2E = [
    ([{"whitespace_normalization_mapper": None}, {"text_length_filter": {"min_len": 10}}], {}),
    ([{"text_length_filter": {"min_len": 10}}], {"keep_stats_in_res_ds": True}),
    ([{"suffix_filter": {"suffixes": [".jsonl"]}}], {}),
    ([], {}),
]


@pytest.mark.parametrize("process,globals_", E2E)
def test_e2e_recipes_equal_bytes(run_both, process, globals_):
    d, r = run_both(ROWS, process, **globals_)
    assert _bytes(r) == _bytes(d)
    if os.path.exists(os.path.join(d, "result_stats.jsonl")):
        assert _bytes(r, "result_stats.jsonl") == _bytes(d, "result_stats.jsonl")
    else:
        assert not os.path.exists(os.path.join(r, "result_stats.jsonl"))
    sd = json.load(open(os.path.join(_job(d), "summary.json")))
    sr = json.load(open(os.path.join(_job(r), "summary.json")))
    assert (sr["rows_in"], sr["rows_out"]) == (sd["rows_in"], sd["rows_out"])
    assert [(o["name"], o["rows_in"], o["rows_out"]) for o in sr["ops"]] == \
        [(o["name"], o["rows_in"], o["rows_out"]) for o in sd["ops"]]
    assert {"recipe.yaml", "cli.yaml", "logs", "summary.json"} <= set(os.listdir(_job(r)))


DEDUP_ROWS = [{"id": i, "text": t} for i, t in enumerate(
    ["Same text", "same text", "Same text", "other", "Other", "Same text!", "other"])]


@pytest.mark.parametrize("process", [
    [{"document_deduplicator": None}],
    [{"random_selector": {"select_num": 5}}, {"document_deduplicator": None}],
    [{"document_deduplicator": None}, {"document_deduplicator": {"lowercase": True}}],
    [{"document_deduplicator": {"ignore_non_character": True, "lowercase": True}}],
    [{"document_simhash_deduplicator": None}],
    [{"document_minhash_deduplicator": None}],
])
# the sharded-actor path (3 s a recipe) runs in the slow target; tests/ray/test_ray_ops_parity.py runs it once
@pytest.mark.parametrize("actors", [pytest.param(True, marks=pytest.mark.slow), False])
def test_dedup_and_selectors_keep_the_same_samples(run_both, process, actors, monkeypatch):
    from data_juicer.ops.deduplicator.document_deduplicator import DocumentDeduplicator

    monkeypatch.setattr(DocumentDeduplicator, "ray_actor_min_rows", 0 if actors else 10**9)
    d, r = run_both(DEDUP_ROWS * 3, process, np=2)
    assert _read(r) == _read(d)


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_selector_order_and_parquet_export(run_both, suffix):
    rows = [{"id": i, "text": f"text {i}", "score": s} for i, s in enumerate([3, 9, 1, 7, 5])]
    process = [{"topk_specified_field_selector": {"field_key": "score", "topk": 3}},
               {"text_length_filter": {"min_len": 1}}]
    d, r = run_both(rows, process, suffix=suffix, keep_stats_in_res_ds=True)
    assert _read(r, f"result.{suffix}") == _read(d, f"result.{suffix}")
    assert [x["score"] for x in _read(r, f"result.{suffix}")] == [9, 7, 5]
    assert _bytes(r, "result_stats.jsonl") == _bytes(d, "result_stats.jsonl")


def test_many_blocks_keep_order_and_shards(run_both, monkeypatch):
    from data_juicer.ops.deduplicator.document_deduplicator import DocumentDeduplicator

    monkeypatch.setattr(DocumentDeduplicator, "ray_actor_min_rows", 0)
    rows = [{"id": i, "text": f"sample {i} " + "word " * (i % 17)} for i in range(3000)]
    process = [{"words_num_filter": {"min_num": 5}}, {"document_deduplicator": None},
               {"clean_email_mapper": None}]
    d, r = run_both(rows, process, export_shard_size=20000, override_num_blocks=7)
    names = sorted(f for f in os.listdir(d) if f.endswith(".jsonl"))
    assert sorted(f for f in os.listdir(r) if f.endswith(".jsonl")) == names and len(names) > 3
    for n in names:
        assert _bytes(r, n) == _bytes(d, n)


def test_failing_samples_go_to_the_same_ledger(run_both, tmp_path):
    op_file = tmp_path / "my_ops.py"
    op_file.write_text(CUSTOM_OP)
    d, r = run_both(FAIL_ROWS, [{"explode_on_marker_mapper": None}, {"text_length_filter": {"min_len": 12}}],
                    custom_operator_paths=[str(op_file)])
    assert _read(r) == _read(d) and [x["id"] for x in _read(r)] == ["s0", "s2"]
    ld = read_jsonl(os.path.join(_job(d), "errors.jsonl"))
    lr = read_jsonl(os.path.join(_job(r), "errors.jsonl"))
    key = lambda e: e["index"]  # noqa: E731
    assert sorted(lr, key=key) == sorted(ld, key=key)
    assert json.load(open(os.path.join(_job(r), "summary.json")))["errors_by_op"] == {"explode_on_marker_mapper": 2}


def test_skip_op_error_false_stops_naming_op_and_sample(make_recipe, tmp_path, capsys, ray_local):
    op_file = tmp_path / "my_ops.py"
    op_file.write_text(CUSTOM_OP)
    recipe = make_recipe(FAIL_ROWS, [{"explode_on_marker_mapper": None}], custom_operator_paths=[str(op_file)],
                         skip_op_error=False, executor_type="ray")
    assert main(["--config", recipe]) == 1
    err = capsys.readouterr().err
    assert "operator 'explode_on_marker_mapper' failed on sample id='s1'" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out" / "result.jsonl").exists()


@pytest.mark.parametrize("process", [
    [{"naive_grouper": None}, {"naive_reverse_grouper": None}],
    [{"text_length_filter": None}, {"key_value_grouper": {"group_by_keys": ["meta.lang"]}},
     {"naive_reverse_grouper": None},
     {"words_num_filter": {"min_num": 1}}],
    [{"key_value_grouper": {"group_by_keys": ["meta.lang"]}}],
])
def test_groupers_run_on_ray_with_the_default_output(run_both, process):
    rows = [{"id": i, "text": f"text number {i} " * (1 + i % 3), "meta": {"lang": ["en", "zh", "fr"][i % 3]}}
            for i in range(40)]
    d, r = run_both(rows, process, keep_stats_in_res_ds=True)
    assert _read(r) == _read(d) and len(_read(d)) > 0


def test_ops_that_cannot_run_on_ray_fail_at_validation(make_recipe, tmp_path, capsys):
    recipe = make_recipe(ROWS, [{"text_length_filter": None}, {"lineage_stage": None}, {"clean_email_mapper": None}],
                         executor_type="ray", dataset_path=str(tmp_path / "not_read_yet.jsonl"))
    (tmp_path / "not_read_yet.jsonl").write_text("this is not json\n")
    from data_juicer.ops.registry import OPERATORS

    cls = OPERATORS.get("clean_email_mapper")
    old = cls.exec_modes
    cls.exec_modes = ("default",)
    try:
        assert main(["--config", recipe, "--dry_run"]) == 2  # the dry run rejects it too
        assert main(["--config", recipe]) == 2
    finally:
        cls.exec_modes = old
    err = capsys.readouterr().err
    assert "operator 'clean_email_mapper' (mapper) cannot run with executor_type 'ray'" in err
    assert "executor_type: default" in err and "process[2]" in err
    assert not (tmp_path / "out").exists()  # nothing read, no job folder


def test_csv_parquet_and_relative_media_paths(run_both, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [{"id": i, "text": f"text {i} <__dj__image>", "images": [f"img/{i}.jpg", "/abs/x.jpg"]} for i in range(5)]
    src = tmp_path / "src"
    os.makedirs(src)
    pq.write_table(pa.Table.from_pylist(rows), src / "data.parquet")
    d, r = run_both(None, [{"text_length_filter": {"min_len": 3}}], dataset_path=str(src / "data.parquet"))
    out = _read(r)
    assert out == _read(d)
    assert out[0]["images"] == [str(src / "img" / "0.jpg"), "/abs/x.jpg"]
    (src / "data.csv").write_text("id,text,score\n1,hello there,3\n2,,4\n3,\"quoted, text\",\n")
    d, r = run_both(None, [{"text_length_filter": {"min_len": 1}}], dataset_path=str(src / "data.csv"))
    assert _read(r) == _read(d)


def test_weighted_mix_goes_through_the_default_loader(run_both, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", [{"id": i, "text": f"a text {i}"} for i in range(20)])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": 100 + i, "text": f"b text {i}"} for i in range(20)])
    d, r = run_both(None, [{"text_length_filter": {"min_len": 1}}],
                    dataset={"configs": [{"type": "local", "path": a, "weight": 1.0},
                                         {"type": "local", "path": b, "weight": 3.0}], "max_sample_num": 12})
    assert _read(r) == _read(d) and len(_read(r)) == 12


def test_the_adapter_runs_on_ray_with_the_default_output(run_both):
    rows = [{"id": i, "text": " ".join(["word"] * (i % 9) + [f"w{i}"] * (i % 4))} for i in range(200)]
    process = [{"words_num_filter": {"min_num": 3}}, {"word_repetition_filter": {"rep_len": 1, "max_ratio": 0.9}},
               {"text_length_filter": {"min_len": 5}}, {"clean_email_mapper": None}]
    d, r = run_both(rows, process, op_fusion=True, adaptive_batch_size=True, keep_stats_in_res_ds=True)
    assert _read(r) == _read(d) and 0 < len(_read(d)) < 200
    assert _bytes(r, "result_stats.jsonl") == _bytes(d, "result_stats.jsonl")
    probe = [p for p in os.listdir(r) if os.path.isdir(os.path.join(r, p)) and
             os.path.exists(os.path.join(r, p, "probe.json"))]
    assert probe, "the adapter probed the data on Ray"
    summary = json.load(open(os.path.join(r, probe[0], "summary.json")))
    assert any(o["name"].startswith("OpFusion:(") for o in summary["ops"])


def test_ray_partitioned_is_refused_clearly(make_recipe, capsys):
    assert main(["--config", make_recipe(ROWS, [], executor_type="ray_partitioned")]) == 2
    assert "use 'default' or 'ray'" in capsys.readouterr().err


def test_more_gpus_than_the_cluster_has_is_a_clear_error(make_recipe, capsys, ray_local):
    recipe = make_recipe(ROWS, [{"text_length_filter": {"num_gpus": 64}}], executor_type="ray")
    assert main(["--config", recipe]) == 2
    err = capsys.readouterr().err
    assert "num_gpus=64" in err and "GPUs" in err


def test_lineage_stage_runs_on_ray_with_the_default_output(run_both):
    rows = [{"id": i, "text": "\n\n".join(" ".join(["word"] * ((i + j) % 6)) + f" p{j}" for j in range(1 + i % 4))}
            for i in range(30)]
    process = [{"lineage_stage": {"expand": "paragraphs",
                                  "child_ops": [{"words_num_filter": {"min_num": 3}}, {"clean_email_mapper": None}]}},
               {"text_length_filter": {"min_len": 1}}]
    d, r = run_both(rows, process)
    out = _read(d)
    assert _read(r) == out and 0 < len(out) < 30
    assert all(isinstance(x["children"], list) and x["children"] for x in out)


def test_batches_whose_rows_are_all_dropped(run_both):
    # batches of 5 where every row of some batches is dropped: an empty batch's error column is null-typed
    rows = [{"id": i, "text": ("long enough text " * 3) if (i // 5) % 2 else "x"} for i in range(40)]
    d, r = run_both(rows, [{"text_length_filter": {"min_len": 10, "batch_size": 5}}, {"clean_email_mapper": None}])
    assert _read(r) == _read(d) and [x["id"] for x in _read(d)] == [i for i in range(40) if (i // 5) % 2]
