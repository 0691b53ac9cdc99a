"""HF backend: a pass of media ops over fewer rows than its batch size still uses the np workers
(our pool hands out small chunks: media rows cost seconds each; with the pool off, one batch per
worker); a text pass that small stays in-process."""
import datasets
import pytest
from PIL import Image

from data_juicer.cli.process import main
from tests.conftest import read_jsonl


@pytest.fixture
def map_calls(monkeypatch):
    calls = []
    real = datasets.Dataset.map

    def spy(self, *args, **kwargs):
        calls.append((kwargs.get("num_proc"), kwargs.get("batch_size"), self.num_rows))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(datasets.Dataset, "map", spy)
    return calls


@pytest.fixture
def pool_calls(monkeypatch):
    from data_juicer.core.backends import hf_pool

    calls = []
    real = hf_pool.pool_map

    def spy(ds, fn, **kwargs):
        calls.append((kwargs["num_proc"], kwargs["chunk_rows"], ds.num_rows))
        return real(ds, fn, **kwargs)

    monkeypatch.setattr(hf_pool, "pool_map", spy)
    return calls


def _rows(tmp_path):
    rows = []
    for i, (w, h) in enumerate([(40, 10), (20, 20), (10, 40), (30, 20), (12, 10)]):
        p = tmp_path / f"im{i}.png"
        Image.new("RGB", (w, h), (i * 40, 0, 0)).save(p)
        rows.append({"text": f"picture {i}", "images": [str(p)]})
    return rows


def test_media_pass_smaller_than_batch_uses_both_workers(tmp_path, make_recipe, pool_calls):
    recipe = make_recipe(rows=_rows(tmp_path), np=2, use_cache=False,
                         process=[{"image_aspect_ratio_filter": {"min_ratio": 0.5, "max_ratio": 2.0}}])
    assert main(["--config", recipe]) == 0
    assert pool_calls == [(2, 1, 5)]  # 5 rows, 2 workers: chunks of one row, taken as workers free up
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["text"] for r in out] == ["picture 1", "picture 3", "picture 4"]


def test_media_pass_without_pool_one_batch_per_worker(tmp_path, make_recipe, map_calls, monkeypatch):
    monkeypatch.setenv("DJ_HF_POOL", "0")
    recipe = make_recipe(rows=_rows(tmp_path), np=2, use_cache=False,
                         process=[{"image_aspect_ratio_filter": {"min_ratio": 0.5, "max_ratio": 2.0}}])
    assert main(["--config", recipe]) == 0
    assert (2, 3, 5) in map_calls  # 5 rows, 2 workers: batches of 3
    out = read_jsonl(tmp_path / "out" / "result.jsonl")
    assert [r["text"] for r in out] == ["picture 1", "picture 3", "picture 4"]


def test_text_pass_that_small_stays_in_process(tmp_path, make_recipe, map_calls):
    recipe = make_recipe(rows=_rows(tmp_path), np=2, use_cache=False,
                         process=[{"text_length_filter": {"min_len": 1}}])
    assert main(["--config", recipe]) == 0
    assert (None, 1000, 5) in map_calls
    assert not any(c[0] for c in map_calls)
