"""Per-op row counts and time from inside an execution pass, across worker processes.

Each worker appends one small JSON line per batch to its own file; the executor sums them
after the pass. (A pass answered from the datasets cache writes none: the counts are then 0.)
"""

from __future__ import annotations

import json
import os
import shutil
import uuid


class StageCounters:
    def __init__(self, root: str, op_names: list[str]):
        self.path = os.path.join(root, uuid.uuid4().hex[:12])
        self.op_names = op_names
        os.makedirs(self.path, exist_ok=True)

    def collect(self) -> list[tuple[int, int, int, float]]:
        totals = [[0, 0, 0, 0.0] for _ in self.op_names]
        for name in os.listdir(self.path):
            with open(os.path.join(self.path, name), encoding="utf-8") as f:
                for line in f:
                    for t, row in zip(totals, json.loads(line)):
                        for j in range(4):
                            t[j] += row[j]
        shutil.rmtree(self.path, ignore_errors=True)
        return [tuple(t) for t in totals]


def append_counts(path: str, rows: list[list]) -> None:
    with open(os.path.join(path, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps(rows) + "\n")
