"""The Python API: run a recipe on samples held in memory.

``process(samples, recipe, **overrides)`` runs a recipe on a list of sample dicts and returns the
kept samples; ``analyze(samples, recipe, **overrides)`` returns each sample's filter statistics.
Both go through the same loader, executor and exporter as ``dj-process`` / ``dj-analyze`` (the
samples are written to a temporary jsonl file, the result read back), so a recipe gives the same
output here as on the command line. See docs/python-api.md.

    from data_juicer import process
    kept = process([{"text": "Hello world, again."}, {"text": "x"}],
                   {"process": [{"text_length_filter": {"min_len": 5}}]})
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

import yaml

from data_juicer.utils.errors import ConfigError

__all__ = ["process", "analyze", "ConfigError"]

RecipeLike = Union[Mapping[str, Any], list, str, Path]
# keys the API sets itself: the data goes in and out through its own temporary files
_OWN_KEYS = ("dataset_path", "dataset", "export_path", "work_dir", "checkpoint_dir", "export_shard_size")


def process(samples: Iterable[Mapping[str, Any]], recipe: RecipeLike, *, base_dir: Optional[str] = None,
            errors: Optional[list] = None, **overrides) -> list[dict]:
    """Runs ``recipe`` on ``samples`` and returns the kept samples, in order, as dicts.

    :param samples: the samples, JSON-serialisable dicts (``{"text": ..., "meta": ...}``)
    :param recipe: a recipe: a dict as a recipe YAML file holds it, a path to such a file, or
        just the ``process`` list of ops. Its ``dataset_path``/``export_path``/``work_dir`` are
        ignored (the API uses its own temporary folder); every other global key applies
    :param base_dir: folder that relative media paths (``images``/``audios``/``videos``) are
        resolved against, as ``dj-process`` resolves them against the dataset file's folder
        (default: the current directory). The returned samples hold absolute paths
    :param errors: a list that receives the error-ledger entries (op, sample, error) of the
        samples that failed, when the recipe lets a run go on past them (``skip_op_error``)
    :param overrides: global recipe keys that replace the recipe's, e.g. ``np=1``,
        ``keep_stats_in_res_ds=True`` (keep each sample's ``__dj__stats__``)
    :raises ConfigError: the recipe is not valid (one message naming the key or op)
    """
    return _run("process", samples, recipe, base_dir, errors, overrides)


def analyze(samples: Iterable[Mapping[str, Any]], recipe: RecipeLike, *, base_dir: Optional[str] = None,
            **overrides) -> list[dict]:
    """Computes the statistics of ``recipe``'s filters on ``samples`` without dropping any, as
    ``dj-analyze`` does, and returns one ``__dj__stats__`` dict per sample, in order. Takes the
    same arguments as :func:`process`. Plots and the HTML report are not made (``dj-analyze``
    makes them)."""
    return _run("analyze", samples, recipe, base_dir, None, overrides)


# -- implementation ----------------------------------------------------------------------------
def _recipe_dict(recipe: RecipeLike) -> tuple[dict, str]:
    """(the recipe as a dict, how error messages name it)."""
    if isinstance(recipe, (str, Path)):
        path = str(recipe)
        if not os.path.isfile(path):
            raise ConfigError(f"recipe file '{path}' does not exist")
        with open(path, encoding="utf-8") as f:
            try:
                data = yaml.safe_load(f) or {}
            except yaml.YAMLError as e:
                raise ConfigError(f"{path}: not valid YAML: {e}") from e
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: a recipe is a mapping of keys (project_name, process, ...)")
        return data, path
    if isinstance(recipe, list):
        return {"process": recipe}, "recipe"
    if isinstance(recipe, Mapping):
        return dict(recipe), "recipe"
    raise ConfigError(f"recipe: expected a dict, a list of ops or a path to a YAML file, got {type(recipe).__name__}")


def _absolute_media(sample: dict, keys: tuple, base: str) -> dict:
    for key in keys:
        paths = sample.get(key)
        if isinstance(paths, str):
            paths = [paths]
            sample[key] = [os.path.join(base, paths[0]) if not os.path.isabs(paths[0]) else paths[0]]
        elif isinstance(paths, list):
            sample[key] = [os.path.join(base, p) if isinstance(p, str) and p and not os.path.isabs(p)
                           and "://" not in p else p for p in paths]
    return sample


def _run(kind: str, samples, recipe: RecipeLike, base_dir: Optional[str], errors: Optional[list],
         overrides: dict) -> list[dict]:
    cfg, name = _recipe_dict(recipe)
    cfg.update(overrides)
    for key in _OWN_KEYS:
        cfg.pop(key, None)
    keys = tuple(cfg.get(k) or d for k, d in (("image_key", "images"), ("audio_key", "audios"),
                                               ("video_key", "videos")))
    base = os.path.abspath(base_dir or os.getcwd())
    tmp = tempfile.mkdtemp(prefix=f"dj-{kind}-")
    try:
        data = os.path.join(tmp, "samples.jsonl")
        n = 0
        with open(data, "w", encoding="utf-8") as f:
            for sample in samples:
                if not isinstance(sample, Mapping):
                    raise TypeError(f"sample {n}: expected a dict, got {type(sample).__name__}")
                try:
                    line = json.dumps(_absolute_media(dict(sample), keys, base), ensure_ascii=False)
                except (TypeError, ValueError) as e:
                    raise TypeError(f"sample {n}: samples must be JSON-serialisable dicts ({e})") from None
                f.write(line + "\n")
                n += 1
        if n == 0:
            return []
        cfg.update(dataset_path=data, export_path=os.path.join(tmp, "out", "result.jsonl"),
                   work_dir=os.path.join(tmp, "work"))
        path = os.path.join(tmp, "recipe.yaml")
        with open(path, "w", encoding="utf-8") as f:
            yaml.safe_dump(cfg, f, allow_unicode=True, sort_keys=False)
        try:
            return _execute(kind, path, errors)
        except ConfigError as e:
            raise ConfigError(str(e).replace(path, name)) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _read_jsonl(paths) -> list[dict]:
    rows = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            rows.extend(json.loads(line) for line in f if line.strip())
    return rows


def _execute(kind: str, path: str, errors: Optional[list]) -> list[dict]:
    from data_juicer.config.recipe import load_recipe
    from data_juicer.utils.constant import Fields

    if kind == "analyze":
        from data_juicer.core.analyzer import make_analyzer

        recipe = load_recipe(["--config", path], "dj-analyze", check_paths=True)
        analyzer = make_analyzer(recipe, auto=False, auto_num=recipe.cfg["auto_num"])
        analyzer.draw = lambda columns, before=None: ({}, None, None)  # no plots: they are for the files dj-analyze writes
        stats_file, _, _ = analyzer.run()
        return [row.get(Fields.stats, {}) for row in _read_jsonl([stats_file])]

    from data_juicer.core.executor import Executor

    recipe = load_recipe(["--config", path], "dj-process", check_paths=True)
    report = Executor(recipe).run()
    if errors is not None:
        ledger = os.path.join(report.job_dir, "errors.jsonl")
        if os.path.isfile(ledger):
            errors.extend(_read_jsonl([ledger]))
    return _read_jsonl(report.export_files)

