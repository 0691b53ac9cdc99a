"""Fan-out stages over samples: expand each sample into children, run per-child ops batched
across samples, and reduce the children's results back to their sample.

This is what the ``lineage_stage`` operator runs, and the Python API for the same thing::

    stage = FanOutStage(expand="paragraphs", child_ops=[{"words_num_filter": {"min_num": 5}}])
    print(stage.plan.describe())
    rows_out = stage.run(rows)

Children are expanded by a built-in splitter (``paragraphs``, ``lines``, ``chunks``), by any
registered mapper that returns several rows per sample (``{"text_chunk_mapper": {...}}``), or by
a video splitter / frame extractor, one child per clip or frame (``_media_expands.py``).
Children start with empty statistics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Sequence

from data_juicer.lineage.failures import Outcome, RecordFailure
from data_juicer.lineage.model import Call, Program, Recovery
from data_juicer.utils.batch import iter_rows, rows_to_batch
from data_juicer.utils.constant import Fields

KEEP = "__dj__lineage_keep__"  # a child filter's decision, read by the structural filter
PARENT = "__dj__lineage_parent__"  # provenance column handed through a fan-out mapper
_PARAGRAPH_BREAK = re.compile(r"\n(?:[ \t\r\f\v]*\n)+")  # whole blank lines only: indentation stays

# -- built-in expanders: text -> ordered pieces ------------------------------------------------


def split_paragraphs(text: str, chunk_size: int) -> list[str]:
    """Pieces between blank lines; whitespace-only pieces are skipped."""
    return [p for p in _PARAGRAPH_BREAK.split(text) if p.strip()]


def split_lines(text: str, chunk_size: int) -> list[str]:
    """Non-blank lines."""
    return [line for line in text.splitlines() if line.strip()]


def split_chunks(text: str, chunk_size: int) -> list[str]:
    """Consecutive slices of at most ``chunk_size`` characters."""
    return [text[i:i + chunk_size] for i in range(0, len(text), chunk_size)]


SPLITTERS: dict[str, Callable[[str, int], list[str]]] = {
    "paragraphs": split_paragraphs, "lines": split_lines, "chunks": split_chunks}


class SplitExpander:
    """A built-in expander: each child is its parent row with the text replaced by one piece."""

    def __init__(self, how: str, text_key: str, chunk_size: int):
        self.how, self.text_key, self.chunk_size = how, text_key, chunk_size
        self.split = SPLITTERS[how]

    def __call__(self, parents: list[dict]) -> list:
        out = []
        for row in parents:
            text = row.get(self.text_key)
            if not isinstance(text, str):
                out.append(RecordFailure(f"field '{self.text_key}' is {type(text).__name__}, not text"))
                continue
            base = {k: v for k, v in row.items() if k != Fields.stats}
            out.append([dict(base, **{self.text_key: piece, Fields.stats: {}})
                        for piece in self.split(text, self.chunk_size)])
        return out


class MapperExpander:
    """A registered fan-out mapper as an expander, batched across parents.

    The batch carries a provenance column; rows the mapper returns are grouped back by it. A
    mapper that does not keep that column is run one parent at a time instead.
    """

    def __init__(self, op):
        self.op = op

    def __call__(self, parents: list[dict]) -> list:
        rows = [dict(r, **{PARENT: i}) for i, r in enumerate(parents)]
        out = list(iter_rows(self.op.process_batched(rows_to_batch(rows))))
        if out and all(r.get(PARENT) is not None for r in out):
            groups: list[list[dict]] = [[] for _ in parents]
            for r in out:
                groups[r.pop(PARENT)].append(_fresh_stats(r))
            return groups
        return [[_fresh_stats(c) for c in iter_rows(self.op.process_batched(rows_to_batch([r])))] for r in parents]


def _fresh_stats(child: dict) -> dict:
    # a parent's statistics do not describe its children: a child filter must compute its own
    if Fields.stats in child:
        child[Fields.stats] = {}
    return child


class OpCall:
    """A registered row-wise mapper or filter as a lineage call on child rows."""

    def __init__(self, op):
        self.op = op

    def __call__(self, rows: list[dict]) -> list:
        from data_juicer.ops.base import Filter

        batch = rows_to_batch([{k: v for k, v in r.items() if k != KEEP} for r in rows])
        if isinstance(self.op, Filter):
            batch, keep = self.op.decide_batch(batch)
            out = list(iter_rows(batch))
            for r, k in zip(out, keep):
                r[KEEP] = bool(k)
            return out
        out = list(iter_rows(self.op.run_batch(batch)))
        if len(out) != len(rows):
            raise ValueError(f"mapper '{self.op.name}' returned {len(out)} rows for {len(rows)}; a per-child op must "
                             "map one row to one row (put fan-out mappers in 'expand')")
        return out


def _kept(row: dict) -> bool:
    return row.get(KEEP, True)


@dataclass
class StageReport:
    parents_in: int = 0
    parents_out: int = 0
    rows_out: int = 0
    children: int = 0
    children_kept: int = 0
    children_failed: int = 0
    seconds: float = 0.0
    peak_live_roots: int = 0  # the most samples alive in the engine at once


class FanOutStage:
    """Expand → per-child ops → reduce, on the lineage engine.

    :param expand: ``paragraphs``, ``lines``, ``chunks`` or ``{mapper_name: {params}}``
    :param child_ops: recipe-style list of registered mappers/filters run on each child
    :param text_key: field holding the text to split (and the children's text)
    :param chunk_size: characters per child for ``expand: chunks``
    :param children_key: parent field receiving its surviving children, in order (None: not written)
    :param child_fields: when given, each child in ``children_key`` is a dict of these fields, else its text
    :param child_stats_key: parent field receiving the surviving children's stats, in order (None: not written)
    :param drop_parents: ``no_survivors`` (no child left), ``all_failed`` (every child failed) or ``never``
    :param output: ``parents`` (one row per kept parent) or ``children`` (the surviving child rows, flat)
    :param batch_policy: ``any`` (child batches mix parents) or ``single`` (one parent per batch)
    :param on_error: what a child op raising does: ``split`` (fail only the failing child), ``fail`` (the batch),
        ``abort`` (stop at the failing child)
    :param retries: reruns of a batch that raised before ``on_error`` applies
    :param engine: ``local`` (this process) or ``ray`` (an actor pool per op)
    :param replicas: actors per child op on Ray
    :param expand_batch_size: parents per batch of the expander
    """

    def __init__(self, expand: Any = "paragraphs", child_ops: Optional[Sequence[dict]] = None, *,
                 text_key: str = "text", chunk_size: int = 512, children_key: Optional[str] = "children",
                 child_fields: Optional[Sequence[str]] = None, child_stats_key: Optional[str] = "children_stats",
                 drop_parents: str = "no_survivors", output: str = "parents", batch_policy: str = "any",
                 on_error: str = "split", retries: int = 0, engine: str = "local", replicas: int = 1,
                 expand_batch_size: int = 64, op_defaults: Optional[dict] = None):
        _choice("drop_parents", drop_parents, ("no_survivors", "all_failed", "never"))
        _choice("output", output, ("parents", "children"))
        _choice("engine", engine, ("local", "ray"))
        self.text_key, self.children_key, self.child_stats_key = text_key, children_key, child_stats_key
        self.child_fields = list(child_fields) if child_fields else None
        self.drop_parents, self.output, self.engine = drop_parents, output, engine
        defaults = dict(op_defaults or {}, text_key=text_key)
        self.expander, self.expand_label = _make_expander(expand, text_key, chunk_size, defaults)
        self.child_ops = [_build_op(item, i, defaults) for i, item in enumerate(child_ops or [])]
        recovery = Recovery(on_error, retries)

        p = Program("fan-out stage")
        p.domain("sample")
        p.domain("child", parent="sample")
        pieces = p.call(Call(f"expand:{self.expand_label}", self.expander, batch_size=expand_batch_size,
                             recovery=recovery), p.input("row"), out="pieces")
        cur = p.expand(pieces, "child", out="child")
        for i, op in enumerate(self.child_ops):
            cur = p.call(Call(op.name, OpCall(op), batch_size=op.batch_size, policy=batch_policy, recovery=recovery,
                              num_cpus=op.num_cpus, num_gpus=op.num_gpus or 0.0, replicas=replicas,
                              driver_start=not op.uses_model),
                         cur, out=f"{i}:{op.name}")
            if op.op_type == "filter":
                cur = p.filter(cur, where=_kept, out=f"{i}:{op.name}:kept")
        p.output("children", p.reduce(cur, "sample", out="children", outcomes=True))
        self.plan = p.compile()
        self.report = StageReport()  # of the last run
        self.result = None  # the last run's LineageResult (counters, failures, completion times)

    # -- running ---------------------------------------------------------------------------
    def run(self, rows: Sequence[dict], ledger: Optional[Callable[[list[dict]], Any]] = None, **engine_kwargs):
        """The stage's output rows; ``ledger(entries)`` receives failed children and parents."""
        done: list[tuple[int, list[dict]]] = []
        for burst in self.iter_bursts(rows, ledger=ledger, **engine_kwargs):
            done.extend(burst)
        done.sort(key=lambda x: x[0])
        return [r for _, out in done for r in out]

    def iter_bursts(self, rows: Iterable[dict], ledger: Optional[Callable[[list[dict]], Any]] = None,
                    order: str = "completion", window: int = 1024, **engine_kwargs):
        """Each sample's output rows as soon as the sample is finished: yields lists of
        ``(sample index, its output rows)``, one list per burst of samples that finished together
        (the engine is about to compute again, or wait, after it).

        ``rows`` is read lazily and the engine forgets each sample once it is handed over
        (``LineageRuntime.release``): at most ``window`` samples are alive at once (admitted, not
        yet handed over; ``report.peak_live_roots`` says how many there were), whatever the input's
        length. ``order``: ``completion`` (as samples finish; the ledger entries are written at the
        end, in sample order) or ``input`` (bursts in sample order; each burst's ledger entries are
        written with it, so the ledger is in sample order too and nothing is held until the end)."""
        import time

        _choice("order", order, ("completion", "input"))
        t0 = time.perf_counter()
        self.report = report = StageReport()
        parents: dict[int, dict] = {}  # the samples alive in the engine, by index
        self._parents = parents

        def roots():
            for i, r in enumerate(rows):
                parents[i] = r
                report.parents_in = i + 1
                yield {"row": r}

        opts = dict(engine_kwargs, order=order, window=window, forget=True)
        if self.engine == "ray":
            from data_juicer.lineage.ray_executor import iter_ray

            opts.setdefault("input_batch_size", min(256, window))
            opts.setdefault("max_active_input_batches", max(1, window // opts["input_batch_size"]))
            stream = iter_ray(self.plan, roots(), **opts)
        else:
            from data_juicer.lineage.local import iter_local

            opts.setdefault("max_active_roots", window)
            stream = iter_local(self.plan, roots(), **opts)
        names = {n.out: n.call.name for n in self.plan.calls}
        errors: list[tuple[int, list[dict]]] = []
        burst: list[tuple[int, list[dict]]] = []
        out_rows = 0
        for f in stream:
            failures = {rec.key.path: rec for rec in f.records}  # the last record per entity
            out, errs = self._parent_rows(f.index, parents.pop(f.index), f.values["children"], f.outcome,
                                          failures, names)
            out_rows += len(out)
            if errs:
                errors.append((f.index, errs))
            burst.append((f.index, out))
            if not stream.backlog:
                if order == "input" and errors and ledger is not None:
                    ledger([e for _, errs in errors for e in errs])
                    errors = []
                yield burst
                burst = []
        if burst:
            yield burst
        report.rows_out = out_rows
        report.parents_out = out_rows if self.output == "parents" else report.parents_in
        report.peak_live_roots = stream.runtime.peak_live_roots if stream.runtime is not None else 0
        report.seconds = time.perf_counter() - t0
        self.result = stream.result
        if errors and ledger is not None:
            errors.sort(key=lambda x: x[0])
            ledger([e for _, errs in errors for e in errs])

    def parent(self, index: int) -> Optional[dict]:
        """A sample still alive in the running stage (e.g. the one an abort names), else None."""
        return getattr(self, "_parents", {}).get(index)

    def _parent_rows(self, i: int, parent: dict, children, outcome, failures: dict, names: dict):
        """(output rows, ledger entries) of one finished sample."""
        errors: list[dict] = []
        if outcome is not Outcome.PRESENT:  # the expander failed on this sample
            f = failures.get((i,))
            errors.append(_entry(names.get(f.call, f.call) if f else "expand", f.reason if f else outcome.value,
                                 parent))
            return [], errors
        self.report.children += len(children)
        kept = [_strip(v) for o, v in children if o == "present"]
        self.report.children_kept += len(kept)
        for j, (o, _) in enumerate(children):
            if o == "failed":
                self.report.children_failed += 1
                f = failures.get((i, j))
                errors.append(_entry(names.get(f.call, f.call) if f else "?", f.reason if f else "failed",
                                     parent, child=j))
        if self.output == "children":
            return kept, errors
        failed = sum(o in ("failed", "suppressed") for o, _ in children)
        if (self.drop_parents == "no_survivors" and not kept) or \
                (self.drop_parents == "all_failed" and children and failed == len(children)):
            return [], errors
        row = dict(parent)
        if self.children_key:
            value = getattr(self.expander, "child_value", None) or (lambda c: c.get(self.text_key))
            row[self.children_key] = [{k: c.get(k) for k in self.child_fields} if self.child_fields
                                      else value(c) for c in kept]
        if self.child_stats_key:
            row[self.child_stats_key] = [c.get(Fields.stats) or {} for c in kept]
        return [row], errors


def _entry(op: str, reason: str, parent: dict, child: Optional[int] = None) -> dict:
    error_type, _, message = reason.partition(": ") if ": " in reason else ("Failure", "", reason)
    e = {"op": op, "error_type": error_type, "message": message, "sample": parent}
    if child is not None:
        e["child"] = child
    return e


def _strip(row: dict) -> dict:
    row.pop(KEEP, None)
    return row


def _choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")


def _one_op(item, where: str):
    if isinstance(item, str):
        item = {item: {}}
    if not isinstance(item, dict) or len(item) != 1:
        raise ValueError(f"{where}: write an op as a one-key mapping like {{words_num_filter: {{min_num: 5}}}}, "
                         f"got {item!r}")
    (name, params), = item.items()
    if params is not None and not isinstance(params, dict):
        raise ValueError(f"{where}: the parameters of '{name}' must be a mapping, got {params!r}")
    return name, dict(params or {})


def _build_op(item, index: int, defaults: dict):
    from data_juicer.ops.base import Filter, Mapper
    from data_juicer.ops.build import build_ops, resolve_entry

    where = f"child_ops[{index}]"
    entry = resolve_entry(item, defaults, where)
    if not issubclass(entry.cls, (Mapper, Filter)):
        raise ValueError(f"{where}: '{entry.name}' is a {entry.cls.op_type}; per-child ops are mappers and filters")
    if getattr(entry.cls, "fan_out", False):
        raise ValueError(f"{where}: '{entry.name}' fans out; use it as the stage's expand instead")
    return build_ops([entry], where="lineage_stage")[0]


def _make_expander(expand, text_key: str, chunk_size: int, defaults: dict):
    from data_juicer.ops.base import Mapper
    from data_juicer.ops.build import build_ops, parse_entry, resolve_entry
    from data_juicer.ops.registry import OPERATORS

    if isinstance(expand, str):
        if expand in SPLITTERS:
            return SplitExpander(expand, text_key, chunk_size), expand
        if expand not in OPERATORS:
            raise ValueError(f"expand must be one of {', '.join(SPLITTERS)} or {{mapper_name: {{params}}}}; "
                             f"got {expand!r}")
        expand = {expand: {}}
    parse_entry(expand, "expand")
    entry = resolve_entry(expand, defaults, "expand")
    if not issubclass(entry.cls, Mapper):
        raise ValueError(f"expand: '{entry.name}' is a {entry.cls.op_type}; expanding needs a mapper that returns "
                         "several rows per sample")
    from data_juicer.ops.pipeline._media_expands import MEDIA_EXPANDS, media_expander

    op = build_ops([entry], where="lineage_stage")[0]
    if entry.name in MEDIA_EXPANDS:  # one child per clip / frame (see _media_expands.py)
        return media_expander(entry.name, op), entry.name
    return MapperExpander(op), entry.name


def ledger_writer(path: str, id_keys=("id", "uid", "doc_id")) -> Callable[[list[dict]], int]:
    """Append failure entries to ``path`` (JSON lines) when no job ledger is passed in (the stage
    used outside an executor); entries carry the same fields the job's error ledger writes."""
    import json
    import os

    def record(entries) -> int:
        n = 0
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            for e in entries:
                sample = e.get("sample")
                if isinstance(sample, dict):
                    sample = {k: v for k, v in sample.items() if k not in (Fields.error, Fields.context)}
                    e = dict(e, sample=sample)
                    for k in id_keys:
                        if sample.get(k) is not None:
                            e.setdefault("id", {k: sample[k]})
                            break
                f.write(json.dumps(e, ensure_ascii=False, default=str) + "\n")
                n += 1
        return n

    return record


__all__ = ["FanOutStage", "SPLITTERS", "split_paragraphs", "split_lines", "split_chunks", "ledger_writer"]
