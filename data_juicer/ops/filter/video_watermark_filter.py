from pydantic import PositiveInt

from data_juicer.models.vision import check_vision_model, load_vision_model, op_device
from data_juicer.models.vision_scores import class_probs
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.common.vision_filters import VideoFrameModelFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import StatsKeys


@OPERATORS.register_module("video_watermark_filter")
class VideoWatermarkFilter(ModelChecks, VideoFrameModelFilter):
    """Keeps samples whose videos' watermark probability (stat ``video_watermark_prob``, one per
    distinct video: the class-1 probability of a Hugging Face image classifier on sampled frames,
    reduced by ``reduce_mode``) is at most ``prob_threshold`` for any / all videos.

    The frames of a whole batch are classified together.
    """

    stat_key = StatsKeys.video_watermark_prob
    model_params = {"hf_watermark_model": "amrul-hzz/watermark_detector"}
    default_memory = "500MB"

    def __init__(
        self,
        hf_watermark_model: str = "amrul-hzz/watermark_detector",
        trust_remote_code: bool = False,
        prob_threshold: float = 0.8,
        frame_sampling_method: str = "all_keyframes",
        frame_num: PositiveInt = 3,
        reduce_mode: str = "avg",
        any_or_all: str = "any",
        **kwargs,
    ):
        """
        :param hf_watermark_model: watermark image classifier: a Hugging Face model name (found offline) or a folder
        :param trust_remote_code: allow the model folder's own code
        :param prob_threshold: largest watermark probability kept (0 to 1)
        :param frame_sampling_method: ``all_keyframes`` or ``uniform`` (``frame_num`` frames evenly spread)
        :param frame_num: frames taken with ``uniform`` sampling
        :param reduce_mode: how a video's frame probabilities are reduced: ``avg``, ``max`` or ``min``
        :param any_or_all: keep a sample when ``any`` of its videos is in range, or only when ``all`` are
        """
        kwargs = self.setup_video(frame_sampling_method, frame_num, reduce_mode, any_or_all, kwargs)
        super().__init__(**kwargs)
        self.hf_watermark_model = hf_watermark_model
        self.trust_remote_code = trust_remote_code
        self.prob_threshold = prob_threshold
        check_vision_model(hf_watermark_model, who=self.name)

    def bounds(self):
        return None, self.prob_threshold

    def score_images(self, images):
        model, proc = load_vision_model(self.hf_watermark_model, who=self.name, device=op_device(self),
                                        trust_remote_code=self.trust_remote_code)
        return class_probs(model, proc, images)
