"""Analysis: the statistics of every filter in a recipe, computed without dropping anything.

Uses the filters' own ``compute_stats`` (the code ``dj-process`` runs), in one pass, and writes
``<export stem>_stats.jsonl`` and ``<job folder>/analysis/overall.{csv,md}`` (pandas ``describe``
per stat, list-valued stats exploded, as Data-Juicer does).
"""

import os
import shutil
from typing import Optional

from loguru import logger

from data_juicer.config.recipe import Recipe
from data_juicer.core.executor import DefaultExecutor, Stage
from data_juicer.ops.base import OP, Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import PREFIX, Fields

DEFAULT_PERCENTILES = (0.25, 0.5, 0.75)


class StatsOnly(OP):
    """Runs a filter's scoring and keeps every sample."""

    def __init__(self, op: Filter):
        self.op = op
        self.skip_op_error = op.skip_op_error
        self.batch_size = op.batch_size
        self.num_proc = op.num_proc

    @property
    def name(self) -> str:
        return self.op.name

    @property
    def uses(self):
        return self.op.uses

    def run_batch(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        stats = samples.get(Fields.stats)
        samples[Fields.stats] = [{} for _ in range(n)] if stats is None else [s or {} for s in stats]
        if self.op.uses:
            return self.op.compute_stats_batched(samples, context=Fields.context in samples)
        return self.op.compute_stats_batched(samples)

    @property
    def is_row_wise(self) -> bool:
        return True


def auto_filters() -> list[Filter]:
    """Every registered filter that can be built with its defaults and needs no model."""
    ops = []
    for name, cls in OPERATORS.items():
        if not issubclass(cls, Filter) or cls.requires:
            continue
        try:
            ops.append(cls())
        except Exception as e:  # defaults that need a model or a field: skip in auto mode
            logger.debug(f"auto analysis skips {name}: {e}")
    return ops


def overall(stats_rows: list[dict], percentiles: list[float]):
    import pandas as pd

    frame = pd.DataFrame([s or {} for s in stats_rows])
    cols = {}
    for name in frame.columns:
        col = frame[name]
        if col.dtype == "object":
            valid = col.dropna()
            if valid.empty:
                continue
            first = valid.iloc[0]
            if isinstance(first, list):
                col = col.explode().infer_objects()
            elif not isinstance(first, str):
                continue
        cols[name] = col.describe(percentiles=sorted(set(percentiles) | set(DEFAULT_PERCENTILES)))
    return pd.DataFrame(cols)


class Analyzer(DefaultExecutor):
    def __init__(self, recipe: Recipe, auto: bool = False, auto_num: Optional[int] = None):
        super().__init__(recipe)
        self.auto = auto
        self.auto_num = auto_num
        self.analysis_dir = os.path.join(self.job_dir, "analysis")

    def run(self):
        import datasets

        if not self.cfg["use_cache"]:
            datasets.disable_caching()
        ops = auto_filters() if self.auto else [op for op in self._build_ops() if isinstance(op, Filter)]
        if not ops:
            logger.warning("the recipe has no filter: there are no statistics to compute")
        ds = self._load()
        if self.auto and self.auto_num:
            ds = ds.select(range(min(self.auto_num, ds.num_rows)))
        wrapped = [StatsOnly(op) for op in ops]
        if wrapped:
            from data_juicer.core.executor import OpReport

            reports = {id(w): OpReport(w.name) for w in wrapped}
            ds = self._run_row_stage(Stage(wrapped, row_wise=True), ds, reports)
        shutil.rmtree(os.path.join(self.job_dir, ".counters"), ignore_errors=True)
        from data_juicer.core.exporter import stats_path_for, write_jsonl, export_format

        fmt = export_format(self.cfg["export_path"], self.cfg.get("export_type"))
        stats_file = stats_path_for(self.cfg["export_path"], fmt)
        os.makedirs(os.path.dirname(os.path.abspath(stats_file)), exist_ok=True)
        if ds._indices is not None:
            ds = ds.flatten_indices()
        table = ds.data.table
        keep = [c for c in (Fields.stats, Fields.meta) if c in table.column_names]
        if keep:
            write_jsonl(table.select(keep), stats_file)
        os.makedirs(self.analysis_dir, exist_ok=True)
        stats_rows = table.column(Fields.stats).to_pylist() if Fields.stats in table.column_names else []
        if Fields.meta in table.column_names:  # only __dj__-prefixed meta keys, as Data-Juicer does
            metas = table.column(Fields.meta).to_pylist()
            stats_rows = [dict(s or {}, **{k: v for k, v in (m or {}).items() if k.startswith(PREFIX)})
                          for s, m in zip(stats_rows or [{}] * len(metas), metas)]
        result = overall(stats_rows, list(self.cfg.get("percentiles") or []))
        result.to_csv(os.path.join(self.analysis_dir, "overall.csv"))
        with open(os.path.join(self.analysis_dir, "overall.md"), "w", encoding="utf-8") as f:
            f.write(result.to_markdown() if _has_tabulate() else result.to_string())
        if self._log_sink is not None:
            logger.remove(self._log_sink)
        return stats_file, self.analysis_dir, result


def _has_tabulate() -> bool:
    import importlib.util

    return importlib.util.find_spec("tabulate") is not None
