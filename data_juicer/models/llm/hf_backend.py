"""The ``hf`` backend: ``transformers`` ``generate`` on batches, in this process.

The model is found offline by :func:`data_juicer.models.loader.resolve_hf_model` (a folder, the
model folders, the local Hugging Face cache, a package that ships it) and loaded once per
process. ``response_format`` / ``guided_regex`` / ``guided_json`` in the sampling params are
enforced by constrained decoding.
"""

from __future__ import annotations

from typing import Optional, Sequence

from data_juicer.models.llm.base import ChatBackend, LLMRequestError, Messages


class HFBackend(ChatBackend):
    kind = "hf"

    def __init__(self, model: str, model_params: Optional[dict] = None, sampling_params: Optional[dict] = None,
                 cache=None, device: str = "cpu", max_batch: int = 16, who: str = ""):
        super().__init__(model, sampling_params, cache)
        from data_juicer.models.hf import check_hf_model

        self.model_params = dict(model_params or {})
        self.device = self.model_params.pop("device", None) or device
        self.max_batch = int(self.model_params.pop("max_batch", max_batch))
        self.who = who
        self.folder = check_hf_model(model, who=who)
        self._engine = None

    def __getstate__(self):
        d = dict(self.__dict__)
        d["_engine"] = None
        return d

    @property
    def engine(self):
        if self._engine is None:
            from data_juicer.models.hf import load_hf_model
            from data_juicer.models.llm.engine import HFEngine

            model, tok = load_hf_model(self.model, who=self.who, device=self.device, model_params=self.model_params,
                                       fallback_class="AutoModelForCausalLM")
            tok = getattr(tok, "tokenizer", tok)
            self._engine = HFEngine(model, tok, device=self.device, max_batch=self.max_batch)
        return self._engine

    def _generate(self, batch: list[Messages], params: dict) -> list:
        try:
            return [g.text for g in self.engine.generate(batch, params)]
        except (RuntimeError, ValueError) as e:
            err = LLMRequestError(f"{self.model}: generation failed: {type(e).__name__}: {e}")
            return [err] * len(batch)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.engine.embed(texts)
