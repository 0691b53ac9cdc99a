"""Analysis: the statistics of every filter in a recipe, computed without dropping anything.

The stats come from the filters' own ``compute_stats`` (the code ``dj-process`` runs), in one
fused pass over ``np`` workers. Written, as Data-Juicer 1.6.1's ``dj-analyze`` does:

- ``<export stem>_stats.jsonl`` next to the export path;
- ``<job folder>/analysis/overall.csv`` and ``overall.md`` (pandas ``describe`` per stat);
- ``<stat>-hist.png``, ``<stat>-box.png`` (numeric), ``<stat>-hist.png`` + ``<stat>-topk.png``
  (strings), ``stats-corr-pearson.png``, and ``all-stats.png`` when ``save_stats_in_one_file``;

and beyond it ``analysis/report.html``: one self-contained page with every plot, a table per stat,
the recipe, and what each filter threshold would drop (decided by the filter's ``process_batched``).
"""

import os
import sys
import time
from typing import Optional, Sequence, Union

from loguru import logger

from data_juicer.core.executor import Executor, Stage
from data_juicer.core.job import OpReport
from data_juicer.ops.base import OP, Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields


class FilterStatsError(RuntimeError):
    """A filter failed while scoring a sample in the analysis pass (names the filter)."""


class StatsOnly(OP):
    """Runs the scoring (``compute_stats``) of one or more filters, in order, and keeps every sample.

    All the filters of an analysis share one ``StatsOnly`` in one pass, so the pass does its
    per-op bookkeeping (the clean copy kept for ``skip_op_error`` retries) once, not per filter.
    """

    def __init__(self, op: Union[Filter, Sequence[Filter]]):
        self.filters = [op] if isinstance(op, Filter) else list(op)
        if not self.filters:
            raise ValueError("StatsOnly needs at least one filter")
        self.op = self.filters[0]
        self.skip_op_error = all(f.skip_op_error for f in self.filters)
        self.batch_size = min(f.batch_size for f in self.filters)
        procs = [f.num_proc for f in self.filters if f.num_proc and f.num_proc > 0]
        self.num_proc = min(procs) if procs else None

    def __getattr__(self, item):  # resources, accelerator, ...: the (first) wrapped filter's
        if item in ("op", "filters"):
            raise AttributeError(item)
        return getattr(self.op, item)

    @property
    def name(self) -> str:
        return " + ".join(f.name for f in self.filters)

    @property
    def init_params(self) -> dict:  # the pass cache must never mix this pass with the filters' real ones
        return {"__stats_only__": [[f.name, f.init_params] for f in self.filters]}

    @property
    def uses(self):
        return tuple(dict.fromkeys(u for f in self.filters for u in f.uses))

    def run_batch(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        stats = samples.get(Fields.stats)
        samples[Fields.stats] = [{} for _ in range(n)] if stats is None else [s or {} for s in stats]
        for f in self.filters:
            try:
                out = f.score_batch(samples)
            except Exception as e:
                if len(self.filters) == 1:
                    raise
                raise FilterStatsError(f"{f.name}: {type(e).__name__}: {e}") from e
            samples = out if out is not None else samples
        return samples

    @property
    def is_row_wise(self) -> bool:
        return True


def auto_filters() -> list[Filter]:
    """Every registered text filter that can be built with its defaults and needs no model (nor a model
    service: the LLM filters), as the auto mode's text data has no media."""
    from data_juicer.models.llm.op_params import LLMOpMixin

    ops = []
    for name, cls in OPERATORS.items():
        if not issubclass(cls, Filter) or cls.requires or cls.uses_model or issubclass(cls, LLMOpMixin) \
                or cls.modality not in ("text", "general"):
            continue
        try:
            ops.append(cls())
        except Exception as e:  # defaults that need a model or a field: skip in auto mode
            logger.debug(f"auto analysis skips {name}: {e}")
    return ops


_WARM_TEXTS = ("Warm up the filters with a text of more than sixty-four characters, twice over. " * 3,
               "A second text, so that batch paths (more than one long text) run too. " * 3)


def warm_up(filters: Sequence[Filter]) -> None:
    """Score two synthetic texts with each text filter here, before the pass forks its workers, so
    what the filters load on first use (compiled kernels, e.g. numba's, lazy imports) is loaded once
    and shared by the forked workers instead of once in each. Failures are ignored: the pass itself
    reports them on the real data."""
    for f in filters:
        key = getattr(f, "text_key", None)
        if f.modality != "text" or not key:
            continue
        batch = {key: list(_WARM_TEXTS), Fields.stats: [{} for _ in _WARM_TEXTS]}
        if f.uses:
            batch[Fields.context] = [{} for _ in _WARM_TEXTS]
        try:
            f.score_batch(batch)
        except Exception as e:  # noqa: BLE001 - only a warm-up
            logger.debug(f"warm-up of {f.name} skipped: {type(e).__name__}: {e}")


def overall(stats_rows: list[dict], percentiles: list[float]):
    """``describe`` table of plain stats rows (dicts), for callers that hold rows, not a table."""
    import pyarrow as pa

    from data_juicer.analysis.columns import stat_columns
    from data_juicer.analysis.overall import overall_table

    table = pa.table({Fields.stats: pa.array([s or {} for s in stats_rows])})
    return overall_table(stat_columns(table), percentiles)


def _import_plotting() -> None:
    """matplotlib's Agg canvas and Figure, imported ahead (when installed), so the plotting workers forked
    after the pass share it."""
    from data_juicer.utils.lazy import is_available

    if is_available("matplotlib"):
        try:
            from data_juicer.analysis import plots

            plots.require_matplotlib()
        except Exception as e:  # noqa: BLE001 - draw() reports it
            logger.debug(f"matplotlib not imported ahead: {type(e).__name__}: {e}")


_PLOT_JOB = None  # (plots module, columns, folder, bounds) for the forked plotting workers


def _draw_one(i: int) -> dict:
    P, columns, folder, bounds = _PLOT_JOB
    col = columns[i]
    return P.draw_column(col, folder, bounds.get(col.name))


def _progress(iterable, desc: str, total: Optional[int] = None):
    if not sys.stderr.isatty():
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total)


class Analyzer(Executor):
    """``dj-analyze``: the executor with a plan of one stage (every filter's scoring, nothing
    dropped), on the recipe's backend, then the analyses on the driver."""

    def __init__(self, recipe, auto: bool = False, auto_num: Optional[int] = None):
        super().__init__(recipe)
        self.auto = auto
        self.auto_num = auto_num
        self.analysis_dir = os.path.join(self.job_dir, "analysis")
        self.report_path: Optional[str] = None
        self.drops = []
        self.plot_files: list[str] = []
        self.np = self.backend.workers

    def run(self):
        try:
            self.backend.start()
            self.np = self.backend.workers
            return self._analyse_run()
        finally:
            self.backend.stop()
            self.job.close()

    def _stats_ops(self) -> tuple[list[Filter], Optional[list[dict]]]:
        if self.auto:
            return auto_filters(), None
        ops, given = [], []
        for spec, op in zip(self.recipe.ops, self.build_ops()):
            if isinstance(op, Filter):
                ops.append(op)
                given.append(dict(spec.given))
        return ops, given

    def plan(self, ops: list[OP]) -> list[Stage]:
        return [Stage([StatsOnly(ops)], row_wise=True)] if ops else []

    def _load_and_build(self):
        """(the dataset, the filters, their given params). With one plain input file on the default backend,
        the load (pyarrow's JSON reader: most of it outside the GIL) runs in a thread while this one builds
        the filters (their compiled kernels) and imports matplotlib for the plots, so the two overlap on
        two cores; a load that may fork (several files, a dataset config) runs alone, first."""
        r = self.recipe
        path = str(r.dataset_path or "")
        if self.backend.name != "default" or r.dataset_config or not os.path.isfile(path):
            ds = self.backend.load()
            ops, given = self._stats_ops()
            return ds, ops, given
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1, thread_name_prefix="dj-load") as pool:  # joined before the pass forks
            loading = pool.submit(self.backend.load)
            try:
                ops, given = self._stats_ops()
                if ops:
                    _import_plotting()
            finally:
                ds = loading.result()
        return ds, ops, given

    def _analyse_run(self):
        t0 = time.time()
        ds, ops, given = self._load_and_build()
        if not ops:
            logger.warning("the recipe has no filter: there are no statistics to compute")
        if self.auto and self.auto_num:
            ds = self.backend.first(ds, self.auto_num)
        stages = self.plan(ops)
        if ops and self.backend.name == "default" and self.np > 1:
            warm_up(ops)  # the pass forks its workers from here
        t = time.time()
        reports = {id(op): OpReport(op.name) for s in stages for op in s.ops}
        ds = self._execute(stages, ds, reports)
        if ops:
            logger.info(f"stats of {len(ops)} filters on {self.backend.num_rows(ds)} samples in {time.time() - t:.2f}s")
        from data_juicer.core.exporter import export_format, stats_path_for, write_jsonl

        fmt = export_format(self.recipe.export_path, self.recipe.export_type)
        stats_file = stats_path_for(self.recipe.export_path, fmt)
        os.makedirs(os.path.dirname(os.path.abspath(stats_file)), exist_ok=True)
        table = self.backend.columns(ds, (Fields.stats, Fields.meta))

        def export():  # written while the plotting workers draw (see analyse)
            if table.num_columns:
                t = time.time()
                write_jsonl(table, stats_file)
                logger.info(f"stats written to {stats_file} in {time.time() - t:.2f}s")

        result = self.analyse(table, ops, given, t0, ds, export=export)
        return stats_file, self.analysis_dir, result

    def _first_sample(self, ds) -> Optional[dict]:
        return self.backend.first_row(ds, exclude=(Fields.stats, Fields.meta))

    # -- the analyses ----------------------------------------------------------------------
    def analyse(self, table, ops: list[Filter], given: Optional[list[dict]], t0: float, ds=None, export=None):
        """The analyses of the stats ``table``; ``export()`` (the stats file), the overall table and the
        whole-dataset plots run here while forked workers draw the per-stat plots."""
        from data_juicer.analysis.columns import stat_columns
        from data_juicer.analysis.overall import overall_table, write_overall
        from data_juicer.analysis.thresholds import drop_rates

        os.makedirs(self.analysis_dir, exist_ok=True)
        columns = stat_columns(table)
        overall_result = []

        def the_overall():
            if export is not None:
                export()
            t = time.time()
            overall_result.append(overall_table(columns, list(self.recipe.percentiles)))
            write_overall(overall_result[0], self.analysis_dir)
            logger.info(f"overall analysis of {len(columns)} stats in {time.time() - t:.2f}s")

        t = time.time()
        combined = None
        if ops and Fields.stats in table.column_names:
            stats_rows = table.column(Fields.stats).to_pylist()
            sample = self._first_sample(ds) if ds is not None else None
            self.drops, combined = drop_rates(ops, stats_rows, given, sample)
            for d in self.drops:
                logger.info(d.sentence())
        logger.info(f"threshold analysis in {time.time() - t:.2f}s")

        plots, corr_plot, all_plot = self.draw(columns, before=the_overall)
        if not overall_result:  # not run by draw (no columns, or no matplotlib)
            the_overall()
        result = overall_result[0]
        self.report_path = os.path.join(self.analysis_dir, "report.html")
        from data_juicer.analysis.report import write_report

        write_report(self.report_path, columns=columns, overall=result, plots=plots, drops=self.drops,
                     combined_keep=combined, n_samples=table.num_rows, corr_plot=corr_plot, all_plot=all_plot,
                     recipe_text=self._recipe_text(), dataset=str(self.recipe.dataset_path or ""),
                     seconds=time.time() - t0)
        logger.info(f"report: {self.report_path}")
        return result

    def draw(self, columns, before=None):
        """Every plot; ``before()`` runs here first, while the forked workers (if any) draw the per-stat
        plots (it is not run when there is nothing to draw)."""
        from data_juicer.utils.lazy import MissingDependencyError, is_available

        plots, corr_plot, all_plot = {}, None, None
        if not columns:
            return plots, corr_plot, all_plot
        if not is_available("matplotlib"):
            logger.warning("matplotlib is not installed: no plots (pip install matplotlib, "
                           "or the 'analysis' extra)")
            return plots, corr_plot, all_plot
        from data_juicer.analysis import plots as P

        t = time.time()
        bounds = {}
        for d in self.drops:
            if len(d.stat_keys) == 1 and d.bounds():
                bounds.setdefault(d.stat_keys[0], {}).update(d.bounds())
        try:
            def whole_dataset_plots():
                if before is not None:
                    before()
                corr = P.draw_correlation(P.correlation(columns),
                                          os.path.join(self.analysis_dir, "stats-corr-pearson.png"))
                one = None
                if self.recipe.save_stats_in_one_file:
                    one = P.draw_all_in_one(columns, os.path.join(self.analysis_dir, "all-stats.png"), bounds)
                return corr, one

            plots, (corr_plot, all_plot) = self._draw_columns(P, columns, bounds, whole_dataset_plots)
        except MissingDependencyError as e:
            logger.warning(f"no plots: {e}")
        self.plot_files = [p for d in plots.values() for p in d.values()] + [p for p in (corr_plot, all_plot) if p]
        logger.info(f"{len(self.plot_files)} plots in {time.time() - t:.2f}s")
        return plots, corr_plot, all_plot

    def _draw_columns(self, P, columns, bounds: dict, also):
        """Per-stat figures, over ``np`` forked processes when there are several stats, while ``also()``
        draws here; returns (per-stat paths, what ``also`` returned)."""
        workers = min(self.np, len(columns))
        if workers > 1 and len(columns) >= 4 and sys.platform != "win32":
            import multiprocessing as mp

            global _PLOT_JOB
            P.require_matplotlib()  # imported once here, shared by the forked workers
            _PLOT_JOB = (P, columns, self.analysis_dir, bounds)
            pool = pending = None
            try:
                try:
                    from data_juicer.utils.forking import child_default_sigterm, sigterm_held

                    with sigterm_held():  # terminate() must end a worker that has not started yet too
                        pool = mp.get_context("fork").Pool(workers, initializer=child_default_sigterm)
                    pending = pool.map_async(_draw_one, range(len(columns)), chunksize=1)
                except Exception as e:  # noqa: BLE001 - never fail the analysis over parallel drawing
                    logger.warning(f"parallel plotting failed ({type(e).__name__}: {e}); drawing in one process")
                if pending is not None:
                    other = also()  # meanwhile, here (its errors are its own: they propagate)
                    try:
                        paths = pending.get(timeout=600)
                        return {c.name: p for c, p in zip(columns, paths)}, other
                    except Exception as e:  # noqa: BLE001 - draw the per-stat plots here instead
                        logger.warning(f"parallel plotting failed ({type(e).__name__}: {e}); drawing in one process")
                    return self._draw_here(P, columns, bounds), other
            finally:
                _PLOT_JOB = None
                if pool is not None:
                    pool.terminate()
        return self._draw_here(P, columns, bounds), also()

    def _draw_here(self, P, columns, bounds: dict) -> dict:
        return {col.name: P.draw_column(col, self.analysis_dir, bounds.get(col.name))
                for col in _progress(columns, "Column")}

    def _recipe_text(self) -> str:
        import yaml

        if self.recipe.raw_yaml is not None and not self.auto:
            return self.recipe.raw_yaml
        process = [{op.name: {}} for op in auto_filters()] if self.auto else self.recipe.process
        return yaml.safe_dump({"auto": self.auto, "process": process}, sort_keys=False, allow_unicode=True)


def make_analyzer(recipe, auto: bool = False, auto_num: Optional[int] = None):
    """The analyzer for the recipe's ``executor_type`` (``default`` or ``ray``)."""
    kind = recipe.executor_type
    if kind not in ("default", "ray"):
        from data_juicer.utils.errors import ConfigError

        raise ConfigError(f"executor_type '{kind}' is not available for dj-analyze; use 'default' or 'ray'")
    return Analyzer(recipe, auto=auto, auto_num=auto_num)
