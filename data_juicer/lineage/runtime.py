"""The semantic runtime: lineage state, ready queues, commits and failure containment. No Ray.

An executor drives it: ``add_root`` admits input entities, ``ready_calls``/``next_batch`` form
physical batches, and ``report``/``report_error`` bring results back. Everything else (creating
children, propagating absent values, filters, broadcasts, reduces, suppression) happens here,
synchronously, when a value becomes terminal. A parent's reduce resolves as soon as its own
children are terminal; there is no global regroup.

Propagation rules: a call runs on an entity when all its inputs are PRESENT; otherwise its
output takes the most informative absence among its inputs (FAILED > SUPPRESSED > DROPPED). A
filter passes its value when the mask is true and DROPS it otherwise. An expand of an absent
value creates no children and its reduces get that absence; an empty list gives ``[]``.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from data_juicer.lineage.compiler import Plan
from data_juicer.lineage.failures import GroupFailure, LineageAbort, LineageDeadlock, Outcome, RecordFailure, worst
from data_juicer.lineage.model import EntityKey, Node
from data_juicer.lineage.queues import ReadyQueue
from data_juicer.lineage.state import ABSENT_INPUT_EVENT, Event, ItemState, step

P = Outcome.PRESENT


@dataclass(slots=True)
class Item:
    pending: int  # inputs not yet terminal
    state: ItemState = ItemState.WAITING
    gen: int = 0  # attempt generation: bumped at each dispatch; a report must carry the current one
    errors: int = 0


@dataclass(frozen=True, slots=True)
class Batch:
    """One physical batch of a call: keys with their generations, and one column per input."""

    id: int
    call: str  # the call node's output port (unique in the plan)
    keys: tuple[EntityKey, ...]
    gens: tuple[int, ...]
    args: tuple[list, ...]

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True, slots=True)
class FailureRecord:
    call: str
    key: EntityKey
    kind: str  # record | group | error | expand | filter
    reason: str


@dataclass
class CallCounters:
    batches: int = 0
    items: int = 0
    parents_in_batches: int = 0
    errors: int = 0
    rejected: int = 0
    never_dispatched: int = 0  # suppressed before dispatch
    doomed: int = 0  # suppressed while in flight

    def mean_fill(self, batch_size: int) -> float:
        return self.items / (self.batches * batch_size) if self.batches else 0.0


class LineageRuntime:
    def __init__(self, plan: Plan):
        self.plan = plan
        self.values: dict[tuple[str, EntityKey], tuple[Outcome, Any]] = {}
        self.items: dict[tuple[str, EntityKey], Item] = {}
        self.call_nodes = {n.out: n for n in plan.calls}
        self.queues = {n.out: ReadyQueue(n.call.policy, n.call.batch_size) for n in plan.calls}
        self.counters = {n.out: CallCounters() for n in plan.calls}
        self.failures: list[FailureRecord] = []
        self.roots: list[EntityKey] = []
        self.completed: list[int] = []  # root indexes in completion order
        self.completed_at: list[float] = []
        self.t0 = time.perf_counter()
        self._calls_at = {d: [(n.out, len(set(n.inputs))) for n in plan.nodes_at(d, "call")] for d in plan.domains}
        self._filters_pending: dict[tuple[str, EntityKey], int] = {}
        self._children: dict[tuple[str, tuple], int] = {}  # (domain, parent path) -> number of children
        self._reduce_left: dict[tuple[str, tuple], int] = {}
        self._bc_wait: dict[tuple[str, EntityKey], list[EntityKey]] = {}
        self._broadcasts_at = {d: plan.nodes_at(d, "broadcast") for d in plan.domains}
        self._out_ports = set(plan.outputs.values())
        self._root_left: dict[EntityKey, int] = {}
        self._notify: deque[tuple[str, EntityKey]] = deque()
        self._batch_ids = 0

    # -- admission -------------------------------------------------------------------------
    def add_root(self, values: dict[str, Any]) -> EntityKey:
        """Admit one root entity with a value for each program input."""
        missing = [p for p in self.plan.inputs if p not in values]
        if missing:
            raise KeyError(f"root {len(self.roots)} lacks input(s) {missing}; the program's inputs are "
                           f"{self.plan.inputs}")
        key = EntityKey(self.plan.root, (len(self.roots),))
        self.roots.append(key)
        self._root_left[key] = len(self._out_ports)
        self._create(key)
        for p in self.plan.inputs:
            self._set(p, key, P, values[p])
        self._drain()
        return key

    @property
    def done(self) -> bool:
        """Every admitted root has all its outputs terminal."""
        return len(self.completed) == len(self.roots)

    def is_complete(self, index: int) -> bool:
        return self._root_left[self.roots[index]] == 0

    @property
    def active_roots(self) -> int:
        return len(self.roots) - len(self.completed)

    # -- dispatch --------------------------------------------------------------------------
    def ready_calls(self) -> list[str]:
        """Calls with queued items, downstream calls first (they complete parents soonest)."""
        return [c for c in reversed(self.call_nodes) if len(self.queues[c])]

    def has_ready(self) -> bool:
        return any(len(q) for q in self.queues.values())

    def next_batch(self, call: str) -> Optional[Batch]:
        q, items = self.queues[call], self.items
        node = self.call_nodes[call]
        while len(q):
            keys = q.pop_batch(lambda k: items[(call, k)].state is ItemState.READY)
            if not keys:
                continue
            gens = []
            for k in keys:
                it = items[(call, k)]
                it.state = step(it.state, Event.DISPATCH)
                it.gen += 1
                gens.append(it.gen)
            args = tuple([self.values[(p, k)][1] for k in keys] for p in node.inputs)
            self._batch_ids += 1
            c = self.counters[call]
            c.batches += 1
            c.items += len(keys)
            c.parents_in_batches += len({k.parent_path for k in keys})
            return Batch(self._batch_ids, call, tuple(keys), tuple(gens), args)
        return None

    # -- reports ---------------------------------------------------------------------------
    def _live(self, batch: Batch, k: EntityKey, gen: int) -> Optional[Item]:
        it = self.items.get((batch.call, k))
        if it is None or it.gen != gen or it.state not in (ItemState.IN_FLIGHT, ItemState.DOOMED):
            self.counters[batch.call].rejected += 1  # stale (older attempt) or duplicate report
            return None
        return it

    def report(self, batch: Batch, outputs) -> int:
        """Commit a batch's outputs; returns how many items were accepted (stale ones are not)."""
        if not isinstance(outputs, (list, tuple)) or len(outputs) != len(batch):
            got = f"{len(outputs)} outputs" if isinstance(outputs, (list, tuple)) else type(outputs).__name__
            return self.report_error(batch, ValueError(
                f"call '{self.call_nodes[batch.call].call.name}' returned {got} for {len(batch)} inputs"))
        accepted = 0
        for k, g, out in zip(batch.keys, batch.gens, outputs):
            it = self._live(batch, k, g)
            if it is None:
                continue
            accepted += 1
            if it.state is ItemState.DOOMED:
                it.state = step(it.state, Event.COMMIT)
                continue
            if isinstance(out, (RecordFailure, GroupFailure)):
                it.state = step(it.state, Event.FAIL)
                group = isinstance(out, GroupFailure)
                self.failures.append(FailureRecord(batch.call, k, "group" if group else "record", out.reason))
                self._set(batch.call, k, Outcome.FAILED, None)
                if group:
                    self._suppress_siblings(batch.call, k)
            else:
                it.state = step(it.state, Event.COMMIT)
                self._set(batch.call, k, P, out)
        self._drain()
        return accepted

    def report_error(self, batch: Batch, exc: BaseException) -> int:
        """The call raised on ``batch``: apply its recovery policy (retry, split, fail or abort)."""
        node = self.call_nodes[batch.call]
        rec = node.call.recovery
        self.counters[batch.call].errors += 1
        live = []
        for k, g in zip(batch.keys, batch.gens):
            it = self._live(batch, k, g)
            if it is None:
                continue
            if it.state is ItemState.DOOMED:
                it.state = step(it.state, Event.REQUEUE)
            else:
                it.errors += 1
                live.append(k)
        if not live:
            return 0
        q = self.queues[batch.call]
        tries = max(self.items[(batch.call, k)].errors for k in live)
        if tries <= rec.retries:
            self._requeue(batch.call, live)
            q.pin_front(live)
        elif rec.mode == "abort" and len(live) == 1:
            raise LineageAbort(node.call.name, live, exc) from exc
        elif rec.mode in ("split", "abort") and len(live) > 1:  # abort too: name the item that fails
            self._requeue(batch.call, live)
            half = len(live) // 2
            q.pin_front(live[:half], live[half:])
        else:
            reason = f"{type(exc).__name__}: {exc}"
            for k in live:
                it = self.items[(batch.call, k)]
                it.state = step(it.state, Event.FAIL)
                self.failures.append(FailureRecord(batch.call, k, "error", reason))
                self._set(batch.call, k, Outcome.FAILED, None)
            self._drain()
        return len(live)

    def _requeue(self, call: str, keys) -> None:
        for k in keys:
            it = self.items[(call, k)]
            it.state = step(it.state, Event.REQUEUE)

    def _suppress_siblings(self, call: str, key: EntityKey) -> None:
        if len(key.path) == 1:
            return  # a root has no siblings: a GroupFailure there fails only itself
        n = self._children[(key.domain, key.parent_path)]
        c = self.counters[call]
        for j in range(n):
            sk = EntityKey(key.domain, key.parent_path + (j,))
            it = self.items[(call, sk)]
            before = it.state
            it.state = step(before, Event.SUPPRESS)
            if before in (ItemState.WAITING, ItemState.READY):
                c.never_dispatched += 1
                self._set(call, sk, Outcome.SUPPRESSED, None)
            elif before is ItemState.IN_FLIGHT:
                c.doomed += 1
                self._set(call, sk, Outcome.SUPPRESSED, None)  # the parent need not wait for it

    # -- progress --------------------------------------------------------------------------
    def progress(self) -> dict[str, dict]:
        """Counters per call (items by state, batches, rejected reports) and for roots."""
        out: dict[str, dict] = {}
        by_call: dict[str, Counter] = {c: Counter() for c in self.call_nodes}
        for (call, _), it in self.items.items():
            by_call[call][it.state.value] += 1
        for call, cnt in by_call.items():
            c = self.counters[call]
            out[f"call {self.call_nodes[call].call.name} ({call})"] = dict(
                cnt, batches=c.batches, rejected_reports=c.rejected, errors=c.errors)
        out["roots"] = {"admitted": len(self.roots), "completed": len(self.completed),
                        "reduces_waiting": sum(1 for v in self._reduce_left.values() if v > 0),
                        "broadcasts_waiting": sum(len(v) for v in self._bc_wait.values())}
        return out

    def check_progress(self, in_flight: int) -> None:
        """Raise ``LineageDeadlock`` when nothing is ready or in flight yet roots are unfinished."""
        if not self.done and in_flight == 0 and not self.has_ready():
            raise LineageDeadlock(self.progress())

    # -- results ---------------------------------------------------------------------------
    def root_outputs(self, index: int) -> dict[str, tuple[Outcome, Any]]:
        key = self.roots[index]
        return {name: self.values[(port, key)] for name, port in self.plan.outputs.items()}

    def iter_completed(self, start: int = 0) -> Iterator[int]:
        yield from self.completed[start:]

    # -- propagation -----------------------------------------------------------------------
    def _create(self, key: EntityKey) -> None:
        items = self.items
        for out, n_inputs in self._calls_at[key.domain]:
            items[(out, key)] = Item(n_inputs)
        for node in self._broadcasts_at[key.domain]:
            src = node.inputs[0]
            anc = EntityKey(self.plan.port_domain[src], key.path[:self.plan.depth[self.plan.port_domain[src]] + 1])
            v = self.values.get((src, anc))
            if v is not None:
                self._set(node.out, key, *v)
            else:
                self._bc_wait.setdefault((node.out, anc), []).append(key)

    def _set(self, port: str, key: EntityKey, outcome: Outcome, value: Any) -> None:
        self.values[(port, key)] = (outcome, value)
        self._notify.append((port, key))

    def _drain(self) -> None:
        notify = self._notify
        while notify:
            port, key = notify.popleft()
            if port in self._out_ports and len(key.path) == 1:
                self._root_output_done(key)
            for node in self.plan.consumers[port]:
                kind = node.kind
                if kind == "call":
                    self._on_call_input(node, key)
                elif kind == "filter":
                    self._on_filter_input(node, key)
                elif kind == "expand":
                    self._on_expand(node, key)
                elif kind == "reduce":
                    self._on_reduce_input(node, key)
                else:
                    self._on_broadcast_source(node, key)

    def _root_output_done(self, key: EntityKey) -> None:
        # one port may be several outputs: count each distinct port once
        self._root_left[key] -= 1
        if self._root_left[key] == 0:
            self.completed.append(key.path[0])
            self.completed_at.append(time.perf_counter() - self.t0)

    def _on_call_input(self, node: Node, key: EntityKey) -> None:
        it = self.items[(node.out, key)]
        it.pending -= 1
        if it.pending or it.state is not ItemState.WAITING:
            return  # still waiting, or already suppressed by a sibling's GroupFailure
        o = worst(self.values[(p, key)][0] for p in node.inputs)
        if o is P:
            it.state = step(it.state, Event.INPUTS_PRESENT)
            self.queues[node.out].push(key)
        else:
            it.state = step(it.state, ABSENT_INPUT_EVENT[o])
            self._set(node.out, key, o, None)

    def _on_filter_input(self, node: Node, key: EntityKey) -> None:
        k = (node.out, key)
        left = self._filters_pending.get(k, len(set(node.inputs))) - 1
        if left:
            self._filters_pending[k] = left
            return
        self._filters_pending.pop(k, None)
        o, value = self.values[(node.inputs[0], key)]
        if len(node.inputs) > 1:
            mo, mask = self.values[(node.inputs[1], key)]
            o = worst((o, mo))
        if o is not P:
            self._set(node.out, key, o, None)
            return
        if node.where is None:
            keep = bool(mask)
        else:
            try:
                keep = bool(node.where(value))
            except Exception as e:
                self.failures.append(FailureRecord(node.out, key, "filter", f"{type(e).__name__}: {e}"))
                self._set(node.out, key, Outcome.FAILED, None)
                return
        self._set(node.out, key, P if keep else Outcome.DROPPED, value if keep else None)

    def _on_expand(self, node: Node, key: EntityKey) -> None:
        o, value = self.values[(node.inputs[0], key)]
        dom = node.domain
        reduces = self.plan.reduces_from.get(dom, ())
        if o is P and not isinstance(value, (list, tuple)):
            self.failures.append(FailureRecord(node.out, key, "expand",
                                               f"expand needs a list, got {type(value).__name__}"))
            o = Outcome.FAILED
        if o is not P:
            for r in reduces:
                self._set(r.out, key, o, None)
            return
        n = len(value)
        self._children[(dom, key.path)] = n
        for r in reduces:
            self._reduce_left[(r.out, key.path)] = n
            if n == 0:
                self._set(r.out, key, P, [])
        for j, v in enumerate(value):
            child = EntityKey(dom, key.path + (j,))
            self._create(child)
            self._set(node.out, child, P, v)

    def _on_reduce_input(self, node: Node, key: EntityKey) -> None:
        rk = (node.out, key.parent_path)
        self._reduce_left[rk] -= 1
        if self._reduce_left[rk]:
            return
        del self._reduce_left[rk]
        src, dom = node.inputs[0], key.domain
        n = self._children[(dom, key.parent_path)]
        vals = [self.values[(src, EntityKey(dom, key.parent_path + (j,)))] for j in range(n)]
        if node.outcomes:
            out = [(o.value, v) for o, v in vals]
        else:
            out = [v for o, v in vals if o is P]
        self._set(node.out, EntityKey(node.domain, key.parent_path), P, out)

    def _on_broadcast_source(self, node: Node, key: EntityKey) -> None:
        v = self.values[(node.inputs[0], key)]
        for d in self._bc_wait.pop((node.out, key), ()):
            self._set(node.out, d, *v)


@dataclass
class LineageResult:
    """Outputs per root (input order), plus failures and counters of the run."""

    outputs: list[dict[str, tuple[Outcome, Any]]]
    failures: list[FailureRecord]
    counters: dict[str, CallCounters]
    completion_order: list[int]
    completed_at: list[float]
    seconds: float
    extra: dict = field(default_factory=dict)

    def values(self, name: str) -> list:
        """One output's values per root (None where absent)."""
        return [o[name][1] if o[name][0] is P else None for o in self.outputs]

    def outcomes(self, name: str) -> list[Outcome]:
        return [o[name][0] for o in self.outputs]

    @property
    def first_completed_s(self) -> Optional[float]:
        return self.completed_at[0] if self.completed_at else None

    @classmethod
    def from_runtime(cls, rt: LineageRuntime, seconds: float, **extra) -> "LineageResult":
        return cls([rt.root_outputs(i) for i in range(len(rt.roots))], list(rt.failures), rt.counters,
                   list(rt.completed), list(rt.completed_at), seconds, dict(extra))
