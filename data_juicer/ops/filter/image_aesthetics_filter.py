from data_juicer.models.vision import aesthetics_variant_of, check_vision_model, load_vision_model, op_device
from data_juicer.models.vision_scores import aesthetics_scores
from data_juicer.ops.common.vision import ModelChecks
from data_juicer.ops.common.vision_filters import ImageModelFilter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import StatsKeys

DEFAULT_SCORER = "shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE"


@OPERATORS.register_module("image_aesthetics_filter")
class ImageAestheticsFilter(ModelChecks, ImageModelFilter):
    """Keeps samples whose images' aesthetics score (stat ``image_aesthetics_scores``, one per
    distinct image) is within [min_score, max_score] for any / all images. A sample without
    images is kept.

    The score is a LAION aesthetics predictor's (a head on CLIP's image embedding, the model
    folders of ``simple-aesthetics-predictor``: v1, v2 linear, v2 ReLU, picked from the model
    name as Data-Juicer does), divided by 10 when the name contains ``aesthetics-predictor``
    (its scale is 0-10). The images of a whole batch are scored together.
    """

    model_params = {"hf_scorer_model": DEFAULT_SCORER}
    stat_key = StatsKeys.image_aesthetics_scores
    default_memory = "1500MB"

    def __init__(
        self,
        hf_scorer_model: str = "",
        trust_remote_code: bool = False,
        min_score: float = 0.5,
        max_score: float = 1.0,
        any_or_all: str = "any",
        **kwargs,
    ):
        """
        :param hf_scorer_model: aesthetics predictor: a Hugging Face model name (found offline) or a
            local folder; empty means ``shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE``
        :param trust_remote_code: allow the model folder's own code
        :param min_score: smallest (normalised) aesthetics score kept
        :param max_score: largest (normalised) aesthetics score kept
        :param any_or_all: keep a sample when ``any`` of its images is in range, or only when ``all`` are
        """
        kwargs = self.setup(any_or_all, kwargs)
        super().__init__(**kwargs)
        self.hf_scorer_model = hf_scorer_model or DEFAULT_SCORER
        self.trust_remote_code = trust_remote_code
        self.min_score = min_score
        self.max_score = max_score
        folder = check_vision_model(self.hf_scorer_model, who=self.name)
        aesthetics_variant_of(self.hf_scorer_model, folder)  # an unknown predictor fails now
        self.need_normalized_by_ten = "aesthetics-predictor" in self.hf_scorer_model

    def score_images(self, images):
        model, proc = load_vision_model(self.hf_scorer_model, who=self.name, device=op_device(self),
                                        arch="aesthetics", processor="CLIPProcessor",
                                        trust_remote_code=self.trust_remote_code)
        return aesthetics_scores(model, proc, images, self.need_normalized_by_ten)
