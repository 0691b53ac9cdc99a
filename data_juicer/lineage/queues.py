"""Per-call FIFO ready queues that form physical batches.

``any`` policy: one FIFO; a batch takes the oldest ready items, whatever their parents.
``single`` policy: FIFO of parents, each with its FIFO of items; a batch holds one parent's items.
Entries whose item is no longer READY (suppressed after queueing) are skipped when popped.
``room(key)``, when given, says whether the key's parent may have one more item in flight;
keys without room stay queued, in order, and the batch takes the next parents' items.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Callable, Optional

from data_juicer.lineage.model import EntityKey


class ReadyQueue:
    def __init__(self, policy: str, batch_size: int):
        self.policy = policy
        self.batch_size = batch_size
        self._fifo: deque[EntityKey] = deque()
        self._by_parent: OrderedDict[tuple, deque[EntityKey]] = OrderedDict()
        self._pinned: deque[list[EntityKey]] = deque()  # retried or split batches go first, as they are
        self._n = 0
        self.held = False  # the last pop left ready keys queued for want of room

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

    def pop_batch(self, is_ready: Callable[[EntityKey], bool],
                  room: Optional[Callable[[EntityKey], bool]] = None) -> list[EntityKey]:
        """Up to ``batch_size`` ready keys (may be empty when only stale entries were left, or
        when every ready key's parent is out of room: then ``held`` is true)."""
        self.held = False
        while self._pinned:
            group = [k for k in self._pinned.popleft() if is_ready(k)]
            if group:
                return group
        out: list[EntityKey] = []
        if self.policy == "any":
            q = self._fifo
            held: list[EntityKey] = []
            while q and len(out) < self.batch_size:
                k = q.popleft()
                self._n -= 1
                if not is_ready(k):
                    continue
                if room is not None and not room(k):
                    held.append(k)
                    continue
                out.append(k)
            if held:
                q.extendleft(reversed(held))
                self._n += len(held)
                self.held = not out
            return out
        parents = list(self._by_parent) if room is not None else None
        while self._by_parent and not out:
            if parents is not None:  # the first parent with room and a ready key
                parent = next((p for p in parents if p in self._by_parent and self._by_parent[p]
                               and room(self._by_parent[p][0])), None)
                if parent is None:
                    self.held = True
                    return out
                parents.remove(parent)
                q = self._by_parent[parent]
            else:
                parent, q = next(iter(self._by_parent.items()))
            while q and len(out) < self.batch_size:
                k = q[0]
                if is_ready(k) and room is not None and out and not room(k):
                    break
                q.popleft()
                self._n -= 1
                if is_ready(k):
                    out.append(k)
            if not q:
                del self._by_parent[parent]
        return out
