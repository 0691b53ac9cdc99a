"""use_cache: a rerun loads finished passes from the datasets cache; cache_compress packs them."""
import glob
import gzip
import json
import os
import textwrap

import yaml

from data_juicer.cli.process import main as dj_process

OPS = textwrap.dedent('''
    import os

    from data_juicer.ops.base import Mapper
    from data_juicer.ops.registry import OPERATORS


    @OPERATORS.register_module("count_calls_mapper")
    class CountCallsMapper(Mapper):
        """Upper-cases the text and notes each batch it sees in a file (to tell reuse from recompute)."""

        def process_batched(self, samples):
            with open(os.environ["DJ_TEST_CALLS"], "a") as f:
                f.write(f"{len(samples[self.text_key])}\\n")
            samples[self.text_key] = [t.upper() for t in samples[self.text_key]]
            return samples
''')


def _setup(tmp_path, **extra):
    with gzip.open(tmp_path / "data.jsonl.gz", "wt") as f:  # compressed input: loaded into the datasets cache
        for i in range(60):
            f.write(json.dumps({"id": i, "text": f"sample {i} " + "words " * (i % 7)}) + "\n")
    (tmp_path / "ops.py").write_text(OPS)
    cfg = {"dataset_path": str(tmp_path / "data.jsonl.gz"), "np": 1, "use_cache": True,
           "ds_cache_dir": str(tmp_path / "hf_cache"), "custom_operator_paths": [str(tmp_path / "ops.py")],
           "process": [{"count_calls_mapper": None}, {"text_length_filter": {"min_len": 12}},
                       {"document_deduplicator": None}]}
    cfg.update(extra)
    return cfg


def _run(tmp_path, cfg, name, monkeypatch):
    cfg = dict(cfg, export_path=str(tmp_path / name / "out.jsonl"))
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    calls = tmp_path / f"{name}.calls"
    monkeypatch.setenv("DJ_TEST_CALLS", str(calls))
    assert dj_process(["--config", str(path)]) == 0
    return (tmp_path / name / "out.jsonl").read_text(), calls.read_text().split() if calls.exists() else []


def test_rerun_reuses_cached_passes(tmp_path, monkeypatch):
    cfg = _setup(tmp_path)
    first, calls1 = _run(tmp_path, cfg, "a", monkeypatch)
    assert calls1 and first.count("\n") > 0 and "SAMPLE" in first
    second, calls2 = _run(tmp_path, cfg, "b", monkeypatch)
    assert second == first
    assert calls2 == []  # nothing recomputed
    # a changed parameter is a different pass: computed again
    cfg["process"][1]["text_length_filter"]["min_len"] = 20
    third, calls3 = _run(tmp_path, cfg, "c", monkeypatch)
    assert calls3 and third != first


def test_cache_compress_packs_passes_and_restores_them(tmp_path, monkeypatch):
    cfg = _setup(tmp_path, cache_compress="zstd")
    first, calls1 = _run(tmp_path, cfg, "a", monkeypatch)
    packed = glob.glob(str(tmp_path / "hf_cache" / "**" / "cache-*.arrow.zst"), recursive=True)
    plain = glob.glob(str(tmp_path / "hf_cache" / "**" / "cache-*.arrow"), recursive=True)
    assert packed and not plain
    second, calls2 = _run(tmp_path, cfg, "b", monkeypatch)
    assert second == first and calls2 == []
    assert os.path.getsize(packed[0]) > 0


def test_a_run_without_cache_does_not_turn_it_off_for_the_next_run_in_the_process(tmp_path, monkeypatch):
    off = _setup(tmp_path, use_cache=False)
    _run(tmp_path, off, "off", monkeypatch)  # datasets.disable_caching() is process-wide
    cfg = _setup(tmp_path)
    first, calls1 = _run(tmp_path, cfg, "a", monkeypatch)
    second, calls2 = _run(tmp_path, cfg, "b", monkeypatch)
    assert calls1 == ["60"] and second == first
    assert calls2 == []  # the use_cache: true runs after it still reuse their passes
