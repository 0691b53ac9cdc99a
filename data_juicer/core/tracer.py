"""Tracer (``open_tracer``): a few examples of what each op changed, in ``<job>/trace/``.

- ``sample_trace-<mapper>.jsonl``: ``{trace_keys..., "original_text", "processed_text"}`` for up to
  ``trace_num`` samples the mapper changed;
- ``sample_trace-<filter>.jsonl``: up to ``trace_num`` samples the filter removed, with their stats;
- ``duplicate-<dedup>.jsonl``: up to ``trace_num`` ``{"dup1", "dup2"}`` pairs.

Inside a pass each worker appends to its own part file, and only while its count for the op is
below ``trace_num``, so an untraced run pays nothing and a traced one very little.
"""

import json
import os
from collections import defaultdict
from typing import Optional, Sequence

from data_juicer.utils.constant import Fields

_INTERNAL = (Fields.error, Fields.context, Fields.row_index)


def _clean(sample: dict) -> dict:
    return {k: v for k, v in sample.items() if k not in _INTERNAL}


class TraceCollector:
    """Picklable; ships with a pass to the workers."""

    def __init__(self, folder: str, ops_to_trace: Sequence[str], trace_num: int, trace_keys: Sequence[str]):
        self.folder = folder
        self.parts = os.path.join(folder, ".parts")
        self.ops_to_trace = set(ops_to_trace)
        self.trace_num = trace_num
        self.trace_keys = list(trace_keys)
        self._counts: dict = defaultdict(int)
        os.makedirs(self.parts, exist_ok=True)

    def wants(self, op_name: str) -> bool:
        return (not self.ops_to_trace or op_name in self.ops_to_trace) and self._counts[op_name] < self.trace_num

    def _write(self, op_name: str, entries: list) -> None:
        room = self.trace_num - self._counts[op_name]
        entries = entries[:room]
        if not entries:
            return
        self._counts[op_name] += len(entries)
        path = os.path.join(self.parts, f"{op_name}.{os.getpid()}.jsonl")
        with open(path, "a", encoding="utf-8") as f:
            for e in entries:
                f.write(json.dumps(e, ensure_ascii=False, default=str) + "\n")

    def mapper(self, op_name: str, text_key: str, before: list, after: dict) -> None:
        new = after.get(text_key)
        if new is None or len(new) != len(before):  # a fan-out mapper: rows do not line up
            return
        order = after.get(Fields.row_index)
        entries = []
        for i, (old, cur) in enumerate(zip(before, new)):
            if old != cur:
                entry = {k: after[k][i] for k in self.trace_keys if k in after}
                entry.update(original_text=old, processed_text=cur)
                entries.append({"_o": order[i] if order else None, "e": entry})
                if len(entries) >= self.trace_num:
                    break
        self._write(op_name, entries)

    def filter(self, op_name: str, samples: dict, keep: list) -> None:
        keys = list(samples)
        order = samples.get(Fields.row_index)
        dropped = [{"_o": order[i] if order else None, "e": _clean({k: samples[k][i] for k in keys})}
                   for i, k_ in enumerate(keep) if not k_]
        self._write(op_name, dropped[: self.trace_num])

    def duplicates(self, op_name: str, dup_pairs: Optional[dict]) -> None:
        if not dup_pairs or not (not self.ops_to_trace or op_name in self.ops_to_trace):
            return
        rows = [{"dup1": _clean(v[0]), "dup2": _clean(v[1])} for v in list(dup_pairs.values())[: self.trace_num]
                if len(v) >= 2]
        with open(os.path.join(self.folder, f"duplicate-{op_name}.jsonl"), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")

    def finish(self) -> None:
        """Merge the workers' part files into ``sample_trace-<op>.jsonl`` (first trace_num lines)."""
        if not os.path.isdir(self.parts):
            return
        by_op: dict = defaultdict(list)
        for name in sorted(os.listdir(self.parts)):
            by_op[name.rsplit(".", 2)[0]].append(os.path.join(self.parts, name))
        for op_name, files in by_op.items():
            items: list = []
            for path in files:
                with open(path, encoding="utf-8") as f:
                    items.extend(json.loads(line) for line in f)
            # the first samples in input order, whichever worker saw them
            items.sort(key=lambda x: (x["_o"] is None, x["_o"] or 0))
            with open(os.path.join(self.folder, f"sample_trace-{op_name}.jsonl"), "a", encoding="utf-8") as f:
                for x in items[: self.trace_num]:
                    f.write(json.dumps(x["e"], ensure_ascii=False, default=str) + "\n")
            for path in files:
                os.remove(path)
        os.rmdir(self.parts)
