import sys
from typing import Literal, Optional, Union

from pydantic import PositiveFloat, PositiveInt

from data_juicer.models.vision_other import load_ptlflow, resolve_ptlflow_ckpt
from data_juicer.ops.common.motion_score import VideoMotionScoreModelFilter
from data_juicer.ops.common.vision_other import device_for
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys
from data_juicer.utils.lazy import require


def _namespace(value):
    from types import SimpleNamespace

    if isinstance(value, dict):
        return SimpleNamespace(**{k: _namespace(v) for k, v in value.items()})
    return value


@OPERATORS.register_module("video_motion_score_ptlflow_filter")
class VideoMotionScorePtlflowFilter(VideoMotionScoreModelFilter):
    """Keeps samples whose videos' motion scores (stat ``video_motion_score``: per video, the mean
    optical-flow magnitude between sampled frames) are within [min_score, max_score], the flow
    estimated by a ptlflow model (``model_name``, default ``dpflow``).

    Frames (OpenCV's BGR arrays) go through ptlflow's ``IOAdapter`` as Data-Juicer passes them; the
    frame pairs of a batch go through the model together. ``ckpt_path`` is a checkpoint file, or
    a ptlflow pretrained name (default ``things``) whose file is looked up by name in the model
    folders and torch hub's checkpoint folder; nothing is downloaded. Frame sampling and scoring:
    see ``ops/common/motion_score.py``.
    """

    requires = ("torch", "ptlflow", "opencv-python-headless")

    def __init__(
        self,
        min_score: float = 1.0,
        max_score: float = sys.float_info.max,
        frame_field: Optional[str] = None,
        model_name: str = "dpflow",
        ckpt_path: Optional[str] = "things",
        get_model_args: Optional[dict] = None,
        sampling_fps: PositiveFloat = 2,
        original_fps: Optional[PositiveFloat] = None,
        size: Union[PositiveInt, tuple[PositiveInt], tuple[PositiveInt, PositiveInt], None] = None,
        max_size: Optional[PositiveInt] = None,
        divisible: PositiveInt = 8,
        relative: bool = False,
        any_or_all: Literal["any", "all"] = "any",
        if_output_optical_flow: bool = False,
        optical_flow_key: str = MetaKeys.video_optical_flow,
        **kwargs,
    ):
        """
        :param min_score: the smallest motion score kept
        :param max_score: the largest motion score kept
        :param frame_field: a field holding, per video, the list of its frames (paths or bytes)
        :param model_name: the ptlflow model (``ptlflow.get_model_names()``)
        :param ckpt_path: a checkpoint file, or the name of a ptlflow pretrained checkpoint
        :param get_model_args: the model's arguments (a dict, given to ptlflow as a namespace)
        :param sampling_fps: frames per second sampled for the optical flow
        :param original_fps: the fps the frames of ``frame_field`` were extracted at
        :param size: resize frames first: an int (the short edge) or ``(h, w)``
        :param max_size: the longest edge allowed after resizing (with an int ``size``)
        :param divisible: frame dimensions are rounded down to a multiple of this
        :param relative: divide each flow magnitude by the frame diagonal
        :param any_or_all: keep a sample when any / all of its videos are in range
        :param if_output_optical_flow: also write each video's flows into ``__dj__meta__``
        :param optical_flow_key: the meta key of the flows
        """
        self.model_name = model_name
        self.ckpt_path = ckpt_path
        self.get_model_args = get_model_args
        super().__init__(min_score, max_score, frame_field, sampling_fps, original_fps, size, max_size, divisible,
                         relative, any_or_all, if_output_optical_flow, optical_flow_key, **kwargs)

    def check_model(self):
        if self.ckpt_path:
            resolve_ptlflow_ckpt(self.model_name, self.ckpt_path, who=self.name)

    def flows(self, pairs):
        import numpy as np

        torch = require("torch", who=self.name)
        from ptlflow.utils.io_adapter import IOAdapter

        device = device_for(self)
        model = load_ptlflow(self.model_name, self.ckpt_path, _namespace(self.get_model_args) if
                             self.get_model_args is not None else None, device, who=self.name)
        adapter = IOAdapter(model, pairs[0][0].shape[:2])
        batch = [adapter.prepare_inputs([p, c]) for p, c in pairs]
        inputs = {k: torch.cat([b[k] for b in batch]).to(device) for k in batch[0] if torch.is_tensor(batch[0][k])}
        with torch.no_grad():
            flows = model(inputs)["flows"]  # (B, 1, 2, H, W)
        return [f[0].detach().cpu().numpy().transpose(1, 2, 0).astype(np.float32) for f in flows]
