"""Our op on the tiny models; dumps the tag and the YOLOE result of the first frame for DJ's run."""
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import numpy as np

import data_juicer.ops.mapper.video_object_segmenting_mapper as mod
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields

sam2, yoloe, video, out = sys.argv[1:5]
binarize = len(sys.argv) < 6 or sys.argv[5] != "logits"
op = OPERATORS.get("video_object_segmenting_mapper")(sam2_hf_model=sam2, yoloe_path=yoloe, yoloe_conf=0.98,
                                                     torch_dtype="fp32", if_binarize=binarize, accelerator="cpu")
first = mod.jpeg_roundtrip(mod.video_frames(video, limit=1)[0])
np.save(out + "_first.npy", np.asarray(first)[:, :, ::-1])
res = op.detect([mod.video_frames(video, limit=1)[0]], [["dog", "red car"]])[0]
Path(out + "_yoloe.json").write_text(json.dumps({"xyxy": res.boxes.xyxy.tolist(), "cls": res.boxes.cls.tolist(),
                                                "conf": res.boxes.conf.tolist(), "names": res.names}))
t, c = time.time(), time.process_time()
tag = op.process_batched({"videos": [[video]], "main_character_list": [["dog", "red car"]]})[Fields.meta][0]
print("ours wall", round(time.time() - t, 2), "cpu", round(time.process_time() - c, 2))
Path(out + "_tag.json").write_text(json.dumps(tag["video_object_segment_tags"]))
