"""The programming model: domains, entity keys, calls, ports, and a program built from them.

A *domain* is a level of granularity (document, page, chunk...); each domain but the root has
a parent domain. An *entity* is one unit of a domain, named by an immutable ``EntityKey``: the
root's index, then each ancestor's child ordinal. A *port* is a named value per entity of one
domain. A *call* is a configured use of a batched function: it maps columns of input values
to a list of outputs, one per item, and carries its batching, recovery and resources.

A ``Program`` wires ports together with one call node or one structural primitive each:
``expand`` (a parent's list becomes ordered children), ``reduce`` (children's surviving values
back to the parent as an ordered list), ``filter`` (a mask changes membership) and
``broadcast`` (an ancestor's value seen by descendants). ``compile_program`` validates it.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, NamedTuple, Optional, Union

from data_juicer.lineage.failures import ChildFailure

BatchPolicy = Literal["any", "single"]


class EntityKey(NamedTuple):
    """One entity: its domain and its path (root index, then child ordinals). Immutable and
    ordered; a tuple, so hashing it (the runtime's hottest operation) stays in C."""

    domain: str
    path: tuple[int, ...]

    @property
    def parent_path(self) -> tuple[int, ...]:
        return self.path[:-1]

    @property
    def ordinal(self) -> int:
        return self.path[-1]

    def __str__(self) -> str:
        return f"{self.domain}{list(self.path)}"


@dataclass(frozen=True, slots=True)
class Domain:
    name: str
    parent: Optional[str] = None


@dataclass(frozen=True, slots=True)
class Recovery:
    """What to do when a call raises on a batch.

    ``retries`` reruns of the same batch first; then ``split`` halves the batch until the failing
    item is alone and fails only it, ``abort`` does the same and stops the run at that item,
    ``fail`` fails all the batch's items.
    """

    mode: Literal["abort", "fail", "split"] = "split"
    retries: int = 0

    def __post_init__(self):
        if self.mode not in ("abort", "fail", "split"):
            raise ValueError(f"recovery mode must be 'abort', 'fail' or 'split', got {self.mode!r}")
        if self.retries < 0:
            raise ValueError(f"recovery retries must be >= 0, got {self.retries}")


@dataclass(frozen=True, slots=True)
class Call:
    """A configured batched function: ``fn(*columns) -> list`` (one output per item).

    An output may be a ``RecordFailure`` or ``GroupFailure``. With ``pass_keys`` the function
    also gets ``keys=[EntityKey, ...]``. ``policy`` says whether a batch may mix parents
    (``any``) or holds one parent's items (``single``). Resources (per replica) are for the Ray
    executor; all pools live for the whole run, so together they must fit the cluster.

    Per-replica state (a model, a client): make ``fn`` a class and declare its constructor
    arguments with ``.setup(*args, **kwargs)``; each replica builds one instance when it starts
    and calls it on every batch (``Call("embed", Embedder).setup("/models/minilm", device="cpu")``).
    A class without ``.setup`` is built with no arguments.

    ``max_in_flight_per_parent`` (default ``batch_size * replicas``) bounds how many items of one
    parent are dispatched and unreported at once; the other free slots take other parents'
    items. It bounds the work a failing parent wastes: its siblings already sent when the
    failure comes back.

    ``driver_start=False``: on Ray, the driver never builds a replica of this call to run batches
    while its actors start (``run_ray(driver_start=...)``); for a setup that loads a model.

    ``inline=True``: on Ray, the call runs in the driver between reports instead of on an actor
    pool. For cheap functions (splitting a text, combining a parent's results) this saves an
    actor's start-up and two object-store hops per batch; its resources are then ignored.
    """

    name: str
    fn: Callable[..., list]
    batch_size: int = 64
    policy: BatchPolicy = "any"
    recovery: Recovery = field(default_factory=Recovery)
    num_cpus: Optional[float] = None  # None: an equal share of the CPUs other calls leave (at most 1)
    num_gpus: float = 0.0
    replicas: int = 1
    pass_keys: bool = False
    inline: bool = False  # Ray executor: run in the driver, no actor pool (cheap functions: split, combine)
    # items of one parent in flight at once (None: batch_size x replicas, one batch per replica; 0: no limit)
    max_in_flight_per_parent: Optional[int] = None
    init_args: tuple = ()  # constructor arguments of a class ``fn``, recorded by ``setup``
    init_kwargs: tuple = ()  # (name, value) pairs: the dataclass stays hashable and frozen
    # Ray executor: while the actors start, a replica in a driver thread may run batches (False: a heavy
    # setup, e.g. a model, that the driver should not build a second copy of)
    driver_start: bool = True

    def __post_init__(self):
        if self.batch_size < 1:
            raise ValueError(f"call '{self.name}': batch_size must be >= 1, got {self.batch_size}")
        if self.policy not in ("any", "single"):
            raise ValueError(f"call '{self.name}': policy must be 'any' or 'single', got {self.policy!r}")
        if self.replicas < 1:
            raise ValueError(f"call '{self.name}': replicas must be >= 1, got {self.replicas}")
        if self.max_in_flight_per_parent is not None and self.max_in_flight_per_parent < 0:
            raise ValueError(f"call '{self.name}': max_in_flight_per_parent must be >= 0, got "
                             f"{self.max_in_flight_per_parent}")
        if (self.init_args or self.init_kwargs) and not isinstance(self.fn, type):
            raise ValueError(f"call '{self.name}': setup(...) arguments need fn to be a class (its constructor "
                             f"runs once per replica), got {type(self.fn).__name__}")

    def setup(self, *args, **kwargs) -> "Call":
        """The same call whose class ``fn`` each replica builds as ``fn(*args, **kwargs)``."""
        return dataclasses.replace(self, init_args=tuple(args), init_kwargs=tuple(kwargs.items()))

    @property
    def parent_cap(self) -> int:
        """Items of one parent in flight at once (0: no limit)."""
        m = self.max_in_flight_per_parent
        return self.batch_size * self.replicas if m is None else m

    @property
    def per_replica(self) -> bool:
        return isinstance(self.fn, type)

    def build(self) -> Callable[..., list]:
        """The batch function one replica uses: a fresh instance of a class ``fn``, else ``fn``."""
        if isinstance(self.fn, type):
            return self.fn(*self.init_args, **dict(self.init_kwargs))
        return self.fn

    def describe_setup(self) -> str:
        if not isinstance(self.fn, type):
            return ""
        parts = [repr(a) for a in self.init_args] + [f"{k}={v!r}" for k, v in self.init_kwargs]
        return f"{self.fn.__name__}({', '.join(parts)})"


@dataclass(frozen=True, slots=True)
class Port:
    """A handle on a named port of a program (returned by the builder methods)."""

    name: str

    def __str__(self) -> str:
        return self.name


PortRef = Union[Port, str]
NodeKind = Literal["input", "call", "expand", "reduce", "filter", "broadcast"]


@dataclass(slots=True)
class Node:
    kind: NodeKind
    out: str
    inputs: tuple[str, ...]
    domain: Optional[str] = None  # input/expand/reduce/broadcast: the output's domain
    call: Optional[Call] = None
    where: Optional[Callable[[Any], bool]] = None  # filter by predicate instead of a mask port
    on_child_failure: ChildFailure = ChildFailure.FAIL_PARENT  # reduce: see ChildFailure

    @property
    def outcomes(self) -> bool:  # reduce: every child as (Outcome, value)
        return self.on_child_failure is ChildFailure.KEEP_PARTIAL

    def describe(self) -> str:
        args = ", ".join(self.inputs)
        if self.kind == "call":
            c = self.call
            cpus = "auto" if c.num_cpus is None else f"{c.num_cpus:g}"
            setup = c.describe_setup()
            where = "inline (driver)" if c.inline else f"cpus {cpus}, gpus {c.num_gpus:g}, replicas {c.replicas}"
            extra = (f"batch {c.batch_size}, {c.policy} parent, on_error={c.recovery.mode}"
                     f"{f'+retry {c.recovery.retries}' if c.recovery.retries else ''}, {where}"
                     f"{f', setup {setup}' if setup else ''}"
                     f"{', no driver start' if not c.driver_start and not c.inline else ''}")
            return f"call {c.name}({args}) -> {self.out}   [{extra}]"
        if self.kind == "reduce":
            return f"reduce {args} -> {self.out}   [on_child_failure={self.on_child_failure.value}]"
        if self.kind == "filter" and self.where is not None:
            return f"filter {args} where {getattr(self.where, '__name__', 'predicate')} -> {self.out}"
        return f"{self.kind} {args} -> {self.out}".replace("input  ->", "input ->")


class Program:
    """Builder of a lineage program; ``compile()`` validates it and returns its ``Plan``."""

    def __init__(self, name: str = "program"):
        self.name = name
        self.domains: dict[str, Domain] = {}
        self.nodes: list[Node] = []
        self.outputs: dict[str, str] = {}
        self._ids = itertools.count()

    # -- declarations ----------------------------------------------------------------------
    def domain(self, name: str, parent: Union[str, Domain, None] = None) -> str:
        if name in self.domains:
            raise ValueError(f"program '{self.name}': domain '{name}' is declared twice")
        parent_name = parent.name if isinstance(parent, Domain) else parent
        self.domains[name] = Domain(name, parent_name)
        return name

    def _port(self, out: Optional[str], hint: str) -> str:
        return out or f"{hint}_{next(self._ids)}"

    def _add(self, node: Node) -> Port:
        self.nodes.append(node)
        return Port(node.out)

    def input(self, name: str, domain: Optional[str] = None) -> Port:
        """A value each root entity brings (``domain`` defaults to the root domain)."""
        return self._add(Node("input", name, (), domain=domain))

    def call(self, call: Call, *inputs: PortRef, out: Optional[str] = None) -> Port:
        return self._add(Node("call", self._port(out, call.name), tuple(str(p) for p in inputs), call=call))

    def expand(self, port: PortRef, domain: str, out: Optional[str] = None) -> Port:
        """Each entity's list value becomes ordered child entities of ``domain``."""
        return self._add(Node("expand", self._port(out, f"expand_{domain}"), (str(port),), domain=domain))

    def reduce(self, port: PortRef, domain: str, out: Optional[str] = None, *,
               on_child_failure: Union[ChildFailure, str] = ChildFailure.FAIL_PARENT,
               outcomes: bool = False) -> Port:
        """Each ``domain`` parent gets the ordered list of its children's values.

        A child a filter DROPPED is left out. A child that FAILED (or was SUPPRESSED by a
        sibling's GroupFailure) is handled by ``on_child_failure`` (see ``ChildFailure``):
        ``fail_parent`` (default: the parent is FAILED), ``drop_child`` (left out of the list) or
        ``keep_partial`` (every child as ``(Outcome, value or None)``; ``outcomes=True`` is the
        same)."""
        try:
            policy = ChildFailure(on_child_failure)
        except ValueError:
            raise ValueError(f"reduce into '{domain}': on_child_failure must be one of "
                             f"{', '.join(c.value for c in ChildFailure)}, got {on_child_failure!r}") from None
        if outcomes:
            policy = ChildFailure.KEEP_PARTIAL
        return self._add(Node("reduce", self._port(out, f"reduce_{domain}"), (str(port),), domain=domain,
                              on_child_failure=policy))

    def filter(self, port: PortRef, mask: Optional[PortRef] = None, *, where: Optional[Callable] = None,
               out: Optional[str] = None) -> Port:
        """Keep entities whose ``mask`` value (or ``where(value)``) is true; others are DROPPED."""
        if (mask is None) == (where is None):
            raise ValueError("filter takes a mask port or a where= predicate (exactly one)")
        inputs = (str(port),) if mask is None else (str(port), str(mask))
        return self._add(Node("filter", self._port(out, "filter"), inputs, where=where))

    def broadcast(self, port: PortRef, domain: str, out: Optional[str] = None) -> Port:
        """An ancestor's value made available to each of its descendants in ``domain``."""
        return self._add(Node("broadcast", self._port(out, f"broadcast_{domain}"), (str(port),), domain=domain))

    def output(self, name: str, port: PortRef) -> None:
        if name in self.outputs:
            raise ValueError(f"program '{self.name}': output '{name}' is declared twice")
        self.outputs[name] = str(port)

    def compile(self):
        from data_juicer.lineage.compiler import compile_program

        return compile_program(self)
