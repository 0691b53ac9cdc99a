"""The job folder of one run: recipe copies, the log, the error ledger and ``summary.json``.

Both backends share it; nothing in it depends on where the data lives.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from typing import Optional

from loguru import logger

from data_juicer.core.ledger import ErrorLedger


@dataclass
class OpReport:
    name: str
    rows_in: int = 0
    rows_out: int = 0
    errors: int = 0
    seconds: float = 0.0


@dataclass
class RunReport:
    job_dir: str
    export_files: list[str]
    stats_file: Optional[str]
    rows_in: int
    rows_out: int
    errors: int
    seconds: float
    ops: list[OpReport] = field(default_factory=list)


class Job:
    """Opens the job folder of ``recipe`` (``recipe.job_dir``), its log sink and its ledger."""

    def __init__(self, recipe):
        self.recipe = recipe
        self.dir = recipe.job_dir
        os.makedirs(self.dir, exist_ok=True)
        self.ledger = ErrorLedger(os.path.join(self.dir, "errors.jsonl"), recipe.id_keys)
        self.counters_root = os.path.join(self.dir, ".counters")
        self._log_sink = None
        self._write_folder()

    def _write_folder(self) -> None:
        import yaml

        recipe = self.recipe
        log_dir = recipe.get("event_log_dir") or os.path.join(self.dir, "logs")
        os.makedirs(log_dir, exist_ok=True)
        self._log_sink = logger.add(os.path.join(log_dir, "dj-process.log"), level="DEBUG", enqueue=False)
        if recipe.raw_yaml is not None:
            with open(os.path.join(self.dir, "recipe.yaml"), "w", encoding="utf-8") as f:
                f.write(recipe.raw_yaml)
        resolved = dict(recipe.cfg, process=recipe.process)
        with open(os.path.join(self.dir, "cli.yaml"), "w", encoding="utf-8") as f:
            f.write(f"# dj-process {' '.join(recipe.argv)}\n")
            yaml.safe_dump(json.loads(json.dumps(resolved, default=str)), f, sort_keys=False, allow_unicode=True)

    def write_summary(self, r: RunReport) -> None:
        summary = {
            "job_dir": r.job_dir, "export_files": r.export_files, "stats_file": r.stats_file,
            "rows_in": r.rows_in, "rows_out": r.rows_out, "errors": r.errors, "seconds": round(r.seconds, 3),
            "errors_by_op": dict(self.ledger.counts),
            "ops": [vars(o) for o in r.ops],
        }
        with open(os.path.join(self.dir, "summary.json"), "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2, ensure_ascii=False)

    def close(self) -> None:
        shutil.rmtree(self.counters_root, ignore_errors=True)
        if self._log_sink is not None:
            try:
                logger.remove(self._log_sink)
            except ValueError:
                pass
            self._log_sink = None
