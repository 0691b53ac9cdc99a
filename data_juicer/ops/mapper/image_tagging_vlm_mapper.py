import ast
import base64
import json
from typing import ClassVar, Dict, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


def file_data_url(path: str, mime: str, who: str) -> str:
    """``data:<mime>;base64,...`` of a media file (OpenAI content-part URL); a clear error if unreadable."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise FileNotFoundError(f"{who}: cannot read media file {path}: {e}; check the sample's media paths") from e
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


@OPERATORS.register_module("image_tagging_vlm_mapper")
class ImageTaggingVLMMapper(LLMOpMixin, Mapper):
    """Asks a vision-language model for 5-10 descriptive tags of each image of a sample (with the
    sample's text as context) and stores them in ``meta[tag_field_name]``: one list of tags per
    image (``[[]]`` for a sample without images). A meta value already there is kept.

    The image goes as an OpenAI ``image_url`` content part (base64 data URL), so the same chats
    work against an API server (``is_api_model``) and the in-process vLLM engine (default). The
    answer is parsed as JSON (also with single quotes / as a Python literal, code fences removed);
    ``tags`` (or ``tag``, or a comma-separated string) are lower-cased, spaces become hyphens, cut
    to 30 characters, de-duplicated keeping their order (Data-Juicer's set order is arbitrary)
    and at most 10 kept. An answer that never parses in ``try_num`` attempts sends the sample to
    the error ledger with the raw answer (Data-Juicer stores an empty list).
    """

    _accelerator = "cuda"
    modality = "image"
    DEFAULT_SYSTEM_PROMPT: ClassVar[str] = (
        "Describe the image(s) with specific descriptive tags, following these rules:\n"
        "1. each tag is a short English noun phrase or gerund\n"
        "2. lowercase, words joined by hyphens\n"
        "3. cover objects, actions, colours, materials, style, mood and setting\n"
        "4. prefer what is prominent and distinctive\n"
        "5. give the 5 to 10 most relevant tags\n"
        '6. answer only with JSON: {"tags": ["tag1", "tag2", ...]}\n'
        'For example: {"tags": ["city-street", "rainy-night", "neon-signs", "reflections", "pedestrians"]}'
    )
    DEFAULT_INPUT_TEMPLATE: ClassVar[str] = (
        "Look at the image and at its text description, if there is one, and write the tags.\n"
        "Text description: {text}\n"
        "Use the text only where it matches the image; if it is missing or unrelated, tag the image alone."
    )

    def __init__(
        self,
        api_or_hf_model: str = "Qwen/Qwen2.5-VL-7B-Instruct",
        is_api_model: bool = False,
        *,
        tag_field_name: str = MetaKeys.image_tags,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        system_prompt: Optional[str] = None,
        input_template: Optional[str] = None,
        model_params: Dict = {},
        sampling_params: Dict = {},
        try_num: PositiveInt = 3,
        **kwargs,
    ):
        """
        :param api_or_hf_model: the VLM: a Hugging Face model for vLLM, or an API model name
        :param is_api_model: call an OpenAI-compatible API (else an in-process vLLM engine)
        :param tag_field_name: meta key of the tags
        :param api_endpoint: path under the base URL or full URL of the chat endpoint
        :param response_path: dotted path of the text in the API answer
        :param system_prompt: system prompt
        :param input_template: user prompt template with ``{text}``
        :param model_params: API client options (``base_url``, ...) or vLLM engine arguments
        :param sampling_params: generation settings
        :param try_num: attempts until an answer parses
        """
        super().__init__(**kwargs)
        self.is_api_model = is_api_model
        self.tag_field_name = tag_field_name
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.input_template = input_template or self.DEFAULT_INPUT_TEMPLATE
        self.init_llm(model=api_or_hf_model, kind="api" if is_api_model else "vllm", api_endpoint=api_endpoint,
                      response_path=response_path, model_params=model_params, sampling_params=sampling_params,
                      try_num=try_num)
        if self.llm_kind == "api":
            self.accelerator = "cpu"

    @staticmethod
    def parse_output(raw: str):
        s = raw.strip()
        for junk in ("```json", "```", "JSON:", "Response:"):
            s = s.replace(junk, "")
        result = None
        for attempt in (lambda: json.loads(s, strict=False), lambda: json.loads(s.replace("'", '"'), strict=False),
                        lambda: ast.literal_eval(s)):
            try:
                result = attempt()
                break
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
        if not isinstance(result, dict):
            return None
        tags = result.get("tags", result.get("tag", []))
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",")]
        if not isinstance(tags, list):
            return None
        clean = [t.lower().replace(" ", "-")[:30] for t in tags if isinstance(t, str)]
        return list(dict.fromkeys(clean))[:10]

    def build_messages(self, text: str, image_path: str) -> list:
        content = [{"type": "text", "text": self.input_template.format(text=text)},
                   {"type": "image_url", "image_url": {"url": file_data_url(image_path, "image/jpeg", self.name)}}]
        msgs = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return msgs + [{"role": "user", "content": content}]

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        n = len(next(iter(samples.values()))) if samples else 0
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        images = samples.get(self.image_key) or [None] * n
        texts = samples.get(self.text_key) or [""] * n
        todo, msgs = [], []
        for i in range(n):
            if self.tag_field_name in metas[i]:
                continue
            if not images[i]:
                metas[i][self.tag_field_name] = [[]]
                continue
            for path in images[i]:
                todo.append(i)
                msgs.append(self.build_messages(texts[i] or "", path))
        for i in set(todo):
            metas[i][self.tag_field_name] = []
        for i, tags in zip(todo, self.llm_parse(msgs, self.parse_output)):
            metas[i][self.tag_field_name].append(tags)
        samples[Fields.meta] = metas
        return samples
