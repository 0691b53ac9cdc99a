"""Non-transformers vision models for ops, loaded offline once per process: torchvision's RAFT
optical flow, rembg's ONNX background-removal sessions, EasyOCR readers.

Each model is named by the file Data-Juicer's library would download (torchvision's weight file,
rembg's ``u2net.onnx``, EasyOCR's ``craft_mlt_25k.pth``...) and looked up in the model folders
(:func:`data_juicer.models.loader.model_dirs`) and in that library's own cache folder; nothing is
ever downloaded. A missing file is a FileNotFoundError naming every path looked at.
"""

from __future__ import annotations

import os
from typing import Any

from data_juicer.models.loader import load_once, model_dirs, models_dir
from data_juicer.utils.lazy import require

# torchvision's file names of the RAFT weights Data-Juicer uses (``Raft_*_Weights.DEFAULT``)
RAFT_FILES = {"raft_large": "raft_large_C_T_SKHT_V2-ff5fadd5.pth", "raft_small": "raft_small_C_T_V2-01064c6d.pth"}


def find_model_file(name: str, extra_dirs: list[str], who: str = "", what: str = "model file",
                    hint: str = "") -> str:
    """``<dir>/<name>`` for the first model folder, then each of ``extra_dirs`` holding it, else a
    FileNotFoundError naming every path looked at and how to provide the file."""
    looked = []
    for folder in list(dict.fromkeys(model_dirs() + [os.path.abspath(os.path.expanduser(d)) for d in extra_dirs])):
        full = os.path.join(folder, name)
        if os.path.exists(full):
            return full
        looked.append(full)
    by = f" (needed by {who})" if who else ""
    raise FileNotFoundError(f"{what} '{name}'{by} was not found; looked at: {'; '.join(looked)}. Models are never "
                            f"downloaded: put it at {os.path.join(models_dir(), name)} or set DJ_MODELS_DIR to a "
                            f"folder holding it{hint}.")


def _torch_hub_checkpoints() -> str:
    hub = os.environ.get("TORCH_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.join("~", ".cache")), "torch")
    return os.path.join(os.path.expanduser(hub), "hub", "checkpoints")


def resolve_raft(arch: str = "raft_large", who: str = "") -> str:
    """Local file of torchvision's ``arch`` weights (model folders, then torch hub's checkpoint folder)."""
    return find_model_file(RAFT_FILES[arch], [_torch_hub_checkpoints()], who, what=f"torchvision {arch} weights",
                           hint=f" (it is torchvision's {arch} weight file, Raft_*_Weights.DEFAULT)")


def load_raft(arch: str = "raft_large", device: str = "cpu", who: str = "") -> Any:
    """torchvision's RAFT model ``arch`` with its local weights, in eval mode on ``device``."""
    path = resolve_raft(arch, who)

    def build():
        torch = require("torch", who=who)
        tvm = require("torchvision", who=who).models.optical_flow
        model = getattr(tvm, arch)(weights=None, progress=False)
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            model.load_state_dict(state)
        except Exception as e:  # unpickling / key mismatch
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a valid torchvision {arch} state dict "
                             f"({type(e).__name__}: {e}); replace the file") from e
        return model.to(device).eval()

    return load_once(("raft", arch, path, device), build, owner=who or None)
