"""The non-transformers model ops on Ray: run in actor pools, same output as the default executor."""
import numpy as np
import pytest

from tests.conftest import read_jsonl
from tests.ops.vision_other_helpers import write_image


@pytest.mark.slow
def test_yolo_and_fastsam_same_on_ray(run_both, tmp_path):
    from tests.models.tiny_other_models import build_fastsam, build_yolo

    yolo = build_yolo(str(tmp_path / "models"))
    sam = build_fastsam(str(tmp_path / "models"), std=0.3)
    imgs = [write_image(str(tmp_path / "imgs" / f"{k}.png"), 64 + 16 * (k % 2), 48, seed=k) for k in range(6)]
    rows = [{"id": k, "text": "x", "images": [p]} for k, p in enumerate(imgs)] + [{"id": 6, "text": "y", "images": []}]
    process = [{"image_detection_yolo_mapper": {"model_path": yolo, "imgsz": 64, "accelerator": "cpu"}},
               {"image_segment_mapper": {"model_path": sam, "imgsz": 64, "conf": 0.0, "accelerator": "cpu"}}]
    default, ray = run_both(rows, process)
    ids_a, ids_b = read_jsonl(default / "result.jsonl"), read_jsonl(ray / "result.jsonl")
    assert [r["id"] for r in ids_a] == [r["id"] for r in ids_b] == list(range(7))
    # the tags are exported beside the rows, one line per row in the same order
    a, b = read_jsonl(default / "result_stats.jsonl"), read_jsonl(ray / "result_stats.jsonl")
    assert len(a) == len(b) == 7
    for ra, rb in zip(a, b):
        ma, mb = ra["__dj__meta__"], rb["__dj__meta__"]
        assert ma["__dj__class_label__"] == mb["__dj__class_label__"]
        assert len(ma["__dj__bbox__"]) == len(mb["__dj__bbox__"])
        for ia, ib in zip(ma["__dj__bbox__"], mb["__dj__bbox__"]):
            np.testing.assert_allclose(np.asarray(ia, dtype=float), np.asarray(ib, dtype=float), atol=1e-4)
    assert a[6]["__dj__meta__"]["__dj__class_label__"] == []  # not -1: see the op
    assert len(a[0]["__dj__meta__"]["__dj__bbox__"]) == 1 and len(a[0]["__dj__meta__"]["__dj__bbox__"][0]) > 0
