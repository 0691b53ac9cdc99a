from data_juicer.models.vision import check_vision_model, load_vision_model, op_device
from data_juicer.models.vision_scores import class_probs
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.common.vision_filters import ImageModelFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import StatsKeys


@OPERATORS.register_module("image_watermark_filter")
class ImageWatermarkFilter(ModelChecks, ImageModelFilter):
    """Keeps samples whose images' watermark probability (stat ``image_watermark_prob``, one per
    distinct image: the softmax probability of class 1 of a Hugging Face image classifier) is at
    most ``prob_threshold`` for any / all images. A sample without images is kept.

    The images of a whole batch are classified together, in chunks, on the GPU (half precision)
    when ``accelerator: cuda`` and one is there.
    """

    model_params = {"hf_watermark_model": "amrul-hzz/watermark_detector"}
    stat_key = StatsKeys.image_watermark_prob
    default_memory = "500MB"

    def __init__(
        self,
        hf_watermark_model: str = "amrul-hzz/watermark_detector",
        trust_remote_code: bool = False,
        prob_threshold: float = 0.8,
        any_or_all: str = "any",
        **kwargs,
    ):
        """
        :param hf_watermark_model: watermark image classifier: a Hugging Face model name (found
            offline in the model folders or the Hugging Face cache) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param prob_threshold: largest watermark probability kept (0 to 1)
        :param any_or_all: keep a sample when ``any`` of its images is in range, or only when ``all`` are
        """
        kwargs = self.setup(any_or_all, kwargs)
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
