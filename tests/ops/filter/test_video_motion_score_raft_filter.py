import os

import numpy as np
import pytest

from data_juicer.models.loader import clear_models
from data_juicer.ops.common.motion_score import resized_dimensions
from data_juicer.utils.constant import Fields, MetaKeys, StatsKeys
from tests.ops.vision_other_helpers import dry_run, write_video

OP = "video_motion_score_raft_filter"
RAFT = "raft_large_C_T_SKHT_V2-ff5fadd5.pth"


def _op(**kw):
    from data_juicer.ops.registry import OPERATORS

    return OPERATORS.get(OP)(**kw)


def test_missing_weights_name_every_path(tmp_path, monkeypatch):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    with pytest.raises(FileNotFoundError) as e:
        _op()
    msg = str(e.value)
    assert str(tmp_path / "m" / RAFT) in msg and str(tmp_path / "th" / "hub" / "checkpoints" / RAFT) in msg


def test_missing_weights_under_dry_run(tmp_path, monkeypatch, make_recipe, capsys):
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "m"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    rc, out = dry_run(make_recipe, [{OP: {}}], capsys=capsys)
    assert rc != 0 and str(tmp_path / "m" / RAFT) in out


def test_params(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_HOME", str(tmp_path))
    os.makedirs(tmp_path / "hub" / "checkpoints")
    (tmp_path / "hub" / "checkpoints" / RAFT).write_bytes(b"x")  # found in torch hub's folder
    op = _op()
    assert (op.min_score, op.divisible, op.sampling_fps, op.any, op.accelerator) == (1.0, 8, 2, True, "cuda")
    assert _op(size=32).size == (32,)
    with pytest.raises(ValueError, match="Keep strategy"):
        _op(any_or_all="some")
    with pytest.raises(ValueError, match="1 or 2 element"):
        _op(size=[1, 2, 3])
    # a sample without videos scores [] and is kept; a missing video is a clear error
    batch = {"videos": [[]], Fields.stats: [{}]}
    assert op.compute_stats_batched(batch)[Fields.stats][0][StatsKeys.video_motion_score] == []
    assert op.process_batched(batch) == [True]
    with pytest.raises(FileNotFoundError, match="nope.mp4"):
        op.compute_stats_batched({"videos": [[str(tmp_path / "nope.mp4")]], Fields.stats: [{}]})


def test_resized_dimensions_as_data_juicer():
    assert resized_dimensions(48, 64, (32,), None, 8) == (32, 40)  # short edge 32 -> 32 x 42 -> /8
    assert resized_dimensions(64, 48, (32,), None, 1) == (42, 32)
    assert resized_dimensions(48, 64, None, 40, 1) == (30, 40)
    assert resized_dimensions(48, 64, (20, 30), None, 1) == (20, 30)


@pytest.mark.slow
def test_tiny_raft_scores_and_flows(tmp_path, monkeypatch):
    import cv2
    import torch
    import torchvision.transforms as tvt
    from torchvision.models.optical_flow import raft_large

    from tests.models.tiny_other_models import build_raft

    path = build_raft(str(tmp_path / "models"), large=True)
    monkeypatch.setenv("DJ_MODELS_DIR", str(tmp_path / "models"))
    v1 = write_video(str(tmp_path / "v1.mp4"), frames=4, w=200, h=136, fps=4)  # RAFT needs >= 128 px
    v2 = write_video(str(tmp_path / "v2.mp4"), frames=1, w=200, h=136, fps=4)
    clear_models()
    op = _op(if_output_optical_flow=True, min_score=0.0)
    batch = {"videos": [[v1, v2, v1]], Fields.stats: [{}]}
    out = op.compute_stats_batched(batch)
    scores = out[Fields.stats][0][StatsKeys.video_motion_score]
    flows = out[Fields.meta][0][MetaKeys.video_optical_flow]
    assert len(scores) == 3 and scores[0] == scores[2] and scores[1] == -1.0
    # 4 frames at 4 fps sampled at 2 fps: frames 0, 2 -> 1 pair of 136 x 200 flows
    assert np.asarray(flows[0]).shape == (1, 136, 200, 2) and flows[1] == []

    # Data-Juicer's way: one pair at a time through torchvision's transforms
    model = raft_large(weights=None)
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    tf = tvt.Compose([tvt.ToTensor(), tvt.Normalize(mean=0.5, std=0.5), tvt.Lambda(lambda x: x.flip(-3).unsqueeze(0))])
    cap = cv2.VideoCapture(v1)
    frames = []
    for pos in (0, 2):
        cap.set(cv2.CAP_PROP_POS_FRAMES, pos)
        frames.append(cap.read()[1])
    cap.release()
    mags = []
    with torch.inference_mode():
        for a, b in zip(frames, frames[1:]):
            flow = model(tf(a), tf(b))[-1][0].numpy().transpose(1, 2, 0)
            mags.append(float(np.mean(cv2.cartToPolar(flow[..., 0], flow[..., 1])[0])))
    assert scores[0] == pytest.approx(float(np.mean(mags)), abs=1e-4)
    assert op.process_batched(out) == [True]
    near = dict(min_score=scores[0] - 1e-3, max_score=scores[0] + 1e-3)
    assert _op(**near).process_batched(out) == [True]  # 'any': v1 is in range
    assert _op(**near, any_or_all="all").process_batched(out) == [False]  # v2's -1 is not
    assert _op(min_score=scores[0] + 1).process_batched(out) == [False]

    # resizing keeps the frame's aspect (Data-Juicer transposes it): 136x200 -> short edge 128 -> 128x184
    r = _op(size=128, if_output_optical_flow=True).compute_stats_batched({"videos": [[v1]], Fields.stats: [{}]})
    assert np.asarray(r[Fields.meta][0][MetaKeys.video_optical_flow][0]).shape == (1, 128, 184, 2)
    clear_models()
