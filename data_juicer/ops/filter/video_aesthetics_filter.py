from typing import Optional

from pydantic import PositiveInt

from data_juicer.models.vision import aesthetics_variant_of, check_vision_model, load_vision_model, op_device
from data_juicer.models.vision_scores import aesthetics_scores
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.common.vision_filters import VideoFrameModelFilter
from data_juicer.ops.filter.image_aesthetics_filter import DEFAULT_SCORER
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import StatsKeys


@OPERATORS.register_module("video_aesthetics_filter")
class VideoAestheticsFilter(ModelChecks, VideoFrameModelFilter):
    """Keeps samples whose videos' aesthetics score (stat ``video_frames_aesthetics_score``, one per
    distinct video: a LAION aesthetics predictor on sampled frames, /10 for the
    ``aesthetics-predictor`` models, reduced by ``reduce_mode``) is within [min_score, max_score]
    for any / all videos. The frames of a whole batch are scored together.
    """

    stat_key = StatsKeys.video_frames_aesthetics_score
    model_params = {"hf_scorer_model": DEFAULT_SCORER}
    default_memory = "1500MB"

    def __init__(
        self,
        hf_scorer_model: str = "",
        trust_remote_code: bool = False,
        min_score: float = 0.4,
        max_score: float = 1.0,
        frame_field: Optional[str] = None,
        frame_sampling_method: str = "uniform",
        frame_num: PositiveInt = 3,
        any_or_all: str = "any",
        reduce_mode: str = "avg",
        **kwargs,
    ):
        """
        :param hf_scorer_model: aesthetics predictor: a Hugging Face model name (found offline) or a local
            folder; empty means ``shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE``
        :param trust_remote_code: allow the model folder's own code
        :param min_score: smallest (normalised) aesthetics score kept
        :param max_score: largest (normalised) aesthetics score kept
        :param frame_field: field holding, per video, a list of already extracted frame image paths
        :param frame_sampling_method: ``all_keyframes`` or ``uniform`` (``frame_num`` frames evenly spread)
        :param frame_num: frames taken with ``uniform`` sampling (or from ``frame_field``)
        :param any_or_all: keep a sample when ``any`` of its videos is in range, or only when ``all`` are
        :param reduce_mode: how a video's frame scores are reduced: ``avg``, ``max`` or ``min``
        """
        kwargs = self.setup_video(frame_sampling_method, frame_num, reduce_mode, any_or_all, kwargs)
        super().__init__(**kwargs)
        self.hf_scorer_model = hf_scorer_model or DEFAULT_SCORER
        self.trust_remote_code = trust_remote_code
        self.min_score = min_score
        self.max_score = max_score
        self.frame_field = frame_field
        folder = check_vision_model(self.hf_scorer_model, who=self.name)
        aesthetics_variant_of(self.hf_scorer_model, folder)
        self.need_normalized_by_ten = "aesthetics-predictor" in self.hf_scorer_model

    def score_images(self, images):
        model, proc = load_vision_model(self.hf_scorer_model, who=self.name, device=op_device(self),
                                        arch="aesthetics", processor="CLIPProcessor",
                                        trust_remote_code=self.trust_remote_code)
        return aesthetics_scores(model, proc, images, self.need_normalized_by_ten)
