"""op_fusion: a row a fused filter fails on is in the ledger under the member op that raised (with the
fused op as ``fused_op``), the same on both executors."""
import os

import pytest

from data_juicer.cli.process import main
from data_juicer.core.runner import FusedRun, OpError
from data_juicer.ops.build import build_ops
from data_juicer.ops.fused import FusedFilter
from tests.conftest import read_jsonl
from tests.media.files import media_files  # noqa: F401

PROCESS = [{"image_shape_filter": {}}, {"image_aspect_ratio_filter": {"max_ratio": 10}},
           {"image_size_filter": {"max_size": "1MB"}}]


FUSED = "OpFusion:(image_shape_filter,image_aspect_ratio_filter)"


def _ledger(folder):
    out = []
    for root, _, names in os.walk(folder):
        out += [e for n in names if n == "errors.jsonl" for e in read_jsonl(os.path.join(root, n))]
    return out


def test_fused_failure_names_the_member(make_recipe, media_files, tmp_path, executor_type):
    m = media_files
    rows = [{"id": 0, "text": "a", "images": [m["png"]]},
            {"id": 1, "text": "b", "images": [m["missing_image"]]},
            {"id": 2, "text": "c", "images": [m["png"], m["corrupt_image"]]}]
    recipe = make_recipe(rows, PROCESS, executor_type=executor_type, op_fusion=True)
    assert main(["--config", recipe]) == 0
    assert [r["id"] for r in read_jsonl(tmp_path / "out" / "result.jsonl")] == [0]
    ledger = sorted(_ledger(tmp_path / "out"), key=lambda e: e["sample"]["id"])
    assert [(e["sample"]["id"], e["op"], e.get("fused_op"), e["error_type"]) for e in ledger] == [
        (1, "image_shape_filter", FUSED, "FileNotFoundError"), (2, "image_shape_filter", FUSED, "MediaError")]


def test_fused_failure_without_skip_op_error_names_the_member():
    members = build_ops([{"image_shape_filter": {"skip_op_error": False}},
                         {"image_aspect_ratio_filter": {"skip_op_error": False}}], {})
    fused = FusedFilter(members, skip_op_error=False)
    with pytest.raises(OpError) as info:
        FusedRun([fused]).apply({"id": [0, 1], "text": ["a", "b"], "images": [[], ["/nonexistent/x.png"]]})
    assert info.value.op == "image_shape_filter"
    assert str(info.value).startswith("operator 'image_shape_filter' (in 'OpFusion:(image_shape_filter,"
                                      "image_aspect_ratio_filter)' failed on sample id=1: FileNotFoundError")
