from data_juicer.models.vision import check_vision_model, load_vision_model, op_device
from data_juicer.models.vision_scores import class_probs
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.common.vision_filters import ImageModelFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import StatsKeys


@OPERATORS.register_module("image_nsfw_filter")
class ImageNSFWFilter(ModelChecks, ImageModelFilter):
    """Keeps samples whose images' NSFW probability (stat ``image_nsfw_score``, one per distinct
    image: the softmax probability of class 1 of a Hugging Face image classifier) is within
    [min_score, max_score] for any / all images. A sample without images is kept.

    The images of a whole batch are classified together, in chunks, on the GPU (half precision)
    when ``accelerator: cuda`` and one is there.
    """

    model_params = {"hf_nsfw_model": "Falconsai/nsfw_image_detection"}
    stat_key = StatsKeys.image_nsfw_score

    def __init__(
        self,
        hf_nsfw_model: str = "Falconsai/nsfw_image_detection",
        trust_remote_code: bool = False,
        min_score: float = 0.0,
        max_score: float = 0.5,
        any_or_all: str = "any",
        **kwargs,
    ):
        """
        :param hf_nsfw_model: NSFW image classifier: a Hugging Face model name (found offline in the
            model folders or the Hugging Face cache) or a local folder
        :param trust_remote_code: allow the model folder's own code
        :param min_score: smallest NSFW probability kept (0 to 1)
        :param max_score: largest NSFW probability kept (0 to 1)
        :param any_or_all: keep a sample when ``any`` of its images is in range, or only when ``all`` are
        """
        kwargs = self.setup(any_or_all, kwargs)
        super().__init__(**kwargs)
        self.hf_nsfw_model = hf_nsfw_model
        self.trust_remote_code = trust_remote_code
        self.min_score = min_score
        self.max_score = max_score
        check_vision_model(hf_nsfw_model, who=self.name)

    def score_images(self, images):
        model, proc = load_vision_model(self.hf_nsfw_model, who=self.name, device=op_device(self),
                                        trust_remote_code=self.trust_remote_code)
        return class_probs(model, proc, images)
