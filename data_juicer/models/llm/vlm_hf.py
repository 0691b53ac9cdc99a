"""In-process vision-language generation with ``transformers`` (processor chat template + ``generate``).

For VLM ops whose Data-Juicer default is a local Hugging Face model (e.g. Qwen-VL): chats use
content parts ``{"type": "text"}``, ``{"type": "image", "image": path}``, ``{"type": "video",
"video": path}``, which the model's processor turns into inputs.
"""

from __future__ import annotations

from typing import Optional

from data_juicer.models.llm.engine import _GEN_KEYS
from data_juicer.utils.lazy import require


class HFVisionGenerator:
    def __init__(self, model: str, model_params: Optional[dict] = None, who: str = ""):
        from data_juicer.models.hf import check_hf_model

        self.model = model
        self.model_params = dict(model_params or {})
        self.device = self.model_params.pop("device", "cpu")
        self.who = who
        self.folder = check_hf_model(model, who=who)
        self._loaded = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_loaded"] = None
        return d

    def _load(self):
        if self._loaded is None:
            from data_juicer.models.hf import load_hf_model

            self._loaded = load_hf_model(self.model, who=self.who, device=self.device, model_params=self.model_params,
                                         fallback_class="AutoModelForImageTextToText")
        return self._loaded

    def generate(self, messages: list, params: dict) -> str:
        torch = require("torch")
        model, processor = self._load()
        inputs = processor.apply_chat_template(messages, tokenize=True, add_generation_prompt=True, return_dict=True,
                                               return_tensors="pt").to(model.device)
        kw = {_GEN_KEYS[k]: v for k, v in params.items() if k in _GEN_KEYS and v is not None}
        kw.setdefault("max_new_tokens", 128)
        if not kw.get("temperature"):
            kw.pop("temperature", None)
            kw["do_sample"] = False
        with torch.inference_mode():
            ids = model.generate(**inputs, **kw)
        trimmed = ids[:, inputs["input_ids"].shape[1]:]
        return processor.batch_decode(trimmed, skip_special_tokens=True, clean_up_tokenization_spaces=False)[0]
