"""Tiny seeded models for the ops of models-b (DWPose ONNX pair, YOLOE + its text encoder),
built from code / configs and saved in the folder layout the ops load from."""

from __future__ import annotations

import os


def build_dwpose_onnx(folder: str, det_name: str = "yolox_l.onnx", pose_name: str = "dw-ll_ucoco_384.onnx",
                      seed: int = 0, pose_hw=(64, 48), dynamic: bool = True) -> tuple[str, str]:
    """A YOLOX-shaped detector ((N, 3, 640, 640) -> (N, 8400, 85): strides 8/16/32, sigmoid
    objectness and classes) and a SimCC pose model ((N, 3, H, W) -> simcc_x (N, 133, 2W),
    simcc_y (N, 133, 2H)), seeded random weights, exported with torch.onnx."""
    import torch
    from torch import nn

    torch.manual_seed(seed)

    class Det(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = nn.ModuleList([nn.Conv2d(3, 85, 1) for _ in range(3)])
            self.pools = nn.ModuleList([nn.AvgPool2d(s) for s in (8, 16, 32)])
            # objectness follows the brightness of a cell (a bright blob is a "person"), class 0
            # wins, boxes are about 12 cells wide; plus seeded noise
            for h in self.heads:
                nn.init.normal_(h.weight, std=0.01)
                nn.init.normal_(h.bias, std=0.05)
                with torch.no_grad():
                    h.weight[4] += 10.0 / 3
                    h.bias[2:4] += 2.5
                    h.bias[4] += -7.0
                    h.bias[5] += 2.0
                    h.bias[6:] += -3.0

        def forward(self, x):
            x = x / 255.0
            outs = []
            for pool, head in zip(self.pools, self.heads):
                y = head(pool(x))  # (N, 85, h, w)
                y = y.flatten(2).transpose(1, 2)  # (N, h*w, 85)
                outs.append(torch.cat([y[..., :2], y[..., 2:4].clamp(-2, 3), torch.sigmoid(y[..., 4:])], -1))
            return torch.cat(outs, 1)

    h, w = pose_hw

    class Pose(nn.Module):
        def __init__(self):
            super().__init__()
            self.feat = nn.Sequential(nn.AdaptiveAvgPool2d((4, 3)), nn.Flatten(), nn.Linear(36, 64), nn.Tanh())
            self.x = nn.Linear(64, 133 * 2 * w)
            self.y = nn.Linear(64, 133 * 2 * h)

        def forward(self, img):
            f = self.feat(img)
            return self.x(f).reshape(-1, 133, 2 * w), self.y(f).reshape(-1, 133, 2 * h)

    os.makedirs(folder, exist_ok=True)
    det_path, pose_path = os.path.join(folder, det_name), os.path.join(folder, pose_name)
    axes = {"input": {0: "n"}} if dynamic else None
    with torch.no_grad():
        torch.onnx.export(Det().eval(), torch.zeros(1, 3, 640, 640), det_path, input_names=["input"],
                          output_names=["output"], dynamic_axes=axes, dynamo=False)
        torch.onnx.export(Pose().eval(), torch.zeros(1, 3, h, w), pose_path, input_names=["input"],
                          output_names=["simcc_x", "simcc_y"], dynamic_axes=axes, dynamo=False)
    return det_path, pose_path


def build_yoloe(folder: str, name: str = "yoloe-11l-seg.pt", seed: int = 0, std: float = 0.1,
                embed: int = 512) -> str:
    """A tiny random YOLOE-11-seg (text-prompted) saved at ``folder/name``, and beside it the
    MobileCLIP text encoder it loads (``mobileclip_blt.ts``: a TorchScript bag of token
    embeddings + a linear layer, L2-normalised, seeded)."""
    os.environ.setdefault("YOLO_OFFLINE", "1")
    import torch
    from torch import nn
    from ultralytics import YOLOE

    from tests.models.tiny_other_models import _tiny_yaml, _ultralytics_cfg, fill_random

    os.makedirs(folder, exist_ok=True)
    y = _tiny_yaml(_ultralytics_cfg("11/yoloe-11-seg.yaml"), os.path.join(folder, "yoloe-11-seg-tiny.yaml"))
    model = YOLOE(y)
    fill_random(model.model, seed, std)
    path = os.path.join(folder, name)
    model.save(path)

    class Text(nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(seed)
            self.emb = nn.Parameter(torch.randn(49408, 16, generator=g))
            self.proj = nn.Parameter(torch.randn(16, embed, generator=g) * 0.25)

        def forward(self, tokens):
            mask = (tokens > 0).float().unsqueeze(-1)
            feats = (self.emb[tokens] * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            out = feats @ self.proj
            return out / torch.sqrt((out * out).sum(-1, keepdim=True))

    torch.jit.script(Text()).save(os.path.join(folder, "mobileclip_blt.ts"))
    return path


def build_wordnet_nouns(nltk_data: str, nouns=("cat", "dog", "mat", "mouse", "car", "box", "glass"),
                        exceptions=(("mice", "mouse"),)) -> str:
    """A tiny WordNet noun index (``corpora/wordnet/index.noun`` + ``noun.exc``) in NLTK's
    layout, the two files the noun lemmatizer reads; returns the folder."""
    folder = os.path.join(nltk_data, "corpora", "wordnet")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "index.noun"), "w") as f:
        f.write("  1 This is a tiny test index (licence header lines start with spaces)\n")
        for k, n in enumerate(sorted(nouns)):
            f.write(f"{n} n 1 1 @ 1 0 {k:08d}  \n")
    with open(os.path.join(folder, "noun.exc"), "w") as f:
        for a, b in exceptions:
            f.write(f"{a} {b}\n")
    return folder
