from typing import Annotated

from pydantic import Field

from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

# texts per forward pass
_CHUNK = 32


@OPERATORS.register_module("text_pair_similarity_filter")
class TextPairSimilarityFilter(Filter):
    """Keeps text pairs whose embedding cosine similarity (stat ``text_pair_similarity``, a
    one-element list) is within [min_score, max_score].

    The two texts are ``text_key`` and ``text_key_second``; both are embedded with the text tower
    of the Hugging Face CLIP model ``hf_clip`` (its projected pooled text features). A model
    without ``get_text_features`` (e.g. a sentence-embedding BERT) is embedded by mean pooling of
    its last hidden states instead. A sample where either text is missing or empty gets ``[]``
    and is kept. The model is loaded offline from the models folder (see ``data_juicer.models``).

    A text longer than the model's window (CLIP: 77 tokens) is cut to it. Data-Juicer 1.6.1 fails
    the sample there (the tokenizer is called without truncation); this is a deliberate difference.
    """

    _accelerator = "cuda"
    requires = ("torch", "transformers")

    def __init__(
        self,
        hf_clip="openai/clip-vit-base-patch32",
        trust_remote_code=False,
        min_score: Annotated[float, Field(ge=0, le=1)] = 0.1,
        max_score: Annotated[float, Field(ge=0, le=1)] = 1.0,
        text_key_second=None,
        any_or_all: str = "any",
        **kwargs,
    ):
        """
        :param hf_clip: CLIP model name (resolved to a local folder) or folder path
        :param trust_remote_code: allow the model folder's own code (``auto_map``) to run
        :param min_score: smallest similarity kept
        :param max_score: largest similarity kept
        :param text_key_second: field holding the second text of the pair (required)
        :param any_or_all: ``any`` or ``all``: with several scores, keep when any / all are in range
        """
        super().__init__(**kwargs)
        if any_or_all not in ("any", "all"):
            raise ValueError(f"text_pair_similarity_filter: any_or_all={any_or_all!r} is not supported; "
                             "use 'any' or 'all'.")
        if not text_key_second:
            raise ValueError("text_pair_similarity_filter compares two text fields: set `text_key_second` "
                             "to the field holding the second text.")
        from data_juicer.models.hf import check_hf_model

        check_hf_model(hf_clip, who=self.name)
        self.hf_clip = hf_clip
        self.trust_remote_code = trust_remote_code
        self.min_score = min_score
        self.max_score = max_score
        self.text_key_second = text_key_second
        self.any = any_or_all == "any"

    def _embed(self, texts: list[str]):
        from data_juicer.models.hf import load_hf_model, pick_device
        from data_juicer.utils.lazy import require

        torch = require("torch", who=self.name)
        device = pick_device(self.accelerator)
        model, processor = load_hf_model(self.hf_clip, who=self.name, device=device,
                                         model_params={"trust_remote_code": self.trust_remote_code})
        out = []
        with torch.no_grad():
            for i in range(0, len(texts), _CHUNK):
                enc = processor(text=texts[i:i + _CHUNK], padding=True, truncation=True, return_tensors="pt")
                ids, mask = enc["input_ids"].to(model.device), enc["attention_mask"].to(model.device)
                if hasattr(model, "get_text_features"):
                    feats = model.get_text_features(input_ids=ids, attention_mask=mask)
                    if not isinstance(feats, torch.Tensor):  # transformers >= 5 returns an output object
                        feats = feats.pooler_output
                else:
                    hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
                    m = mask.unsqueeze(-1).to(hidden.dtype)
                    feats = (hidden * m).sum(1) / m.sum(1).clamp(min=1e-9)
                out.append(feats.float())
        return torch.cat(out)

    def compute_stats_batched(self, samples):
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if StatsKeys.text_pair_similarity not in s]
        if not todo:
            return samples
        firsts = samples.get(self.text_key) or [None] * len(stats)
        seconds = samples.get(self.text_key_second) or [None] * len(stats)
        pairs = []
        for i in todo:
            a, b = firsts[i], seconds[i]
            if not a or not b:
                stats[i][StatsKeys.text_pair_similarity] = []
            else:
                pairs.append(i)
        if pairs:
            from data_juicer.utils.lazy import require

            torch = require("torch", who=self.name)
            emb = self._embed([firsts[i] for i in pairs] + [seconds[i] for i in pairs])
            n = len(pairs)
            sims = torch.cosine_similarity(emb[:n], emb[n:], dim=1).tolist()
            for i, sim in zip(pairs, sims):
                stats[i][StatsKeys.text_pair_similarity] = [sim]
        return samples

    def process_batched(self, samples):
        keep = []
        for s in samples[Fields.stats]:
            sims = s[StatsKeys.text_pair_similarity]
            if sims is None or len(sims) == 0:
                keep.append(True)
                continue
            flags = [self.get_keep_boolean(v, self.min_score, self.max_score) for v in sims]
            keep.append(any(flags) if self.any else all(flags))
        return keep
