"""The job's error ledger: one JSON line per sample that was not processed, and why."""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Iterable, Sequence

from data_juicer.utils.constant import Fields


class ErrorLedger:
    def __init__(self, path: str, id_keys: Sequence[str] = ("id",)):
        self.path = path
        self.id_keys = tuple(id_keys)
        self.counts: Counter = Counter()

    def _sample_id(self, sample: dict):
        for k in self.id_keys:
            if isinstance(sample, dict) and sample.get(k) is not None:
                return {k: sample[k]}
        return None

    def record(self, entries: Iterable[dict]) -> int:
        """Append entries ({op, error_type, message, sample, ...}); return how many."""
        n = 0
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            for e in entries:
                sample = e.get("sample")
                if isinstance(sample, dict):
                    sample = {k: v for k, v in sample.items() if k not in (Fields.error, Fields.context)}
                    e = dict(e, sample=sample)
                    if "index" not in e and Fields.row_index in sample:
                        e["index"] = sample.pop(Fields.row_index)
                    sid = self._sample_id(sample)
                    if sid is not None:
                        e.setdefault("id", sid)
                f.write(json.dumps(e, ensure_ascii=False, default=str) + "\n")
                self.counts[e.get("op", "?")] += 1
                n += 1
        return n

    @property
    def total(self) -> int:
        return sum(self.counts.values())
