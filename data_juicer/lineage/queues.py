"""Per-call FIFO ready queues that form physical batches.

``any`` policy: one FIFO; a batch takes the oldest ready items, whatever their parents.
``single`` policy: FIFO of parents, each with its FIFO of items; a batch holds one parent's items.
Entries whose item is no longer READY (suppressed after queueing) are skipped when popped.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Callable

from data_juicer.lineage.model import EntityKey


class ReadyQueue:
    def __init__(self, policy: str, batch_size: int):
        self.policy = policy
        self.batch_size = batch_size
        self._fifo: deque[EntityKey] = deque()
        self._by_parent: OrderedDict[tuple, deque[EntityKey]] = OrderedDict()
        self._pinned: deque[list[EntityKey]] = deque()  # retried or split batches go first, as they are
        self._n = 0

    def __len__(self) -> int:
        return self._n + sum(len(g) for g in self._pinned)

    def push(self, key: EntityKey) -> None:
        self._n += 1
        if self.policy == "any":
            self._fifo.append(key)
        else:
            self._by_parent.setdefault(key.parent_path, deque()).append(key)

    def pin_front(self, *groups: list[EntityKey]) -> None:
        """Batches to form exactly as given, before anything else (first group first)."""
        for g in reversed(groups):
            self._pinned.appendleft(list(g))

    def pop_batch(self, is_ready: Callable[[EntityKey], bool]) -> list[EntityKey]:
        """Up to ``batch_size`` ready keys (may be empty when only stale entries were left)."""
        while self._pinned:
            group = [k for k in self._pinned.popleft() if is_ready(k)]
            if group:
                return group
        out: list[EntityKey] = []
        if self.policy == "any":
            q = self._fifo
            while q and len(out) < self.batch_size:
                k = q.popleft()
                self._n -= 1
                if is_ready(k):
                    out.append(k)
            return out
        while self._by_parent and not out:
            parent, q = next(iter(self._by_parent.items()))
            while q and len(out) < self.batch_size:
                k = q.popleft()
                self._n -= 1
                if is_ready(k):
                    out.append(k)
            if not q:
                del self._by_parent[parent]
        return out
