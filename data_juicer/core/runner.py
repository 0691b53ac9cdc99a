"""One execution pass: a run of row-wise ops applied to each batch in turn.

Both backends call ``FusedRun`` on a columnar batch. Filtered rows are dropped as soon as a
filter decides, so later ops only see survivors. When an op raises on a batch and
``skip_op_error`` is on, the batch is retried row by row: only the failing rows leave, marked
in the ``__dj__error__`` column (JSON: op, error type, message) so the executor can move them to
the job's error ledger. Errors travel as data, so they survive worker processes and caches.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from typing import Sequence

from data_juicer.core.counters import append_counts
from data_juicer.ops.base import OP, Filter, Mapper
from data_juicer.ops.fused import FusedFilter
from data_juicer.utils.batch import batch_len, concat_batches, take_mask, take_rows
from data_juicer.utils.constant import Fields
from data_juicer.utils.errors import OpError  # noqa: F401  (raised here; importable from here)




def _snapshot(samples: dict[str, list]) -> dict[str, list]:
    # ops may mutate their input lists and stats dicts in place; keep a clean copy for the retry
    snap = {k: list(v) for k, v in samples.items()}
    if Fields.stats in snap:
        snap[Fields.stats] = [dict(s) if isinstance(s, dict) else s for s in snap[Fields.stats]]
    return snap


def _same_stat_keys(stats: list) -> list:
    """Every row's stats dict with the same keys (a missing one is None), in first-seen order.

    A row that failed part-way has only some stats; a batch whose dicts differ in keys would be
    stored by Hugging Face datasets as a JSON string column (with rounded floats), not a struct."""
    keys: dict = {}
    for s in stats:
        if isinstance(s, dict):
            keys.update(dict.fromkeys(s))
    if all(not isinstance(s, dict) or len(s) == len(keys) for s in stats):
        return stats
    return [{k: s.get(k) for k in keys} if isinstance(s, dict) else s for s in stats]


class _MemberError(Exception):
    """A member of a fused filter raised: ``member`` names it, ``cause`` is what it raised."""

    def __init__(self, member: OP, cause: BaseException):
        super().__init__(str(cause))
        self.member, self.cause = member, cause


def _run_row(op: OP, row: dict[str, list]) -> dict[str, list]:
    """``op.run_batch(row)``; for a fused filter member by member, so a failure names the member."""
    if not isinstance(op, FusedFilter):
        return op.run_batch(row)
    for f in op.filters:
        try:
            row = f.run_batch(row)
        except Exception as e:
            raise _MemberError(f, e) from e
        if not batch_len(row):
            break
    return row


def _error_record(op: OP, exc: BaseException, fused: OP | None = None) -> str:
    """The ledger's fields for a failed row: the op that raised (for a fused filter, the member, with
    the fused op as ``fused_op``), error type, message and where it was raised."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else ""
    rec = {"op": op.name, "error_type": type(exc).__name__, "message": str(exc), "where": where}
    if fused is not None:
        rec["fused_op"] = fused.name
    return json.dumps(rec, ensure_ascii=False)


def _describe_row(samples: dict[str, list], i: int, id_keys: Sequence[str]) -> str:
    for k in id_keys:
        if k in samples and samples[k][i] is not None:
            return f"sample {k}={samples[k][i]!r}"
    text = samples.get("text", [None] * (i + 1))[i]
    snippet = repr(text[:60]) if isinstance(text, str) else "?"
    return f"a sample (text starts {snippet})"


def _spill(folder: str, rows: dict[str, list]) -> None:
    """Append failed rows (a column batch) to this process's spill file in ``folder``."""
    import pickle

    with open(os.path.join(folder, f"{os.getpid()}.pkl"), "ab") as f:
        pickle.dump(rows, f, protocol=pickle.HIGHEST_PROTOCOL)


def read_spill(folder: str) -> list[dict]:
    """The failed rows spilled in ``folder`` (one dict per row)."""
    import pickle

    from data_juicer.utils.batch import iter_rows

    rows: list[dict] = []
    if not os.path.isdir(folder):
        return rows
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            while True:
                try:
                    batch = pickle.load(f)
                except EOFError:
                    break
                rows.extend(iter_rows(batch))
    return rows


class FusedRun:
    """Applies ``ops`` in order to a batch; picklable, so it can ship to worker processes."""

    def __init__(self, ops: Sequence[OP], id_keys: Sequence[str] = ("id",), mark_errors: bool = True,
                 counter_path: str | None = None, tracer=None, stats_order: Sequence[str] | None = None):
        self.ops = list(ops)
        # filters run in another order than the recipe's (op_fusion): restore the stat keys' order
        self.stats_order = list(stats_order) if stats_order else None
        self.tracer = tracer
        self.id_keys = tuple(id_keys)
        self.mark_errors = mark_errors
        self.counter_path = counter_path
        self.needs_context = any(op.uses for op in self.ops)
        self._out_cols: list = []  # the columns of the last batch that had surviving rows
        # where a worker puts the failed rows of a batch it cannot return in the dataset (see __call__);
        # the HF backend sets it and records what lands there in the ledger
        self.spill_dir: str | None = None

    def __call__(self, samples: dict[str, list]) -> dict[str, list]:
        had_stats = Fields.stats in samples
        out, errors = self.apply(dict(samples))
        if not had_stats and Fields.stats in out and not any(out[Fields.stats]):
            # only filters without statistics ran (e.g. suffix_filter): no stats column, as Data-Juicer
            del out[Fields.stats]
            if errors is not None:
                errors.pop(Fields.stats, None)
        spill_dir = getattr(self, "spill_dir", None)
        if spill_dir is not None:
            os.makedirs(spill_dir, exist_ok=True)  # also says the pass ran (not loaded from a cache)
        if batch_len(out):
            self._out_cols = list(out)
        elif errors is not None:  # every row failed: still the columns the other batches have (one schema)
            for k in self._out_cols:
                out.setdefault(k, [])
            if not self._out_cols and self.mark_errors and spill_dir is not None and batch_len(errors):
                # no batch of this worker has had surviving rows yet, so the columns they will have (the
                # stats of a filter) are unknown: a batch of failed rows alone would fix the file's schema
                # without them. Its rows go to the spill file instead, and no rows into the dataset.
                errors[Fields.error] = errors.pop("__dj__error_tmp__")
                _spill(spill_dir, errors)
                errors = None
        if self.mark_errors:
            out[Fields.error] = [""] * batch_len(out)
            if errors is not None and batch_len(errors):
                errors[Fields.error] = errors.pop("__dj__error_tmp__")
                out = concat_batches([out, errors])
        if out.get(Fields.stats):
            out[Fields.stats] = _same_stat_keys(out[Fields.stats])
        return out

    def apply(self, samples: dict[str, list]) -> tuple[dict[str, list], dict[str, list] | None]:
        """Return (surviving rows, failed rows or None)."""
        if self.needs_context and Fields.context not in samples:
            samples[Fields.context] = [{} for _ in range(batch_len(samples))]
        failed: list[dict[str, list]] = []
        counts = [[0, 0, 0, 0.0] for _ in self.ops]
        for op, c in zip(self.ops, counts):
            n_in = batch_len(samples)
            if not n_in:
                break
            t = time.perf_counter()
            samples, bad = self._apply_op(op, samples)
            c[:] = [n_in, batch_len(samples), 0, time.perf_counter() - t]
            if bad is not None:
                c[2] = batch_len(bad)
                failed.append(bad)
        if self.counter_path is not None:
            append_counts(self.counter_path, counts)
        samples.pop(Fields.context, None)
        if self.stats_order and samples.get(Fields.stats):
            order = self.stats_order
            samples[Fields.stats] = [
                {**{k: s[k] for k in order if k in s}, **{k: v for k, v in s.items() if k not in order}}
                if isinstance(s, dict) else s for s in samples[Fields.stats]]
        errors = None
        if failed:
            errors = concat_batches(failed)
            errors.pop(Fields.context, None)
        return samples, errors

    def _apply_op(self, op: OP, samples: dict[str, list]):
        if not op.skip_op_error:
            try:
                return self._run(op, samples), None
            except Exception as e:  # name the op (a fused filter's member) and the sample, then stop the run
                where, member = self._locate(op, samples)
                if member is None:
                    raise OpError(op.name, where, e) from e
                err = OpError(f"{member.name}' (in '{op.name}", where, e)  # the message names both
                err.op = member.name
                raise err from e
        snap = _snapshot(samples)
        try:
            return self._run(op, samples), None
        except Exception:
            pass
        # isolate: rerun row by row on the clean copy, keep the good rows in order
        good, bad, marks = [], [], []
        for i in range(batch_len(snap)):
            row = take_rows(snap, [i])
            try:
                good.append(_run_row(op, _snapshot(row)))
            except _MemberError as e:
                bad.append(row)
                marks.append(_error_record(e.member, e.cause, fused=op))
            except Exception as e:
                bad.append(row)
                marks.append(_error_record(op, e))
        kept = concat_batches(good) if good else {k: [] for k in snap}
        for k in snap:  # keep every column, even when all rows failed or were dropped
            kept.setdefault(k, [])
        if not bad:
            return kept, None
        errors = concat_batches(bad)
        errors["__dj__error_tmp__"] = marks
        return kept, errors

    def _run(self, op: OP, samples: dict[str, list]) -> dict[str, list]:
        tracer = self.tracer
        if tracer is None or not tracer.wants(op.name):
            return op.run_batch(samples)
        if isinstance(op, Filter):
            samples, keep = op.decide_batch(samples)
            tracer.filter(op.name, samples, keep)
            return samples if all(keep) else take_mask(samples, keep)
        if isinstance(op, Mapper):
            before = list(samples.get(op.text_key) or ())
            out = op.run_batch(samples)
            tracer.mapper(op.name, op.text_key, before, out)
            return out
        return op.run_batch(samples)

    def _locate(self, op: OP, samples: dict[str, list]) -> tuple[str, OP | None]:
        """(the first sample ``op`` fails on alone, the fused filter's member that raised or None)."""
        for i in range(batch_len(samples)):
            try:
                _run_row(op, _snapshot(take_rows(samples, [i])))
            except _MemberError as e:
                return _describe_row(samples, i, self.id_keys), e.member
            except Exception:
                return _describe_row(samples, i, self.id_keys), None
        return "a batch (no single sample fails alone)", None


def run_ops_on_rows(ops: Sequence[OP], rows: list[dict]) -> list[dict]:
    """Run row-wise ``ops`` over a list of samples in one batch (handy in tests and demos)."""
    from data_juicer.utils.batch import iter_rows, rows_to_batch

    out, _ = FusedRun(ops, mark_errors=False).apply(rows_to_batch(rows))
    return list(iter_rows(out))
