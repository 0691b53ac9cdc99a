"""Shared body of the query_{intent,sentiment,topic}_detection_mapper ops: a Hugging Face
text-classification pipeline (optionally after a zh->en seq2seq translation model) whose top label
and score go into ``__dj__meta__``."""


from data_juicer.ops.base import Mapper
from data_juicer.utils.constant import Fields

_PIPE_BATCH = 32  # texts per pipeline forward pass


class HFQueryClassifierMapper(Mapper):
    """Base of the query classification mappers (not registered itself)."""

    _accelerator = "cuda"
    requires = ("torch", "transformers")

    def _setup(self, hf_model: str, zh_to_en_hf_model: str | None, model_params: dict,
               zh_to_en_model_params: dict, label_key: str, score_key: str) -> None:
        from data_juicer.models.hf import check_hf_model

        if not label_key or not score_key:
            raise ValueError(f"{self.name}: label_key and score_key must be non-empty meta key names")
        check_hf_model(hf_model, who=self.name)
        if zh_to_en_hf_model is not None:
            check_hf_model(zh_to_en_hf_model, who=self.name)
        self.hf_model = hf_model
        self.zh_to_en_hf_model = zh_to_en_hf_model
        self.model_params = dict(model_params or {})
        self.zh_to_en_model_params = dict(zh_to_en_model_params or {})
        self.label_key = label_key
        self.score_key = score_key

    def _pipe(self, name: str, task: str, params: dict):
        from data_juicer.models.hf import load_hf_pipeline, pick_device

        return load_hf_pipeline(name, task, who=self.name, device=pick_device(self.accelerator, params),
                                model_params=params)

    def _translate(self, texts: list[str]) -> list[str]:
        """Translate with the seq2seq model (greedy/beam per its generation config), as the
        ``translation`` pipeline of transformers 4 did; transformers 5 dropped that pipeline."""
        from data_juicer.models.hf import load_hf_model, pick_device
        from data_juicer.utils.lazy import require

        torch = require("torch", who=self.name)
        params = self.zh_to_en_model_params
        model, tok = load_hf_model(self.zh_to_en_hf_model, who=self.name, model_params=params,
                                   device=pick_device(self.accelerator, params),
                                   fallback_class="AutoModelForSeq2SeqLM")
        tok = getattr(tok, "tokenizer", tok)
        out = []
        with torch.no_grad():
            for i in range(0, len(texts), _PIPE_BATCH):
                enc = tok(texts[i:i + _PIPE_BATCH], padding=True, return_tensors="pt").to(model.device)
                enc.pop("token_type_ids", None)
                gen = model.generate(**enc)
                out.extend(tok.batch_decode(gen, skip_special_tokens=True, clean_up_tokenization_spaces=False))
        return out

    def process_batched(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        metas = [dict(m) if m else {} for m in (samples.get(Fields.meta) or [None] * n)]
        todo = [i for i, m in enumerate(metas) if self.label_key not in m or self.score_key not in m]
        if todo:
            queries = [samples[self.query_key][i] for i in todo]
            bs = min(_PIPE_BATCH, len(queries))
            if self.zh_to_en_hf_model is not None:
                queries = self._translate(queries)
            classifier = self._pipe(self.hf_model, "text-classification", self.model_params)
            for i, r in zip(todo, classifier(queries, batch_size=bs)):
                metas[i][self.label_key] = r["label"]
                metas[i][self.score_key] = r["score"]
        samples[Fields.meta] = metas
        return samples
