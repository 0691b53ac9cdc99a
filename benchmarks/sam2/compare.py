"""Compare our tag with Data-Juicer's (files written by ours.py and dj.py)."""
import json
import sys
from pathlib import Path

import numpy as np

out = sys.argv[1]
a, b = json.loads(Path(out + "_tag.json").read_text()), json.loads(Path(out + "_djtag.json").read_text())
f1, f2 = np.load(out + "_first.npy"), np.load(out + "_dj_first.npy")
print("first frame (YOLOE input) equal:", f1.shape == f2.shape and bool((f1 == f2).all()),
      "max abs diff", int(np.abs(f1.astype(int) - f2.astype(int)).max()))
for k in ("cls_id_dict", "object_cls_list", "yoloe_conf_list"):
    print(k, a[k] == b[k])
x, y = np.array(a["segment_data"], dtype=float), np.array(b["segment_data"], dtype=float)
print("segment_data shapes", x.shape, y.shape, "max abs diff", float(np.abs(x - y).max()) if x.shape == y.shape else None,
      "differing elements", int((x != y).sum()) if x.shape == y.shape else None)
