"""Tiny models with seeded random weights for the non-transformers model ops, saved in the layout
each op loads from (``DJ_MODELS_DIR/<Data-Juicer's file name>``), so the ops' real loading code runs.

- Ultralytics: a YOLO11 detector and a YOLOv8-seg (FastSAM's architecture) built from the
  package's own yaml with a tiny width, saved with ``YOLO.save`` as ``yolo11n.pt`` / ``FastSAM-x.pt``.
- torchvision RAFT: ``raft_small`` / ``raft_large`` state dicts under torchvision's weight file names.

Weights come from numpy's legacy ``RandomState`` (stable across versions), so values written
into tests stay valid. Random weights test loading, batching, pre/post-processing and output
shapes, not quality.
"""

from __future__ import annotations

import os

import numpy as np

RAFT_LARGE_FILE = "raft_large_C_T_SKHT_V2-ff5fadd5.pth"
RAFT_SMALL_FILE = "raft_small_C_T_V2-01064c6d.pth"


def fill_random(module, seed: int, std: float = 0.1):
    """Every float parameter/buffer of ``module`` from ``RandomState(seed)`` (norm layers: identity)."""
    import torch

    rs = np.random.RandomState(seed)
    state = module.state_dict()
    new = {}
    for name in sorted(state):
        t = state[name]
        if not t.is_floating_point():
            new[name] = t
            continue
        low = name.lower()
        if low.endswith("running_var"):
            new[name] = torch.ones_like(t)
        elif low.endswith("running_mean"):
            new[name] = torch.zeros_like(t)
        elif t.ndim == 1 and (".bn" in low or "norm" in low):
            new[name] = torch.ones_like(t) if name.endswith("weight") else torch.zeros_like(t)
        else:
            new[name] = torch.from_numpy(rs.normal(0.0, std, size=tuple(t.shape)).astype(t.dtype.__repr__()
                                                                                       .split(".")[-1]))
    module.load_state_dict(new, strict=True)
    return module


def _tiny_yaml(src: str, dest: str, width: float = 0.0625) -> str:
    import yaml

    with open(src) as f:
        cfg = yaml.safe_load(f)
    cfg["scales"] = {"n": [0.33, width, 256]}
    cfg["scale"] = "n"
    with open(dest, "w") as f:
        yaml.safe_dump(cfg, f)
    return dest


def _ultralytics_cfg(rel: str) -> str:
    import ultralytics

    return os.path.join(os.path.dirname(ultralytics.__file__), "cfg", "models", rel)


def build_yolo(folder: str, name: str = "yolo11n.pt", seed: int = 0, std: float = 0.1) -> str:
    """A tiny random YOLO11 detector (80 classes) saved at ``folder/name``."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    from ultralytics import YOLO

    os.makedirs(folder, exist_ok=True)
    y = _tiny_yaml(_ultralytics_cfg("11/yolo11.yaml"), os.path.join(folder, "yolo11-tiny.yaml"))
    model = YOLO(y)
    fill_random(model.model, seed, std)
    path = os.path.join(folder, name)
    model.save(path)
    return path


def build_fastsam(folder: str, name: str = "FastSAM-x.pt", seed: int = 0, std: float = 0.1) -> str:
    """A tiny random YOLOv8-seg (FastSAM's architecture, 1 class) saved at ``folder/name``."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    import yaml
    from ultralytics import YOLO

    os.makedirs(folder, exist_ok=True)
    y = _tiny_yaml(_ultralytics_cfg("v8/yolov8-seg.yaml"), os.path.join(folder, "fastsam-tiny.yaml"))
    with open(y) as f:
        cfg = yaml.safe_load(f)
    cfg["nc"] = 1
    with open(y, "w") as f:
        yaml.safe_dump(cfg, f)
    model = YOLO(y, task="segment")
    fill_random(model.model, seed, std)
    path = os.path.join(folder, name)
    model.save(path)
    return path


def build_raft(folder: str, large: bool = False, seed: int = 0, std: float = 0.02) -> str:
    """torchvision's ``raft_small`` / ``raft_large`` with random weights, saved under torchvision's file name."""
    import torch
    from torchvision.models.optical_flow import raft_large, raft_small

    os.makedirs(folder, exist_ok=True)
    model = (raft_large if large else raft_small)(weights=None, progress=False)
    fill_random(model, seed, std)
    path = os.path.join(folder, RAFT_LARGE_FILE if large else RAFT_SMALL_FILE)
    torch.save(model.state_dict(), path)
    return path


def build_u2net_onnx(folder: str, name: str = "u2net.onnx", seed: int = 0) -> str:
    """A tiny ONNX graph with U^2-Net's interface (``(1, 3, 320, 320)`` image -> ``(1, 1, 320, 320)``
    mask first output): one random 3x3 convolution and a sigmoid."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rs = np.random.RandomState(seed)
    w = numpy_helper.from_array(rs.normal(0, 0.5, size=(1, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(np.zeros(1, dtype=np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["input.1", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Sigmoid", ["c"], ["d0"])],
        "tiny_u2net",
        [helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [1, 3, 320, 320])],
        [helper.make_tensor_value_info("d0", TensorProto.FLOAT, [1, 1, 320, 320])],
        initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    onnx.save(model, path)
    return path


def build_craft(folder: str, name: str = "craft_mlt_25k.pth", seed: int = 0, std: float = 0.05,
                text_everywhere: bool = True) -> str:
    """EasyOCR's CRAFT text detector with random weights, saved as its state dict under EasyOCR's file name.

    With ``text_everywhere`` its last layer outputs a region/affinity score of 1 at every pixel
    (zero weights, bias 1), so the whole frame is one text box: a known answer for the tests.
    """
    import torch
    from easyocr.craft import CRAFT

    os.makedirs(folder, exist_ok=True)
    net = CRAFT(pretrained=False)
    fill_random(net, seed, std)
    if text_everywhere:
        last = net.conv_cls[-1]
        with torch.no_grad():
            last.weight.zero_()
            last.bias.fill_(1.0)
    path = os.path.join(folder, name)
    torch.save(net.state_dict(), path)
    return path
