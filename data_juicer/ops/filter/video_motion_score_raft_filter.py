from data_juicer.models.vision_other import load_raft, resolve_raft
from data_juicer.ops.common.motion_score import VideoMotionScoreModelFilter
from data_juicer.ops.common.vision_other import device_for
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require


@OPERATORS.register_module("video_motion_score_raft_filter")
class VideoMotionScoreRaftFilter(VideoMotionScoreModelFilter):
    """Keeps samples whose videos' motion scores (stat ``video_motion_score``: per video, the mean
    optical-flow magnitude between sampled frames) are within [min_score, max_score], the flow
    estimated by torchvision's RAFT (``raft_large``, 12 refinement steps).

    Frames (OpenCV's BGR) are turned RGB and scaled to [-1, 1] as Data-Juicer does; the weights are
    torchvision's ``raft_large_C_T_SKHT_V2-ff5fadd5.pth``, looked up in the model folders and in
    torch hub's checkpoint folder (never downloaded). Frame sampling and scoring: see
    ``ops/common/motion_score.py`` (with the two Data-Juicer bugs fixed there).
    """

    requires = ("torch", "torchvision", "opencv-python-headless")

    def check_model(self):
        resolve_raft("raft_large", who=self.name)

    def flows(self, pairs):
        import numpy as np

        torch = require("torch", who=self.name)
        device = device_for(self)
        model = load_raft("raft_large", device, who=self.name)

        def prep(frames):  # BGR uint8 (B, H, W, 3) -> RGB float in [-1, 1] (B, 3, H, W)
            x = torch.from_numpy(np.stack(frames)).to(device).permute(0, 3, 1, 2).float().div(255.0)
            return x.sub(0.5).div(0.5).flip(-3)

        with torch.inference_mode():
            out = model(prep([p for p, _ in pairs]), prep([c for _, c in pairs]))[-1]
        return list(out.permute(0, 2, 3, 1).cpu().numpy())
