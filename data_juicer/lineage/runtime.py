"""The semantic runtime: lineage state, ready queues, commits and failure containment. No Ray.

An executor drives it: ``add_root`` admits input entities, ``ready_calls``/``next_batch`` form
physical batches, and ``report``/``report_error`` bring results back. Everything else (creating
children, propagating absent values, filters, broadcasts, reduces, suppression) happens here,
synchronously, when a value becomes terminal. A parent's reduce resolves as soon as its own
children are terminal; there is no global regroup.

Propagation rules: a call runs on an entity when all its inputs are PRESENT; otherwise its
output takes the most informative absence among its inputs (FAILED > SUPPRESSED > DROPPED). A
filter passes its value when the mask is true and DROPS it otherwise. An expand of an absent
value creates no children and its reduces get that absence; an empty list gives ``[]``. A reduce
applies its ``on_child_failure`` policy to children that FAILED or were SUPPRESSED (default:
the parent FAILS as soon as one child does).

Withdrawal: once every reduce of a parent's children is resolved early (a child failed under
FAIL_PARENT), the children's remaining work cannot change any output: their queued items are
withdrawn (SUPPRESSED, never dispatched) and their in-flight items DOOMED. Every item doomed
while in flight is logged in ``doomed_log`` so an executor can tell the replica holding it to
skip it before calling the function.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, NamedTuple, Optional

from data_juicer.lineage.compiler import Plan
from data_juicer.lineage.failures import (
    ChildFailure,
    FailureKind,
    GroupFailure,
    LineageAbort,
    LineageDeadlock,
    Outcome,
    RecordFailure,
    worst,
)
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
    """One failure: where (the node's port and the entity), what kind, why, and what caused it
    (a CHILD failure of a parent points at its child's record)."""

    call: str  # the port of the node that failed (a call's, a reduce's, an expand's or a filter's)
    key: EntityKey
    kind: FailureKind
    reason: str
    cause: Optional["FailureRecord"] = None
    name: str = ""  # the call's name (the port for structural nodes)

    @property
    def root(self) -> int:
        return self.key.path[0]

    def chain(self) -> list["FailureRecord"]:
        """This record, then its cause, down to the first failure."""
        out, cur = [], self
        while cur is not None:
            out.append(cur)
            cur = cur.cause
        return out

    @property
    def origin(self) -> "FailureRecord":
        return self.chain()[-1]

    def describe(self) -> str:
        return " <- ".join(f"{r.kind.value} at {r.name or r.call} {r.key}: {r.reason}" for r in self.chain())


@dataclass
class CallCounters:
    batches: int = 0
    items: int = 0
    parents_in_batches: int = 0
    errors: int = 0
    rejected: int = 0
    never_dispatched: int = 0  # suppressed or withdrawn before dispatch
    doomed: int = 0  # suppressed or withdrawn while in flight
    withdrawn: int = 0  # items of a failed parent taken out (queued or waiting: also in never_dispatched)
    skipped: int = 0  # doomed items a replica dropped before calling the function
    computed: int = 0  # items the function was called on (dispatched, minus skipped)
    batch_size: int = 0

    def mean_fill(self, batch_size: Optional[int] = None) -> float:
        size = batch_size or self.batch_size
        return self.items / (self.batches * size) if self.batches else 0.0

    def as_dict(self) -> dict:
        return {"batches": self.batches, "items": self.items, "mean_fill": round(self.mean_fill(), 4),
                "parents_in_batches": self.parents_in_batches, "errors": self.errors,
                "rejected_reports": self.rejected, "never_dispatched": self.never_dispatched,
                "doomed": self.doomed, "withdrawn": self.withdrawn, "skipped": self.skipped,
                "computed": self.computed}


class ByCall(dict):
    """Per-call values keyed by call name; a call's port name is accepted too. Two calls with
    the same name are keyed ``name`` and ``name (port)``."""

    def __init__(self, plan: Plan, per_port: dict):
        super().__init__()
        self._ports: dict[str, str] = {}
        names = Counter(n.call.name for n in plan.calls)
        for n in plan.calls:
            key = n.call.name if names[n.call.name] == 1 or n.call.name not in self else f"{n.call.name} ({n.out})"
            self[key] = per_port[n.out]
            self._ports[n.out] = key

    def __missing__(self, key):
        if key in self._ports:
            return self[self._ports[key]]
        raise KeyError(f"no call named {key!r}; the calls are {sorted(self)}")

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or key in self._ports


class Finished(NamedTuple):
    """A root entity whose outputs are all final, as an executor hands it to the caller.

    ``outcome``: PRESENT when every output is, else the worst absence (a FAILED root is absent
    from the results and ``failure`` says why). ``values``: output name -> value (None where
    absent). ``at``: the caller's clock when it was handed over."""

    index: int
    outcome: Outcome
    values: dict
    failure: Optional[FailureRecord]
    at: float
    records: tuple = ()  # forget mode: every failure recorded under this root, in order

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.PRESENT


class _RootKeys:
    """The root keys of a forgetting runtime, made on demand (no list growing with the input)."""

    __slots__ = ("domain", "n")

    def __init__(self, domain: str):
        self.domain, self.n = domain, 0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> EntityKey:
        if not 0 <= i < self.n:
            raise IndexError(i)
        return EntityKey(self.domain, (i,))

    def append(self, key: EntityKey) -> None:
        self.n += 1


class _Log:
    """An append-only log addressed by absolute position whose head can be dropped
    (``trim``): ``len`` counts every entry ever appended, only the kept tail is stored."""

    __slots__ = ("start", "items")

    def __init__(self):
        self.start, self.items = 0, deque()

    def __len__(self) -> int:
        return self.start + len(self.items)

    def __getitem__(self, i: int):
        if i < self.start:
            raise IndexError(f"entry {i} was trimmed (kept: {self.start}..{len(self) - 1})")
        return self.items[i - self.start]

    def __iter__(self):
        return iter(self.items)

    def append(self, x) -> None:
        self.items.append(x)

    def trim(self, upto: int) -> None:
        """Forget the entries before absolute position ``upto``."""
        while self.start < upto and self.items:
            self.items.popleft()
            self.start += 1


class LineageRuntime:
    """The lineage state of one run. ``forget=True``: a root's state (values, items, children,
    failure records) is dropped by ``release(index)`` once the caller has its ``Finished``, and
    ``roots``/``completed`` keep no per-root list, so memory is bounded by the roots alive at once
    (``live_roots``; ``peak_live_roots`` is the most there ever were), not by the input's length.
    The failure records of a live root are kept per root and handed over in ``Finished.records``
    (``failures`` stays empty)."""

    def __init__(self, plan: Plan, clock: Callable[[], float] = time.time, forget: bool = False):
        self.plan = plan
        self.clock = clock
        self.values: dict[tuple[str, EntityKey], tuple[Outcome, Any]] = {}
        self.items: dict[tuple[str, EntityKey], Item] = {}
        self.call_nodes = {n.out: n for n in plan.calls}
        self.queues = {n.out: ReadyQueue(n.call.policy, n.call.batch_size) for n in plan.calls}
        self._counters = {n.out: CallCounters(batch_size=n.call.batch_size) for n in plan.calls}
        self.counters = ByCall(plan, self._counters)
        self.failures: list[FailureRecord] = []
        self._first_failure: dict[EntityKey, FailureRecord] = {}
        self.forget = forget
        self.roots = _RootKeys(plan.root) if forget else []
        self.completed = _Log() if forget else []  # root indexes in completion order
        self.completed_at = _Log() if forget else []  # on ``clock``
        self._root_records: dict[int, list[FailureRecord]] = {}  # forget: failure records per live root
        self.peak_live_roots = 0
        self.released = 0
        self._ports_at = {d: [p for p, pd in plan.port_domain.items() if pd == d] for d in plan.domains}
        self.t0 = clock()
        self.doomed_log: list[tuple[str, EntityKey]] = []  # (call port, key) doomed while in flight
        self._open: dict[tuple[str, tuple], int] = {}  # (child domain, parent path) -> reduces unresolved
        self._early: set[tuple[str, tuple]] = set()  # ... of which one resolved before all children were final
        self._dead: set[tuple[str, tuple]] = set()  # (child domain, parent path) whose children are withdrawn
        self._child_domains = {d: [c for c in plan.domains if plan.parent.get(c) == d] for d in plan.domains}
        self._chain = {d: self._ancestry(d) for d in plan.domains}
        self._reduce_names = {n.out: n.out for n in plan.nodes if n.kind == "reduce"}
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
        self._caps = {n.out: n.call.parent_cap for n in plan.calls}
        self._inflight: dict[tuple[str, tuple], int] = {}  # (call, parent path) -> items in flight (children only)

    def _ancestry(self, dom: str) -> list[str]:
        """Domains from depth 0 to ``dom``'s depth."""
        chain = [dom]
        while self.plan.parent.get(chain[-1]) is not None:
            chain.append(self.plan.parent[chain[-1]])
        return chain[::-1]

    def _record(self, rec: FailureRecord) -> FailureRecord:
        if self.forget:
            self._root_records.setdefault(rec.key.path[0], []).append(rec)
        else:
            self.failures.append(rec)
        self._first_failure.setdefault(rec.key, rec)
        return rec

    def _name(self, port: str) -> str:
        node = self.call_nodes.get(port)
        return node.call.name if node is not None else port

    def cause_of(self, key: EntityKey) -> Optional[FailureRecord]:
        """The first failure recorded on this entity or, failing that, on its nearest ancestor."""
        path = key.path
        chain = self._chain[key.domain]
        for depth in range(len(path), 0, -1):
            rec = self._first_failure.get(EntityKey(chain[depth - 1], path[:depth]))
            if rec is not None:
                return rec
        return None

    def is_withdrawn(self, key: EntityKey) -> bool:
        """Whether ``key`` lies under a parent whose children were withdrawn."""
        if not self._dead:
            return False
        path, chain = key.path, self._chain[key.domain]
        return any((chain[d], path[:d]) in self._dead for d in range(1, len(path)))

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
        if len(self._root_left) > self.peak_live_roots:
            self.peak_live_roots = len(self._root_left)
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
        return self._root_left.get(self.roots[index], 0) == 0  # a released root was complete

    @property
    def active_roots(self) -> int:
        return len(self.roots) - len(self.completed)

    @property
    def live_roots(self) -> int:
        """Roots whose state is held: admitted and not released (all admitted ones without ``forget``)."""
        return len(self._root_left)

    def release(self, index: int) -> None:
        """Drop every piece of state of the complete root ``index`` (``forget`` mode; a no-op
        otherwise): its values and items at every depth, its children, its failure records.
        Reports still to come for its doomed items are rejected as stale."""
        if not self.forget:
            return
        key = self.roots[index]
        left = self._root_left.get(key)
        if left is None:
            return
        if left:
            raise RuntimeError(f"root {index} is not complete; only a complete root can be released")
        del self._root_left[key]
        self.released += 1
        self._root_records.pop(index, None)
        values, items, ff, children = self.values, self.items, self._first_failure, self._children
        stack = [key]
        while stack:
            k = stack.pop()
            dom, path = k.domain, k.path
            for p in self._ports_at[dom]:
                values.pop((p, k), None)
                items.pop((p, k), None)
                self._filters_pending.pop((p, k), None)
            ff.pop(k, None)
            for d2 in self._child_domains[dom]:
                n = children.pop((d2, path), None)
                if n is None:
                    continue
                self._dead.discard((d2, path))
                for out, _ in self._calls_at[d2]:
                    self._inflight.pop((out, path), None)
                stack.extend(EntityKey(d2, path + (j,)) for j in range(n))

    def trim_completed(self, upto: int) -> None:
        """``forget`` mode: drop ``completed[:upto]`` (and their times), already handed over."""
        if self.forget:
            self.completed.trim(upto)
            self.completed_at.trim(upto)

    # -- dispatch --------------------------------------------------------------------------
    def ready_calls(self) -> list[str]:
        """Calls with queued items, downstream calls first (they complete parents soonest)."""
        return [c for c in reversed(self.call_nodes) if len(self.queues[c])]

    def has_ready(self) -> bool:
        return any(len(q) for q in self.queues.values())

    def next_batch(self, call: str, queued: bool = False) -> Optional[Batch]:
        """The call's next physical batch, or None.

        ``queued=True``: the batch will wait behind another one at a busy replica. It then takes
        no item of a parent that already has items in flight for this call: if that parent
        fails, the batches already sent hold as few of its siblings as they can."""
        q, items = self.queues[call], self.items
        node = self.call_nodes[call]
        cap, inflight = self._caps[call], self._inflight
        room = None
        if cap or queued:
            taken: dict[tuple, int] = {}
            limit = cap or float("inf")

            def room(k: EntityKey) -> bool:
                if len(k.path) == 1:
                    return True  # roots have no siblings to waste
                pp = k.path[:-1]
                busy = inflight.get((call, pp), 0)
                if queued and busy:
                    return False
                n = busy + taken.get(pp, 0)
                if n >= limit:
                    return False
                taken[pp] = taken.get(pp, 0) + 1
                return True
        while len(q):
            if room is not None:
                taken.clear()
            keys = q.pop_batch(lambda k: (it := items.get((call, k))) is not None and it.state is ItemState.READY,
                               room)
            if not keys:
                if q.held:
                    return None  # what is left waits for its parents' items in flight
                continue
            gens = []
            for k in keys:
                it = items[(call, k)]
                it.state = step(it.state, Event.DISPATCH)
                it.gen += 1
                gens.append(it.gen)
                if len(k.path) > 1:
                    pk = (call, k.path[:-1])
                    inflight[pk] = inflight.get(pk, 0) + 1
            args = tuple([self.values[(p, k)][1] for k in keys] for p in node.inputs)
            self._batch_ids += 1
            c = self._counters[call]
            c.batches += 1
            c.items += len(keys)
            c.parents_in_batches += len({k.parent_path for k in keys})
            return Batch(self._batch_ids, call, tuple(keys), tuple(gens), args)
        return None

    # -- reports ---------------------------------------------------------------------------
    def _live(self, batch: Batch, k: EntityKey, gen: int) -> Optional[Item]:
        it = self.items.get((batch.call, k))
        if it is None or it.gen != gen or it.state not in (ItemState.IN_FLIGHT, ItemState.DOOMED):
            self._counters[batch.call].rejected += 1  # stale (older attempt) or duplicate report
            return None
        if len(k.path) > 1:  # it leaves flight (to a final state, or to be queued again)
            pk = (batch.call, k.path[:-1])
            left = self._inflight[pk] - 1
            if left:
                self._inflight[pk] = left
            else:
                del self._inflight[pk]
        return it

    def report(self, batch: Batch, outputs, skipped: tuple = ()) -> int:
        """Commit a batch's outputs; returns how many items were accepted (stale ones are not).

        ``skipped``: positions in the batch the replica dropped before calling the function
        (items doomed meanwhile); ``outputs`` then holds one output per other position."""
        if skipped:
            keep = self._others(batch, skipped)
            return self._skipped(batch, skipped) + (self.report(self._sub_batch(batch, keep), outputs) if keep else 0)
        self._counters[batch.call].computed += len(batch)
        if not isinstance(outputs, (list, tuple)) or len(outputs) != len(batch):
            got = f"{len(outputs)} outputs" if isinstance(outputs, (list, tuple)) else type(outputs).__name__
            self._counters[batch.call].computed -= len(batch)  # report_error counts them
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
                self._record(FailureRecord(batch.call, k, FailureKind.GROUP if group else FailureKind.RECORD,
                                           out.reason, name=self._name(batch.call)))
                self._set(batch.call, k, Outcome.FAILED, None)
                if group:
                    self._suppress_siblings(batch.call, k)
            else:
                it.state = step(it.state, Event.COMMIT)
                self._set(batch.call, k, P, out)
        self._drain()
        return accepted

    @staticmethod
    def _others(batch: Batch, skipped) -> list[int]:
        skip = set(skipped)
        return [i for i in range(len(batch)) if i not in skip]

    def _sub_batch(self, batch: Batch, positions) -> Batch:
        return Batch(batch.id, batch.call, tuple(batch.keys[i] for i in positions),
                     tuple(batch.gens[i] for i in positions), tuple([col[i] for i in positions] for col in batch.args))

    def _skipped(self, batch: Batch, positions) -> int:
        """A replica dropped these positions without calling the function: doomed items end
        SUPPRESSED; a live one (not expected) is queued again."""
        accepted = 0
        c = self._counters[batch.call]
        for i in positions:
            k, g = batch.keys[i], batch.gens[i]
            it = self._live(batch, k, g)
            if it is None:
                continue
            accepted += 1
            before = it.state
            it.state = step(before, Event.SKIP)
            if before is ItemState.DOOMED:
                c.skipped += 1
            else:
                self.queues[batch.call].push(k)
        return accepted

    def report_error(self, batch: Batch, exc: BaseException, skipped: tuple = ()) -> int:
        """The call raised on ``batch``: apply its recovery policy (retry, split, fail or abort).
        ``skipped``: positions the replica dropped before calling the function (see ``report``)."""
        if skipped:
            keep = self._others(batch, skipped)
            return self._skipped(batch, skipped) + (self.report_error(self._sub_batch(batch, keep), exc) if keep else 0)
        node = self.call_nodes[batch.call]
        rec = node.call.recovery
        self._counters[batch.call].errors += 1
        self._counters[batch.call].computed += len(batch)
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
                self._record(FailureRecord(batch.call, k, FailureKind.ERROR, reason, name=self._name(batch.call)))
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
        c = self._counters[call]
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
                self.doomed_log.append((call, sk))
                self._set(call, sk, Outcome.SUPPRESSED, None)  # the parent need not wait for it

    def _withdraw_children(self, dom: str, parent: tuple) -> None:
        """Every reduce of ``parent``'s ``dom`` children is resolved: their remaining work (in any
        call, at any depth below) is withdrawn. Values are not set: nothing can read them."""
        self._dead.add((dom, parent))
        stack = [(dom, parent)]
        items, calls_at = self.items, self._calls_at
        while stack:
            d, pp = stack.pop()
            for j in range(self._children.get((d, pp), 0)):
                key = EntityKey(d, pp + (j,))
                for out, _ in calls_at[d]:
                    it = items.get((out, key))
                    if it is None:
                        continue
                    before = it.state
                    if before in (ItemState.WAITING, ItemState.READY):
                        it.state = step(before, Event.WITHDRAW)
                        c = self._counters[out]
                        c.withdrawn += 1
                        c.never_dispatched += 1
                    elif before is ItemState.IN_FLIGHT:
                        it.state = step(before, Event.WITHDRAW)
                        self._counters[out].doomed += 1
                        self.doomed_log.append((out, key))
                for d2 in self._child_domains[d]:
                    if (d2, key.path) in self._children:
                        stack.append((d2, key.path))

    def take_doomed(self) -> list[tuple[str, EntityKey]]:
        """Items doomed while in flight since the last call (for the executor to cancel)."""
        out, self.doomed_log = self.doomed_log, []
        return out

    # -- progress --------------------------------------------------------------------------
    def progress(self) -> dict[str, dict]:
        """Counters per call (items by state, batches, rejected reports) and for roots."""
        out: dict[str, dict] = {}
        by_call: dict[str, Counter] = {c: Counter() for c in self.call_nodes}
        for (call, _), it in self.items.items():
            by_call[call][it.state.value] += 1
        for call, cnt in by_call.items():
            c = self._counters[call]
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

    def finished(self, index: int, at: Optional[float] = None) -> Finished:
        """A completed root as the caller sees it (``at``: now on the runtime's clock by default)."""
        outs = self.root_outputs(index)
        outcome = worst(o for o, _ in outs.values())
        failure = None if outcome is P else self.cause_of(self.roots[index])
        records = tuple(self._root_records.get(index, ())) if self.forget else ()
        return Finished(index, outcome, {k: v for k, (o, v) in outs.items()}, failure,
                        self.clock() if at is None else at, records)

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
            self.completed_at.append(self.clock())

    def _on_call_input(self, node: Node, key: EntityKey) -> None:
        it = self.items[(node.out, key)]
        it.pending -= 1
        if it.pending or it.state is not ItemState.WAITING:
            return  # still waiting, or already suppressed by a sibling's GroupFailure
        o = worst(self.values[(p, key)][0] for p in node.inputs)
        if o is P:
            if self._dead and self.is_withdrawn(key):  # created after its parent's children were withdrawn
                it.state = step(it.state, Event.WITHDRAW)
                c = self._counters[node.out]
                c.withdrawn += 1
                c.never_dispatched += 1
                return
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
                self._record(FailureRecord(node.out, key, FailureKind.FILTER, f"{type(e).__name__}: {e}",
                                           name=node.out))
                self._set(node.out, key, Outcome.FAILED, None)
                return
        self._set(node.out, key, P if keep else Outcome.DROPPED, value if keep else None)

    def _on_expand(self, node: Node, key: EntityKey) -> None:
        o, value = self.values[(node.inputs[0], key)]
        dom = node.domain
        reduces = self.plan.reduces_from.get(dom, ())
        if o is P and not isinstance(value, (list, tuple)):
            self._record(FailureRecord(node.out, key, FailureKind.EXPAND,
                                       f"expand needs a list, got {type(value).__name__}", name=node.out))
            o = Outcome.FAILED
        if o is not P:
            for r in reduces:
                self._set(r.out, key, o, None)
            return
        n = len(value)
        self._children[(dom, key.path)] = n
        if n:
            self._open[(dom, key.path)] = len(reduces)
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
        left = self._reduce_left.get(rk)
        if left is None:
            return  # resolved early: the parent already failed
        src, dom = node.inputs[0], key.domain
        policy = node.on_child_failure
        if policy is ChildFailure.FAIL_PARENT:
            o = self.values[(src, key)][0]
            if o is Outcome.FAILED or o is Outcome.SUPPRESSED:
                del self._reduce_left[rk]
                parent = EntityKey(node.domain, key.parent_path)
                cause = self.cause_of(key)
                why = "failed" if o is Outcome.FAILED else "was suppressed by a sibling's GroupFailure"
                self._record(FailureRecord(node.out, parent, FailureKind.CHILD,
                                           f"child {key} {why}" + (f" ({cause.reason})" if cause and cause.reason
                                                                   else ""), cause=cause, name=node.out))
                self._set(node.out, parent, Outcome.FAILED, None)
                self._reduce_resolved(dom, key.parent_path, early=left > 1)
                return
        left -= 1
        if left:
            self._reduce_left[rk] = left
            return
        del self._reduce_left[rk]
        n = self._children[(dom, key.parent_path)]
        vals = [self.values[(src, EntityKey(dom, key.parent_path + (j,)))] for j in range(n)]
        if policy is ChildFailure.KEEP_PARTIAL:
            out = [(o, v) for o, v in vals]
        else:  # FAIL_PARENT (no child failed, or it would have resolved above) or DROP_CHILD
            out = [v for o, v in vals if o is P]
        self._set(node.out, EntityKey(node.domain, key.parent_path), P, out)
        self._reduce_resolved(dom, key.parent_path, early=False)

    def _reduce_resolved(self, dom: str, parent: tuple, early: bool) -> None:
        k = (dom, parent)
        if early:
            self._early.add(k)
        self._open[k] -= 1
        if self._open[k] == 0:
            del self._open[k]
            if k in self._early:
                self._early.discard(k)
                self._withdraw_children(dom, parent)

    def _on_broadcast_source(self, node: Node, key: EntityKey) -> None:
        v = self.values[(node.inputs[0], key)]
        for d in self._bc_wait.pop((node.out, key), ()):
            self._set(node.out, d, *v)


@dataclass
class LineageResult:
    """Outputs per root (input order), plus failures and per-call counters of the run.

    A root is PRESENT when every output is; otherwise it is absent from ``ok``/``present()`` and,
    when FAILED, ``failed[index]`` holds its typed failure (a chain down to the first cause).
    ``completed_at`` and ``started_at`` are on the caller's clock (``time.time`` by default).
    """

    outputs: list[dict[str, tuple[Outcome, Any]]]
    failures: list[FailureRecord]
    counters: dict[str, CallCounters]  # a ByCall: keyed by call name (a port name works too)
    completion_order: list[int]
    completed_at: list[float]
    seconds: float
    extra: dict = field(default_factory=dict)
    started_at: float = 0.0
    failed: dict[int, Optional[FailureRecord]] = field(default_factory=dict)

    def values(self, name: str) -> list:
        """One output's values per root (None where absent)."""
        return [o[name][1] if o[name][0] is P else None for o in self.outputs]

    def outcomes(self, name: str) -> list[Outcome]:
        return [o[name][0] for o in self.outputs]

    def outcome(self, index: int) -> Outcome:
        """The root's outcome: PRESENT when every output is, else the worst absence."""
        return worst(o for o, _ in self.outputs[index].values())

    @property
    def ok(self) -> list[int]:
        """Indexes of the roots whose outputs are all PRESENT, in input order."""
        return [i for i in range(len(self.outputs)) if self.outcome(i) is P]

    def present(self, name: str) -> list:
        """One output's values for the PRESENT roots only (a failed root is not in the list)."""
        return [self.outputs[i][name][1] for i in self.ok]

    @property
    def metrics(self) -> dict[str, dict]:
        """Per call name: batches, items, mean fill, errors, rejected, never dispatched, doomed..."""
        return {name: c.as_dict() for name, c in self.counters.items()}

    @property
    def first_completed_s(self) -> Optional[float]:
        return self.completed_at[0] - self.started_at if self.completed_at else None

    def ledger_entries(self, samples: Optional[list] = None) -> list[dict]:
        """One error-ledger entry per failed root (``{op, error_type, message, sample, ...}``, as
        ``data_juicer.core.ledger.ErrorLedger.record`` takes): the first cause names the op."""
        out = []
        for i, rec in sorted(self.failed.items()):
            origin = rec.origin if rec is not None else None
            e = {"op": origin.name or origin.call if origin else "?",
                 "error_type": origin.kind.value if origin else "failed",
                 "message": rec.describe() if rec is not None else "failed", "root": i}
            if origin is not None and len(origin.key.path) > 1:
                e["entity"] = str(origin.key)
            if samples is not None:
                e["sample"] = samples[i]
            out.append(e)
        return out

    @classmethod
    def from_runtime(cls, rt: LineageRuntime, seconds: float, **extra) -> "LineageResult":
        if rt.forget:  # the roots' outputs went to the caller as they finished: counters and times only
            return cls([], [], rt.counters, list(rt.completed), list(rt.completed_at), seconds,
                       dict(extra, roots=len(rt.roots), peak_live_roots=rt.peak_live_roots), started_at=rt.t0)
        outputs = [rt.root_outputs(i) for i in range(len(rt.roots))]
        failed = {}
        for i, outs in enumerate(outputs):
            if worst(o for o, _ in outs.values()) is Outcome.FAILED:
                failed[i] = rt.cause_of(rt.roots[i])
        return cls(outputs, list(rt.failures), rt.counters, list(rt.completed), list(rt.completed_at), seconds,
                   dict(extra), started_at=rt.t0, failed=failed)
