
from data_juicer.ops.common.hf_query_classifier import HFQueryClassifierMapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import MetaKeys


@OPERATORS.register_module("query_intent_detection_mapper")
class QueryIntentDetectionMapper(HFQueryClassifierMapper):
    """Predicts the intent of each query (field ``query_key``) with a Hugging Face text classifier
    and writes the top label and its score into ``__dj__meta__`` (``query_intent_label`` and
    ``query_intent_label_score`` by default).

    When ``zh_to_en_hf_model`` is set (the default), every query is first translated with that
    translation model and the translation is classified. Samples that already hold both meta
    keys are left as they are. Models are loaded offline from the models folder.
    """

    def __init__(
        self,
        hf_model: str = "bespin-global/klue-roberta-small-3i4k-intent-classification",
        zh_to_en_hf_model: str | None = "Helsinki-NLP/opus-mt-zh-en",
        model_params: dict = {},  # noqa: B006 (the Data-Juicer default; never mutated)
        zh_to_en_model_params: dict = {},  # noqa: B006
        *,
        label_key: str = MetaKeys.query_intent_label,
        score_key: str = MetaKeys.query_intent_score,
        **kwargs,
    ):
        """
        :param hf_model: Hugging Face text-classification model name (resolved to a local folder) or folder
        :param zh_to_en_hf_model: translation model applied to every query first; null to classify as is
        :param model_params: extra ``from_pretrained`` arguments of ``hf_model`` (``device`` picks the device)
        :param zh_to_en_model_params: extra ``from_pretrained`` arguments of the translation model
        :param label_key: meta key receiving the predicted label
        :param score_key: meta key receiving the label's score
        """
        super().__init__(**kwargs)
        self._setup(hf_model, zh_to_en_hf_model, model_params, zh_to_en_model_params, label_key, score_key)
