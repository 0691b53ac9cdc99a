import os

import numpy as np
import pytest

from data_juicer.models.loader import clear_models
from data_juicer.utils.constant import Fields, MetaKeys, StatsKeys
from tests.ops.vision_other_helpers import write_video

OP = "video_motion_score_ptlflow_filter"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def test_missing_checkpoint_names_every_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    with pytest.raises(FileNotFoundError) as e:
        _op(model_name="raft_small", ckpt_path="things")
    msg = str(e.value)
    assert str(tmp_path / "m") in msg and str(tmp_path / "th" / "hub" / "checkpoints") in msg and "ckpt_path" in msg
    with pytest.raises(FileNotFoundError, match="neither a file nor a pretrained"):
        _op(model_name="raft_small", ckpt_path="nonsense")
    with pytest.raises(ValueError, match="unknown ptlflow model"):
        _op(model_name="no_such_flow", ckpt_path="things")


@pytest.mark.slow
def test_tiny_raft_small_checkpoint(tmp_path, monkeypatch):
    import ptlflow
    import torch

    from tests.models.tiny_other_models import fill_random

    model = ptlflow.get_model("raft_small")
    fill_random(model, 0, 0.02)
    ckpt = str(tmp_path / "raft_small_tiny.ckpt")
    torch.save({"state_dict": model.state_dict()}, ckpt)
    v = write_video(str(tmp_path / "v.mp4"), frames=4, w=200, h=136, fps=4)  # a 4-level correlation pyramid
    clear_models()
    op = _op(model_name="raft_small", ckpt_path=ckpt, if_output_optical_flow=True, min_score=0.0)
    assert (op.model_name, op.divisible) == ("raft_small", 8)
    out = op.compute_stats_batched({"videos": [[v, v]], Fields.stats: [{}]})
    scores = out[Fields.stats][0][StatsKeys.video_motion_score]
    flows = np.asarray(out[Fields.meta][0][MetaKeys.video_optical_flow][0])
    assert len(scores) == 2 and scores[0] == scores[1] and scores[0] >= 0
    assert flows.shape[0] == 1 and flows.shape[-1] == 2  # frames 0 and 2: one pair
    # Data-Juicer's call: the pair alone through ptlflow's IOAdapter
    import cv2
    from ptlflow.utils.io_adapter import IOAdapter

    ref = ptlflow.get_model("raft_small", ckpt_path=ckpt).eval()
    cap = cv2.VideoCapture(v)
    a = cap.read()[1]
    cap.set(cv2.CAP_PROP_POS_FRAMES, 2)
    b = cap.read()[1]
    cap.release()
    with torch.no_grad():
        f = ref(IOAdapter(ref, a.shape[:2]).prepare_inputs([a, b]))["flows"][-1][0].numpy().transpose(1, 2, 0)
    assert scores[0] == pytest.approx(float(np.mean(cv2.cartToPolar(f[..., 0], f[..., 1])[0])), abs=1e-4)
    assert os.path.exists(ckpt)
    clear_models()
