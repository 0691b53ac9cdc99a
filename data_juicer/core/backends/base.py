"""The backend interface the executor runs a recipe over."""

from __future__ import annotations

from typing import Optional

import pyarrow as pa


class Backend:
    """What differs between running on Hugging Face ``datasets`` and on Ray Data.

    ``ds`` below is the backend's own dataset (a ``datasets.Dataset`` or a ``RayDataset``).
    """

    name = "?"
    checkpoint_subdir = ""  # checkpoints of this backend live in <checkpoint_dir>/<subdir>
    # recipe keys accepted for compatibility that have no effect on this backend
    no_effect: tuple = ()

    def __init__(self, recipe, job):
        self.recipe = recipe
        self.cfg = recipe.cfg
        self.job = job
        self.ledger = job.ledger

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    @property
    def workers(self) -> int:
        """Worker processes / CPUs row-wise passes can use."""
        return 1

    # -- data ------------------------------------------------------------------------------
    def load(self):
        raise NotImplementedError

    def num_rows(self, ds) -> int:
        return ds.num_rows

    def head(self, ds, n: int) -> dict:
        """The first ``n`` rows as a columnar batch (the adapter's probe)."""
        raise NotImplementedError

    def first(self, ds, n: int):
        """A dataset of the first ``n`` rows."""
        return ds.select(range(min(n, self.num_rows(ds))))

    def columns(self, ds, names) -> pa.Table:
        """Only these columns (those that exist), gathered as one Arrow table."""
        raise NotImplementedError

    def first_row(self, ds, exclude=()) -> Optional[dict]:
        raise NotImplementedError

    # -- stages ----------------------------------------------------------------------------
    def run_pass(self, stage, ds, run, batch_size: int, num_proc: int, hash_only: Optional[list]):
        """One pass of ``run`` (a ``FusedRun`` of ``stage.ops``) over ``ds``; the rows it marks as
        failed go to ``self.ledger``. ``hash_only``: the pass is only a deduplicator's hashing of
        these columns (the hashes are dropped after the dedup)."""
        raise NotImplementedError

    def run_global(self, op, ds, show_num: int = 0):
        """A dataset-level op; returns (dataset, duplicate pairs or None)."""
        raise NotImplementedError

    can_stream = False  # run_streamed is implemented

    def run_streamed(self, op, ds, stage, run, batch_size: int):
        """A streaming dataset-level op (``op.iter_bursts(dataset)`` yields its output rows as they
        are finished: lists of ``(input index, rows)``) fused with the row-wise ``stage`` after it:
        ``run`` (that stage's ``FusedRun``) is applied to each burst as it comes, so those ops do not
        wait for the op's slowest sample. Returns (dataset in input order, rows the op gave)."""
        raise NotImplementedError

    def after_stage(self, before, after) -> None:
        pass

    # -- checkpoint store ------------------------------------------------------------------
    def save(self, ds, folder: str):
        """Write ``ds`` to ``folder``; return the dataset to go on with."""
        raise NotImplementedError

    def restore(self, folder: str):
        raise NotImplementedError

    # -- export ----------------------------------------------------------------------------
    def export(self, ds, exporter):
        raise NotImplementedError
