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


# -- rembg ----------------------------------------------------------------------------------
REMBG_MODEL = "u2net.onnx"  # rembg.remove's default session ("u2net")


def _rembg_dirs() -> list[str]:
    """Where rembg itself keeps ``u2net.onnx``: ``$U2NET_HOME`` (else ``~/.u2net``), and
    ``<$REMBG_HOME or $XDG_DATA_HOME/rembg or ~/.rembg>/models/u2net``."""
    legacy = os.environ.get("U2NET_HOME") or os.path.join("~", ".u2net")
    xdg = os.environ.get("XDG_DATA_HOME")
    home = os.environ.get("REMBG_HOME") or (os.path.join(xdg, "rembg") if xdg else os.path.join("~", ".rembg"))
    return [legacy, os.path.join(home, "models", "u2net")]


def resolve_rembg_model(who: str = "") -> str:
    """Local ``u2net.onnx``: the model folders, then rembg's own folders."""
    return find_model_file(REMBG_MODEL, _rembg_dirs(), who, what="rembg model",
                           hint=" (rembg's default U^2-Net ONNX model)")


def load_rembg_session(device: str = "cpu", who: str = "") -> Any:
    """A rembg ``u2net`` session (the one ``rembg.remove`` uses by default: same pre/post-processing)
    over the local ``u2net.onnx``, without rembg's download step."""
    path = resolve_rembg_model(who)

    def build():
        require("rembg", who=who)
        ort = require("onnxruntime", who=who)
        from rembg.sessions.u2net import U2netSession

        class LocalU2netSession(U2netSession):
            @classmethod
            def download_models(cls, *args, **kwargs):
                return kwargs["model_path"]

        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device.startswith("cuda") else \
            ["CPUExecutionProvider"]
        try:
            return LocalU2netSession("u2net", ort.SessionOptions(), providers=providers, model_path=path)
        except Exception as e:  # onnxruntime raises its own exception types for a bad graph
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a loadable ONNX model "
                             f"({type(e).__name__}: {e}); replace the file") from e

    return load_once(("rembg", path, device), build, owner=who or None)


# -- EasyOCR --------------------------------------------------------------------------------
CRAFT_MODEL = "craft_mlt_25k.pth"  # EasyOCR's default text detector (CRAFT)


def _easyocr_dir() -> str:
    return os.path.join(os.environ.get("EASYOCR_MODULE_PATH") or os.path.join("~", ".EasyOCR"), "model")


def resolve_craft(who: str = "") -> str:
    """Local ``craft_mlt_25k.pth``: the model folders, then EasyOCR's own (``~/.EasyOCR/model``)."""
    return find_model_file(CRAFT_MODEL, [_easyocr_dir()], who, what="EasyOCR text detector",
                           hint=" (EasyOCR's CRAFT detector; copy it from ~/.EasyOCR/model of a machine that has it)")


def load_easyocr_detector(languages: list[str], device: str = "cpu", who: str = "") -> Any:
    """An ``easyocr.Reader`` (detection only, as Data-Juicer builds it: ``recognizer=False``) whose CRAFT
    detector is the local file. The weights are loaded with EasyOCR's own ``get_detector`` (same
    network, same CPU quantization); unlike ``Reader`` this never downloads nor checks the file's MD5."""
    path = resolve_craft(who)

    def build():
        easyocr = require("easyocr", who=who)
        from easyocr.detection import get_detector, get_textbox

        reader = easyocr.Reader(lang_list=list(languages), gpu=device.startswith("cuda"), detector=False,
                                recognizer=False, verbose=False, download_enabled=False)
        reader.detect_network = "craft"
        reader.get_textbox = get_textbox
        reader.device = device
        try:
            reader.detector = get_detector(path, device=device, quantize=reader.quantize,
                                           cudnn_benchmark=getattr(reader, "cudnn_benchmark", False))
        except Exception as e:  # unpickling / key mismatch
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a valid EasyOCR CRAFT state dict "
                             f"({type(e).__name__}: {e}); replace the file") from e
        return reader

    return load_once(("easyocr_detector", path, tuple(languages), device), build, owner=who or None)


# -- ptlflow --------------------------------------------------------------------------------
def resolve_ptlflow_ckpt(model_name: str, ckpt_path: str, who: str = "") -> str:
    """Local checkpoint of ptlflow model ``model_name``: ``ckpt_path`` when it is a file, else the file
    ptlflow would download for the pretrained name ``ckpt_path`` (e.g. ``things``), by its file name,
    in the model folders and torch hub's checkpoint folder (where ptlflow caches it)."""
    if os.path.isfile(os.path.expanduser(ckpt_path)):
        return os.path.abspath(os.path.expanduser(ckpt_path))
    ptlflow = require("ptlflow", who=who)
    try:
        ref = ptlflow.get_model_reference(model_name)
    except Exception as e:  # ptlflow raises ValueError for an unknown name
        raise ValueError(f"{who + ': ' if who else ''}unknown ptlflow model '{model_name}' ({e})") from e
    url = getattr(ref, "pretrained_checkpoints", {}).get(ckpt_path)
    if url is None:
        names = ", ".join(getattr(ref, "pretrained_checkpoints", {})) or "none"
        raise FileNotFoundError(f"{who + ': ' if who else ''}ckpt_path '{ckpt_path}' is neither a file nor a "
                                f"pretrained checkpoint name of ptlflow model '{model_name}' (names: {names})")
    return find_model_file(os.path.basename(url), [_torch_hub_checkpoints()], who,
                           what=f"ptlflow {model_name} checkpoint '{ckpt_path}'",
                           hint=f" (ptlflow's file for {url}), or give its path as ckpt_path")


def load_ptlflow(model_name: str, ckpt_path: str, args: Any = None, device: str = "cpu", who: str = "") -> Any:
    """``ptlflow.get_model(model_name, ckpt_path=<local file>, args=args)`` in eval mode on ``device``."""
    path = resolve_ptlflow_ckpt(model_name, ckpt_path, who)

    def build():
        ptlflow = require("ptlflow", who=who)
        try:
            model = ptlflow.get_model(model_name, ckpt_path=path, args=args)
        except (RuntimeError, KeyError, OSError) as e:
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a valid ptlflow {model_name} checkpoint "
                             f"({type(e).__name__}: {e}); replace the file") from e
        return model.to(device).eval()

    return load_once(("ptlflow", model_name, path, repr(args), device), build, owner=who or None)
