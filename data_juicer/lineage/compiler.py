"""Validate a ``Program`` and turn it into a ``Plan`` the runtime executes.

Checks, each with an error that says where and what to do: the domains form one tree; every
port is produced once and every input names a port that exists; the graph is acyclic; each
node's inputs live in domains it can read (same domain, or ``broadcast`` from an ancestor);
each child domain is created by exactly one ``expand`` and every ``expand`` is matched by a
``reduce`` back to its parent; outputs live in the root domain.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from data_juicer.lineage.failures import LineageError
from data_juicer.lineage.model import Node, Program


class ProgramError(LineageError):
    """A program that cannot run; the message lists every problem found."""

    def __init__(self, program: str, problems: list[str]):
        self.problems = problems
        super().__init__(f"lineage program '{program}' is invalid:\n" + "\n".join(f"  - {p}" for p in problems))


@dataclass
class Plan:
    name: str
    domains: list[str]  # root first, then by depth
    parent: dict[str, str | None]
    depth: dict[str, int]
    nodes: list[Node]  # topological order
    producer: dict[str, Node]  # port -> node
    port_domain: dict[str, str]
    consumers: dict[str, list[Node]]
    outputs: dict[str, str]
    expand_into: dict[str, Node] = field(default_factory=dict)  # child domain -> its expand
    reduces_from: dict[str, list[Node]] = field(default_factory=dict)  # child domain -> reduces

    @property
    def root(self) -> str:
        return self.domains[0]

    @property
    def inputs(self) -> list[str]:
        return [n.out for n in self.nodes if n.kind == "input"]

    @property
    def calls(self) -> list[Node]:
        return [n for n in self.nodes if n.kind == "call"]

    def nodes_at(self, domain: str, *kinds: str) -> list[Node]:
        return [n for n in self.nodes if n.kind in kinds and self.port_domain[n.out] == domain]

    def describe(self, cluster: dict | None = None) -> str:
        """The plan as text: domains, one line per node in execution order, then the calls'
        actor pools (replicas, CPUs and GPUs per replica, batch size, setup). With ``cluster``
        (e.g. ``{"CPU": 2}``, or ``ray.cluster_resources()``) an ``auto`` CPU share is resolved."""
        chain = " > ".join(f"{d}" for d in self.domains)
        lines = [f"lineage program '{self.name}': domains {chain}; {len(self.nodes)} nodes, "
                 f"{len(self.calls)} calls"]
        width = max(len(d) for d in self.domains)
        for n in self.nodes:
            lines.append(f"  {self.port_domain[n.out]:<{width}}  {n.describe()}")
        for name, port in self.outputs.items():
            lines.append(f"  {self.root:<{width}}  output {name} <- {port}")
        if self.calls:
            cpus = self.pool_cpus(cluster) if cluster is not None else {}
            where = f"on {cluster.get('CPU', 0):g} CPUs, {cluster.get('GPU', 0):g} GPUs" if cluster is not None \
                else "cpus 'auto': an equal share of what the other pools leave, at most 1"
            lines.append(f"  pools (one per call, alive for the whole run; {where}):")
            nw = max(len(n.call.name) for n in self.calls)
            for n in self.calls:
                c = n.call
                if c.inline:
                    lines.append(f"    {c.name:<{nw}}  inline in the driver  batch {c.batch_size} ({c.policy} parent)")
                    continue
                cpu = cpus.get(n.out, c.num_cpus)
                cpu = "auto" if cpu is None else f"{cpu:.3g}"
                setup = c.describe_setup()
                lines.append(f"    {c.name:<{nw}}  {c.replicas} x ({cpu} CPU, {c.num_gpus:g} GPU)  "
                             f"batch {c.batch_size} "
                             f"({c.policy} parent)" + (f"  setup {setup}" if setup else ""))
        return "\n".join(lines)

    def pool_cpus(self, cluster: dict) -> dict[str, float]:
        """CPUs per replica of each call (by port): its own ``num_cpus``, or an equal share of
        what is left. Every pool lives for the whole run, so a plan that needs more than the
        cluster has would wait for ever: that is a clear error here instead."""
        cpus, gpus = float(cluster.get("CPU", 0)), float(cluster.get("GPU", 0))
        calls = [n for n in self.calls if not n.call.inline]
        fixed = sum(n.call.num_cpus * n.call.replicas for n in calls if n.call.num_cpus is not None)
        auto = sum(n.call.replicas for n in calls if n.call.num_cpus is None)
        need_gpu = sum(n.call.num_gpus * n.call.replicas for n in calls)
        share = min(1.0, (cpus - fixed) / auto) if auto else 0.0
        if fixed > cpus or (auto and share < 0.01) or need_gpu > gpus:
            parts = ", ".join(f"{n.call.name} {n.call.replicas}x("
                              f"{'auto' if n.call.num_cpus is None else n.call.num_cpus} CPU, {n.call.num_gpus:g} GPU)"
                              for n in calls)
            raise ValueError(f"the lineage calls' actor pools need more than the Ray cluster has ({cpus:g} CPUs, "
                             f"{gpus:g} GPUs): {parts}. Lower num_cpus/num_gpus or replicas, or add resources")
        return {n.out: n.call.num_cpus if n.call.num_cpus is not None else share for n in calls}


def compile_program(program: Program) -> Plan:
    problems: list[str] = []
    doms = program.domains
    # domains: one tree
    roots = [d.name for d in doms.values() if d.parent is None]
    if not doms:
        raise ProgramError(program.name, ["no domain declared: start with program.domain('document')"])
    if len(roots) != 1:
        problems.append(f"exactly one root domain is needed (a domain without parent), found {roots or 'none'}")
    for d in doms.values():
        if d.parent is not None and d.parent not in doms:
            problems.append(f"domain '{d.name}' has unknown parent '{d.parent}'{_hint(d.parent, doms)}")
    depth: dict[str, int] = {}
    for name in doms:
        seen, cur, n = set(), name, 0
        while cur is not None and cur in doms and cur not in seen:
            seen.add(cur)
            cur, n = doms[cur].parent, n + 1
        if cur in seen:
            problems.append(f"domain '{name}' is its own ancestor")
        depth[name] = n - 1
    if problems:
        raise ProgramError(program.name, problems)
    root = roots[0]

    # ports: produced once, referenced ports exist
    producer: dict[str, Node] = {}
    for node in program.nodes:
        if node.out in producer:
            problems.append(f"port '{node.out}' is produced twice ({producer[node.out].kind} and {node.kind})")
        producer[node.out] = node
    for node in program.nodes:
        for p in node.inputs:
            if p not in producer:
                problems.append(f"{node.kind} '{node.out}' reads port '{p}', which no node produces"
                                f"{_hint(p, producer)}")
        if node.kind == "call" and not node.inputs:
            problems.append(f"call '{node.call.name}' has no input port")
        if node.kind in ("expand", "reduce", "broadcast", "input") and node.domain is not None \
                and node.domain not in doms:
            problems.append(f"{node.kind} '{node.out}' names unknown domain '{node.domain}'{_hint(node.domain, doms)}")
    for name, port in program.outputs.items():
        if port not in producer:
            problems.append(f"output '{name}' names port '{port}', which no node produces{_hint(port, producer)}")
    if not program.outputs:
        problems.append("the program has no output: add program.output(name, port)")
    if problems:
        raise ProgramError(program.name, problems)

    order = _topological(program.nodes, producer, problems)
    if problems:
        raise ProgramError(program.name, problems)

    # domains of ports, in order
    port_domain: dict[str, str] = {}
    expand_into: dict[str, Node] = {}
    reduces_from: dict[str, list[Node]] = {}
    for node in order:
        ins = [port_domain[p] for p in node.inputs]
        if node.kind == "input":
            dom = node.domain or root
            if dom != root:
                problems.append(f"input '{node.out}' is in domain '{dom}'; inputs belong to the root domain '{root}'")
        elif node.kind == "call" or node.kind == "filter":
            dom = ins[0]
            if len(set(ins)) > 1:
                pairs = ", ".join(f"{p} ({d})" for p, d in zip(node.inputs, ins))
                what = f"call '{node.call.name}'" if node.kind == "call" else f"filter '{node.out}'"
                problems.append(f"{what} mixes domains: {pairs}; bring an ancestor's value down with broadcast()")
        elif node.kind == "expand":
            dom = node.domain
            if doms[dom].parent != ins[0]:
                problems.append(f"expand '{node.out}' goes from '{ins[0]}' to '{dom}', but the parent of '{dom}' is "
                                f"'{doms[dom].parent}'")
            if dom in expand_into:
                problems.append(f"domain '{dom}' is expanded twice ('{expand_into[dom].out}' and '{node.out}'); "
                                "a domain's entities come from one expand")
            expand_into.setdefault(dom, node)
        elif node.kind == "reduce":
            dom = node.domain
            if doms[ins[0]].parent != dom:
                problems.append(f"reduce '{node.out}' goes from '{ins[0]}' to '{dom}', but the parent of '{ins[0]}' "
                                f"is '{doms[ins[0]].parent}'")
            reduces_from.setdefault(ins[0], []).append(node)
        else:  # broadcast
            dom = node.domain
            if not _is_ancestor(doms, ins[0], dom):
                problems.append(f"broadcast '{node.out}' goes from '{ins[0]}' to '{dom}', but '{ins[0]}' is not an "
                                f"ancestor of '{dom}'")
        port_domain[node.out] = dom
    for dom in doms:
        if dom != root and dom in port_domain.values() and dom not in expand_into:
            problems.append(f"domain '{dom}' is used but never expanded into: add program.expand(port, '{dom}')")
    for dom, node in expand_into.items():
        if not reduces_from.get(dom):
            problems.append(f"expand '{node.out}' into '{dom}' has no matching reduce: add "
                            f"program.reduce(<a '{dom}' port>, '{doms[dom].parent}')")
    for name, port in program.outputs.items():
        if port in port_domain and port_domain[port] != root:
            problems.append(f"output '{name}' is port '{port}' in domain '{port_domain[port]}'; outputs belong to the "
                            f"root domain '{root}' (reduce it first)")
    if problems:
        raise ProgramError(program.name, problems)

    consumers: dict[str, list[Node]] = {n.out: [] for n in order}
    for node in order:
        for p in dict.fromkeys(node.inputs):
            consumers[p].append(node)
    domains = sorted(doms, key=lambda d: depth[d])
    return Plan(program.name, domains, {d: doms[d].parent for d in doms}, depth, order, producer, port_domain,
                consumers, dict(program.outputs), expand_into, reduces_from)


def _topological(nodes: list[Node], producer: dict[str, Node], problems: list[str]) -> list[Node]:
    state: dict[str, int] = {}  # 1 visiting, 2 done
    order: list[Node] = []
    for start in nodes:
        if state.get(start.out):
            continue
        stack = [(start, iter(start.inputs))]
        state[start.out] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[node.out] = 2
                order.append(node)
            elif state.get(nxt) == 1:
                cycle = [n.out for n, _ in stack]
                cycle = cycle[cycle.index(nxt):] + [nxt]
                problems.append(f"the program has a cycle: {' -> '.join(reversed(cycle))}")
                return []
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((producer[nxt], iter(producer[nxt].inputs)))
    return order


def _is_ancestor(doms, anc: str, dom: str) -> bool:
    cur = doms[dom].parent
    while cur is not None:
        if cur == anc:
            return True
        cur = doms[cur].parent
    return False


def _hint(name: str, pool) -> str:
    close = difflib.get_close_matches(name, sorted(pool), n=2, cutoff=0.6)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
