"""Op-level checkpoints (``use_checkpoint: true``), one mechanism for both backends.

After each execution stage (or every ``checkpoint.n_ops`` ops) the dataset is saved under
``<checkpoint_dir>/latest`` by the backend's store (``save_to_disk`` on Hugging Face, one
Parquet file per block with the stable ids on Ray; under ``<checkpoint_dir>/ray``): written to a
temporary folder, then swapped in, with ``ckpt_ops.json`` naming the ops already applied and the
input it started from. A rerun of the same recipe whose op list starts with those ops, on the
same input, loads the checkpoint and goes on from the next op.
"""

import json
import os
import shutil
import uuid
from typing import Optional

from loguru import logger

STATE_FILE = "ckpt_ops.json"


def input_signature(recipe) -> list:
    """What the run read: paths with their sizes and modification times."""
    from data_juicer.core.loader import parse_dataset_path, specs_from_dataset_config

    if recipe.dataset_config:
        specs, max_n = specs_from_dataset_config(recipe.dataset_config)
    else:
        specs, max_n = parse_dataset_path(recipe.dataset_path), None
    sig = [max_n]
    for s in specs:
        files = [s.path] if os.path.isfile(s.path) else sorted(
            os.path.join(r, f) for r, _, fs in os.walk(s.path) for f in fs)
        sig.append([s.weight, [(os.path.abspath(f), os.path.getsize(f), int(os.path.getmtime(f))) for f in files]])
    return sig


class Checkpointer:
    def __init__(self, folder: str, process: list[dict], signature: list, store):
        """``store``: the backend, whose ``save(ds, folder)`` / ``restore(folder)`` write and read a dataset."""
        self.folder = folder
        self.process = json.loads(json.dumps(process, default=str))
        self.signature = json.loads(json.dumps(signature))
        self.store = store
        os.makedirs(folder, exist_ok=True)

    @property
    def latest(self) -> str:
        return os.path.join(self.folder, "latest")

    def resume(self) -> Optional[tuple[int, object]]:
        """(number of ops already applied, dataset) if a matching checkpoint exists."""
        state_path = os.path.join(self.folder, STATE_FILE)
        if not (os.path.exists(state_path) and os.path.isdir(self.latest)):
            return None
        with open(state_path, encoding="utf-8") as f:
            state = json.load(f)
        done = state.get("ops", [])
        if state.get("input") != self.signature:
            logger.info("checkpoint found but the input changed: starting from the beginning")
            return None
        if done != self.process[: len(done)]:
            logger.info("checkpoint found but the recipe's ops differ from it: starting from the beginning")
            return None
        return len(done), self.store.restore(self.latest)

    def save(self, ds, n_ops_done: int):
        """Save ``ds`` as the state after ``n_ops_done`` recipe ops; return the dataset to go on with."""
        tmp = os.path.join(self.folder, f".tmp-{uuid.uuid4().hex[:8]}")
        ds = self.store.save(ds, tmp)
        old = None
        if os.path.exists(self.latest):
            old = os.path.join(self.folder, f".old-{uuid.uuid4().hex[:8]}")
            os.replace(self.latest, old)
        os.replace(tmp, self.latest)
        state_tmp = os.path.join(self.folder, f".{STATE_FILE}.tmp")
        with open(state_tmp, "w", encoding="utf-8") as f:
            json.dump({"ops": self.process[:n_ops_done], "input": self.signature,
                       "backend": getattr(self.store, "name", "?")}, f)
        os.replace(state_tmp, os.path.join(self.folder, STATE_FILE))
        if old:
            shutil.rmtree(old, ignore_errors=True)
        return ds
