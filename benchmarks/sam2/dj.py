# ruff: noqa: I001  (DJ's package installer is switched off before its op module is imported)
"""Data-Juicer 1.6.1's video_object_segmenting_mapper (its own code, transformers 4.57) on the same
tiny SAM2 files and video; YOLOE is replaced by the detections our run dumped (ultralytics is not in
DJ's venv), so what is compared is DJ's frame reading + SAM2 session + propagation + post-processing."""
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
sam2, video, out = sys.argv[1:4]
binarize = len(sys.argv) < 5 or sys.argv[4] != "logits"
from data_juicer.utils.lazy_loader import LazyLoader
LazyLoader._install_package = classmethod(lambda cls, *a, **k: None)  # DJ's op pip-installs transformers at init: offline here
import data_juicer.ops.mapper.video_object_segmenting_mapper as mod
from data_juicer.utils.constant import Fields
det = json.loads(Path(out + "_yoloe.json").read_text())

class Boxes:
    xyxy, cls, conf = torch.tensor(det["xyxy"]), torch.tensor(det["cls"]), torch.tensor(det["conf"])

class R:
    boxes, names = Boxes, {int(k): v for k, v in det["names"].items()}

class FakeYoloe:
    def set_classes(self, *a): pass
    def get_text_pe(self, *a): return None
    def predict(self, path, verbose=False, conf=0.5):
        import cv2
        np.save(out + "_dj_first.npy", cv2.imread(path))
        return [R]

real_get = mod.get_model
mod.get_model = lambda model_key=None, rank=None, use_cuda=False: (
    FakeYoloe() if model_key is op.yoloe_model_key else real_get(model_key=model_key, rank=rank, use_cuda=use_cuda))
op = mod.VideoObjectSegmentingMapper(sam2_hf_model=sam2, yoloe_path="unused.pt", yoloe_conf=0.98,
                                     torch_dtype="fp32", if_binarize=binarize)
t, c = time.time(), time.process_time()
s = op.process_single({"videos": [video], "main_character_list": ["dog", "red car"], Fields.meta: {}})
print("dj wall", round(time.time() - t, 2), "cpu", round(time.process_time() - c, 2))
Path(out + "_djtag.json").write_text(json.dumps(s[Fields.meta]["video_object_segment_tags"]))
