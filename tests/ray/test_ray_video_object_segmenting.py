"""video_object_segmenting_mapper on Ray (model in an actor pool) gives the default executor's output."""
import numpy as np
import pytest

from data_juicer.utils.constant import Fields, MetaKeys
from tests.conftest import read_jsonl
from tests.ops.vision_other_helpers import write_video


@pytest.mark.slow
def test_object_segmenting_same_on_ray(run_both, tmp_path, monkeypatch):
    from tests.models.tiny_models_b import build_yoloe
    from tests.models.tiny_sam2_models import build_sam2_video

    models = tmp_path / "models"
    build_sam2_video(str(models / "facebook" / "sam2.1-hiera-tiny"))
    build_yoloe(str(models), seed=1, std=0.3)
    monkeypatch.setenv("DJ_MODELS_DIR", str(models))
    vids = [write_video(str(tmp_path / f"v{k}.mp4"), frames=3, w=64, h=48, moving=bool(k)) for k in range(2)]
    rows = [{"id": 0, "text": "a", "videos": [vids[0]], "main_character_list": ["dog", "red car"]},
            {"id": 1, "text": "b", "videos": [vids[1]], "main_character_list": ["dog", "red car"]},
            {"id": 2, "text": "none", "videos": [], "main_character_list": ["dog"]}]
    process = [{"video_object_segmenting_mapper": {"yoloe_conf": 0.98, "accelerator": "cpu"}}]
    default, ray = run_both(rows, process, keep_stats_in_res_ds=True)
    a = sorted(read_jsonl(default / "result.jsonl"), key=lambda r: r["id"])
    b = sorted(read_jsonl(ray / "result.jsonl"), key=lambda r: r["id"])
    assert [r["id"] for r in a] == [r["id"] for r in b] == [0, 1, 2]
    tag = MetaKeys.video_object_segment_tags
    for ra, rb in zip(a, b):
        ta, tb = ra[Fields.meta][tag], rb[Fields.meta][tag]
        assert ta["segment_data"] == tb["segment_data"]
        assert (ta["cls_id_dict"], ta["object_cls_list"]) == (tb["cls_id_dict"], tb["object_cls_list"])
        np.testing.assert_allclose(ta["yoloe_conf_list"], tb["yoloe_conf_list"], atol=1e-6)
    assert np.array(a[0][Fields.meta][tag]["segment_data"]).shape == (3, 3, 1, 48, 64)
    assert a[2][Fields.meta][tag]["segment_data"] == []
