import json
from typing import Dict, Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars

META_KEY = "main_character_list"
# Data-Juicer's fixed mllm_mapper settings, used for any key the recipe leaves out
MLLM_DEFAULTS = {"max_new_tokens": 256, "temperature": 0.2, "top_p": None, "num_beams": 1,
                 "hf_model": "llava-hf/llava-v1.6-vicuna-7b-hf"}
PROMPT = (
    "I will provide you with an image and its corresponding description. You need to identify and count the main "
    "characters in the image (e.g., key people, key animals, key objects). The output should only be in JSON "
    "format, including the number of main characters and a list of their descriptions, as shown in the example: "
    '{"count": 3, "main_character": ["man in a blue shirt", "black cat sitting on a nearby fence", '
    '"skateboard with flame decals"]}. Below, I will provide the description of the corresponding image: "'
)
PROMPT_END = ('" Please identify the main characters along with their key, distinct characteristics, and output '
              "the result in JSON format.")


def sub_op_args(defaults: dict, given: Optional[dict], accelerator) -> dict:
    """A sub-op's parameters: the recipe's, then Data-Juicer's fixed defaults for the keys left
    out, and the composite op's accelerator unless the recipe gives one."""
    args = dict(given or {})
    for k, v in defaults.items():
        args.setdefault(k, v)
    args.setdefault("accelerator", accelerator)
    return args


def parse_main_characters(answer: str, min_count: int) -> list:
    """The ``main_character`` list of the first ``{...}`` JSON object in ``answer`` (newlines and
    backslashes removed first); ``[]`` when there is none, it does not parse, or its ``count`` is
    below ``min_count``."""
    text = answer.replace("\n", "").replace("\\", "")
    start, end = text.find("{"), text.rfind("}") + 1
    if start == -1 or end <= start:
        return []
    try:
        data = json.loads(text[start:end])
    except json.JSONDecodeError:
        return []
    if not isinstance(data, dict):
        return []
    if data.get("count", 0) >= min_count:
        return data.get("main_character", [])
    return []


@OPERATORS.register_module("detect_main_character_mapper")
class DetectMainCharacterMapper(Mapper):
    """Lists the main characters of each sample's image (meta ``main_character_list``) by asking a
    multimodal LLM (our ``mllm_mapper``, LLaVA by default) to count and describe them, given the
    image and the sample's text as its description, answering in JSON
    (``{"count": n, "main_character": [...]}``).

    The answer after ``ASSISTANT:`` is parsed from its first ``{`` to its last ``}``; an answer
    that does not parse, or whose ``count`` is below ``filter_min_character_num``, gives ``[]``
    (the sample is kept: this mapper only tags). Only the first image of a sample is asked about,
    as Data-Juicer uses only its answer; the prompts of a whole batch are generated together.
    A sample without images gets ``[]`` (Data-Juicer's op fails on it).

    ``mllm_mapper_args`` are the mllm_mapper's parameters; keys left out take Data-Juicer's fixed
    values (``max_new_tokens`` 256, ``temperature`` 0.2, ``top_p`` None, ``num_beams`` 1,
    ``hf_model`` ``llava-hf/llava-v1.6-vicuna-7b-hf``), and its accelerator is this op's.
    """

    _accelerator = "cuda"
    modality = "multimodal"
    requires = ("torch", "transformers", "pillow")
    uses_model = True
    uses = (InterVars.loaded_images,)

    def __init__(self, mllm_mapper_args: Optional[Dict] = {}, filter_min_character_num: int = 0, **kwargs):  # noqa: B006
        """
        :param mllm_mapper_args: parameters of the mllm_mapper that answers (defaults above)
        :param filter_min_character_num: an answer counting fewer main characters than this gives ``[]``
        """
        super().__init__(**kwargs)
        from data_juicer.ops.mapper.mllm_mapper import MllmMapper

        self.mllm_mapper_args = sub_op_args(MLLM_DEFAULTS, mllm_mapper_args, self.accelerator)
        self.mllm_mapper = MllmMapper(**self.mllm_mapper_args)
        self.filter_min_character_num = filter_min_character_num

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        from data_juicer.ops.mapper.mllm_mapper import MllmMapper

        return MllmMapper.check_models(sub_op_args(MLLM_DEFAULTS, params.get("mllm_mapper_args"), None))

    def process_batched(self, samples):
        n = len(samples[self.text_key])
        col = samples.get(self.image_key)
        rows = [i for i in range(n) if col is not None and col[i]]
        answers = {}
        if rows:
            ctx = samples.get(Fields.context)
            ask = {"text": [PROMPT + str(samples[self.text_key][i]) + PROMPT_END for i in rows],
                   "images": [[col[i][0]] for i in rows]}
            if ctx is not None:
                ask[Fields.context] = [ctx[i] for i in rows]
            if self.image_bytes_key in samples:
                ask[self.mllm_mapper.image_bytes_key] = [samples[self.image_bytes_key][i][:1]
                                                         if samples[self.image_bytes_key][i] else None for i in rows]
            out = self.mllm_mapper.process_batched(ask)["text"]
            answers = {i: out[k][0].split("ASSISTANT:")[-1].strip() for k, i in enumerate(rows)}
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        for i in range(n):
            metas[i][META_KEY] = parse_main_characters(answers[i], self.filter_min_character_num) if i in answers else []
        samples[Fields.meta] = metas
        return samples
