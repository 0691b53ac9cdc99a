import json
import os

import pytest
import yaml


@pytest.fixture(autouse=True)
def _isolated_hf_cache(tmp_path_factory, monkeypatch):
    # keep Hugging Face datasets' cache files out of the user's home during tests
    cache = tmp_path_factory.getbasetemp() / "hf-cache"
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    import datasets.config

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)


def write_jsonl(path, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return str(path)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture
def make_recipe(tmp_path):
    """Write data + recipe under tmp_path; return the recipe path."""

    def _make(rows=None, process=None, data_name="data.jsonl", **globals_):
        cfg = {"project_name": "t", "np": 1, "export_path": str(tmp_path / "out" / "result.jsonl")}
        if rows is not None:
            cfg["dataset_path"] = write_jsonl(tmp_path / data_name, rows)
        cfg["process"] = process if process is not None else []
        cfg.update(globals_)
        path = tmp_path / "recipe.yaml"
        path.write_text(yaml.safe_dump(cfg, allow_unicode=True))
        return str(path)

    return _make
