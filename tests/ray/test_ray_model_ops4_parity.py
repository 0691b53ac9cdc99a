"""models-b's model ops on Ray: run in actor pools, same output as the default executor."""
import numpy as np
import pytest

from data_juicer.utils.constant import Fields, MetaKeys
from tests.conftest import read_jsonl
from tests.ops.vision_other_helpers import write_video


@pytest.mark.slow
def test_whole_body_pose_same_on_ray(run_both, tmp_path, monkeypatch):
    from tests.models.tiny_models_b import build_dwpose_onnx

    build_dwpose_onnx(str(tmp_path / "models"))
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    vids = [write_video(str(tmp_path / f"v{k}.mp4"), frames=6, w=96, h=72, moving=bool(k)) for k in range(2)]
    rows = [{"id": 0, "text": "a", "videos": [vids[0]]}, {"id": 1, "text": "b", "videos": [vids[1]]},
            {"id": 2, "text": "none", "videos": []}]
    process = [{"video_whole_body_pose_estimation_mapper": {"frame_num": 2, "accelerator": "cpu"}}]
    default, ray = run_both(rows, process, keep_stats_in_res_ds=True)
    a = sorted(read_jsonl(default / "result.jsonl"), key=lambda r: r["id"])
    b = sorted(read_jsonl(ray / "result.jsonl"), key=lambda r: r["id"])
    assert [r["id"] for r in a] == [r["id"] for r in b] == [0, 1, 2]
    tag = MetaKeys.pose_estimation_tags
    for ra, rb in zip(a, b):
        ta, tb = ra[Fields.meta][tag], rb[Fields.meta][tag]
        assert sorted(ta) == sorted(tb)
        for k in ta:
            assert len(ta[k]) == len(tb[k])
            for x, y in zip(ta[k], tb[k]):
                np.testing.assert_allclose(np.array(x, dtype=float), np.array(y, dtype=float), atol=1e-5)
    assert len(a[0][Fields.meta][tag]["bbox_results_list"]) == 2
    assert a[2][Fields.meta][tag]["body_keypoints"] == []
