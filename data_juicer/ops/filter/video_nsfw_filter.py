from typing import Optional

from pydantic import PositiveInt

from data_juicer.models.vision import check_vision_model, load_vision_model, op_device
from data_juicer.models.vision_scores import class_probs
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.common.vision_filters import VideoFrameModelFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import StatsKeys


@OPERATORS.register_module("video_nsfw_filter")
class VideoNSFWFilter(ModelChecks, VideoFrameModelFilter):
    """Keeps samples whose videos' NSFW score (stat ``video_nsfw_score``, one per distinct video:
    the class-1 probability of a Hugging Face image classifier on sampled frames, reduced by
    ``reduce_mode``) is within [min_score, max_score] for any / all videos.

    Frames are sampled through the media layer (shared with the other frame ops of a fused
    pass) or read from ``frame_field``; the frames of a whole batch are classified together.
    ``video_backend`` is accepted for compatibility (frames are always decoded with PyAV).
    """

    stat_key = StatsKeys.video_nsfw_score
    model_params = {"hf_nsfw_model": "Falconsai/nsfw_image_detection"}

    def __init__(
        self,
        hf_nsfw_model: str = "Falconsai/nsfw_image_detection",
        trust_remote_code: bool = False,
        min_score: float = 0.0,
        max_score: float = 0.5,
        frame_field: Optional[str] = None,
        frame_sampling_method: str = "all_keyframes",
        frame_num: PositiveInt = 3,
        reduce_mode: str = "avg",
        any_or_all: str = "any",
        video_backend: str = "av",
        **kwargs,
    ):
        """
        :param hf_nsfw_model: NSFW image classifier: a Hugging Face model name (found offline) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param min_score: smallest NSFW score kept (0 to 1)
        :param max_score: largest NSFW score kept (0 to 1)
        :param frame_field: field holding, per video, a list of already extracted frame image paths
            (used instead of decoding the videos when present)
        :param frame_sampling_method: ``all_keyframes`` or ``uniform`` (``frame_num`` frames evenly spread)
        :param frame_num: frames taken with ``uniform`` sampling (or from ``frame_field``)
        :param reduce_mode: how a video's frame scores are reduced: ``avg``, ``max`` or ``min``
        :param any_or_all: keep a sample when ``any`` of its videos is in range, or only when ``all`` are
        :param video_backend: ``av`` or ``ffmpeg`` (accepted for compatibility; PyAV decodes)
        """
        if video_backend not in ("av", "ffmpeg"):
            raise ValueError(f"video_nsfw_filter: video_backend must be 'av' or 'ffmpeg', got {video_backend!r}")
        kwargs = self.setup_video(frame_sampling_method, frame_num, reduce_mode, any_or_all, kwargs)
        super().__init__(**kwargs)
        self.hf_nsfw_model = hf_nsfw_model
        self.trust_remote_code = trust_remote_code
        self.min_score = min_score
        self.max_score = max_score
        self.frame_field = frame_field
        self.video_backend = video_backend
        check_vision_model(hf_nsfw_model, who=self.name)

    def score_images(self, images):
        model, proc = load_vision_model(self.hf_nsfw_model, who=self.name, device=op_device(self),
                                        trust_remote_code=self.trust_remote_code)
        return class_probs(model, proc, images)
