import json
import os
import string
import urllib.request
from typing import Annotated

from pydantic import Field

from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

_CHUNK = 16  # texts per forward pass
_MAX_LEN = 4096  # tokens kept per text (as Data-Juicer)
_POOLINGS = (None, "mean", "weighted_mean")


def template_fields(template: str) -> list[str]:
    """The ``{field}`` names of a format template, in order."""
    return [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]


def render_template(template: str, fields: list[str], sample: dict) -> str:
    """Fill ``template`` from the sample's fields; when one is missing, from the contents of
    ``sample['messages']`` taken in order (as Data-Juicer does)."""
    if all(f in sample for f in fields):
        return template.format(**sample)
    msgs = sample.get("messages")
    if msgs is None:
        missing = [f for f in fields if f not in sample]
        raise KeyError(f"input_template needs fields {missing} (or a 'messages' list), missing in the sample")
    contents = [m["content"] for m in msgs]
    return template.format(**dict(zip(fields, contents[: len(fields)])))


def _nested(obj, path: str):
    for part in path.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


@OPERATORS.register_module("text_embd_similarity_filter")
class TextEmbdSimilarityFilter(Filter):
    """Keeps samples whose mean cosine similarity to the embeddings of a validation set (stat
    ``text_embd_similarity``) is within [min_score, max_score].

    Each sample is rendered through ``input_template`` (default: its ``text_key`` field) and
    embedded either by a local Hugging Face model (``is_hf_model: true``; the hidden state of the
    last token, or a mean / position-weighted mean of the hidden states, L2-normalised) or by an
    OpenAI-compatible embeddings endpoint (needs ``base_url`` in ``model_params`` or
    ``OPENAI_BASE_URL``). A sample whose embedding fails gets ``None`` and is kept.
    """

    _accelerator = "cuda"
    requires = ("torch",)

    @classmethod
    def required_packages(cls, params: dict) -> tuple[str, ...]:
        return ("torch", "transformers") if params.get("is_hf_model") else ("torch",)

    def __init__(
        self,
        api_or_hf_model: str = "text-embedding-v4",
        is_hf_model: bool = False,
        api_endpoint: str = "embeddings",
        response_path: str = "data.0.embedding",
        model_params: dict | None = None,
        min_score: Annotated[float, Field(ge=0, le=1)] = 0.1,
        max_score: Annotated[float, Field(ge=0, le=1)] = 1.0,
        valid_dataset: list[dict] | None = None,
        ebd_dim: int = 4096,
        pooling: str | None = None,
        input_template: str | None = None,
        **kwargs,
    ):
        """
        :param api_or_hf_model: embedding model: an API model name, or a Hugging Face model name
            (resolved to a local folder) or folder when ``is_hf_model`` is true
        :param is_hf_model: embed with a local Hugging Face model instead of an API
        :param api_endpoint: API path of the embeddings endpoint, relative to the base URL
        :param response_path: dotted path of the embedding in the API's JSON response
        :param model_params: API: ``base_url``, ``api_key``, ``timeout``; HF: ``trust_remote_code``
        :param min_score: smallest mean similarity kept
        :param max_score: largest mean similarity kept
        :param valid_dataset: the validation samples (list of dicts) to compare against (required)
        :param ebd_dim: embedding size requested from the API (ignored for HF models)
        :param pooling: HF models: ``None`` (last token), ``mean`` or ``weighted_mean``
        :param input_template: format template building the text to embed, e.g. ``{query} {response}``
        """
        super().__init__(**kwargs)
        if pooling not in _POOLINGS:
            raise ValueError(f"text_embd_similarity_filter: pooling={pooling!r} is not supported; "
                             "use null, 'mean' or 'weighted_mean'.")
        self.model_params = dict(model_params or {})
        self.api_or_hf_model = api_or_hf_model
        self.is_hf_model = is_hf_model
        self.api_endpoint = api_endpoint
        self.response_path = response_path
        self.min_score = min_score
        self.max_score = max_score
        self.ebd_dim = ebd_dim
        self.pooling = pooling
        self.input_template = input_template or "{" + self.text_key + "}"
        self._fields = template_fields(self.input_template)
        if is_hf_model:
            from data_juicer.models.hf import check_hf_model

            check_hf_model(api_or_hf_model, who=self.name)
        else:
            self.base_url = (self.model_params.get("base_url") or os.environ.get("OPENAI_BASE_URL") or "").rstrip("/")
            if not self.base_url:
                raise ValueError(
                    "text_embd_similarity_filter: API model "
                    f"'{api_or_hf_model}' needs an OpenAI-compatible server: give `base_url` in model_params "
                    "(or set OPENAI_BASE_URL), or set `is_hf_model: true` to embed with a local model.")
        self.valid_feature: dict = {}
        if valid_dataset is None:
            raise ValueError("text_embd_similarity_filter needs `valid_dataset` (a list of samples to compare "
                             "against); or build it in Python and call prepare_valid_feature(samples).")
        self.prepare_valid_feature(valid_dataset)

    # -- validation set ---------------------------------------------------------------------
    def prepare_valid_feature(self, dataset, n_shot: int | None = None):
        """Use the first ``n_shot`` (default all) validation samples (a list of dicts or a dataset).

        Their texts are rendered now; they are embedded on first use, in the worker that scores.
        """
        rows = [dict(r) for r in dataset]
        keys = {k: None for r in rows for k in r}  # a dataset built from these rows has every key
        rows = [{**keys, **r} for r in rows][: n_shot or len(rows)]
        if not rows:
            raise ValueError("text_embd_similarity_filter: valid_dataset is empty")
        self.valid_feature = {"texts": [self._text(r) for r in rows]}

    @property
    def valid_feature_ready(self) -> bool:
        return "texts" in self.valid_feature

    def _valid_embeddings(self):
        if "embeddings" not in self.valid_feature:
            embs = self._embed(self.valid_feature["texts"])
            if any(e is None for e in embs):
                raise ValueError("text_embd_similarity_filter: a validation sample could not be embedded")
            torch = self._torch()
            self.valid_feature["embeddings"] = torch.tensor(embs, dtype=torch.float64)
        return self.valid_feature["embeddings"]

    def _text(self, sample: dict) -> str:
        return render_template(self.input_template, self._fields, sample)

    def _torch(self):
        from data_juicer.utils.lazy import require

        return require("torch", who=self.name)

    # -- embedding ---------------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> list:
        return self._embed_hf(texts) if self.is_hf_model else [self._embed_api(t) for t in texts]

    def _embed_hf(self, texts):
        from data_juicer.models.hf import load_hf_model, pick_device

        torch = self._torch()
        device = pick_device(self.accelerator, self.model_params)
        params = {"trust_remote_code": bool(self.model_params.get("trust_remote_code", False))}
        model, tok = load_hf_model(self.api_or_hf_model, who=self.name, device=device, model_params=params)
        tok = getattr(tok, "tokenizer", tok)
        tok.padding_side = "right"  # pads after the text: a causal model's real tokens never see them
        chunk = _CHUNK if tok.pad_token is not None else 1
        out = [None] * len(texts)
        order = sorted(range(len(texts)), key=lambda k: len(texts[k]))  # similar lengths: less padding
        with torch.no_grad():
            for i in range(0, len(texts), chunk):
                idx = order[i:i + chunk]
                enc = tok([texts[k] for k in idx], padding=True, truncation=True, max_length=_MAX_LEN,
                          return_tensors="pt").to(model.device)
                hidden = model(**enc).last_hidden_state
                mask = enc["attention_mask"]
                if self.pooling is None:  # the last real token of each row
                    pos = torch.arange(mask.shape[1], device=mask.device)
                    last = (mask * (pos + 1)).argmax(dim=1)
                    emb = hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
                else:
                    w = mask if self.pooling == "mean" else mask.cumsum(dim=1) * mask
                    emb = (hidden * w.unsqueeze(-1).to(hidden.dtype)).sum(dim=1)
                emb = torch.nn.functional.normalize(emb.float(), p=2, dim=1)
                for k, e in zip(idx, emb.cpu().tolist()):
                    out[k] = e
        return out

    def _embed_api(self, text: str):
        url = f"{self.base_url}/{self.api_endpoint.lstrip('/')}"
        headers = {"Content-Type": "application/json"}
        key = self.model_params.get("api_key") or os.environ.get("OPENAI_API_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body = {"model": self.api_or_hf_model, "input": text, "dimensions": self.ebd_dim, "encoding_format": "float"}
        try:
            req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
            with urllib.request.urlopen(req, timeout=self.model_params.get("timeout", 60)) as resp:
                emb = _nested(json.loads(resp.read()), self.response_path)
            return [float(x) for x in emb] if emb else None
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            return None

    # -- the filter ----------------------------------------------------------------------------
    def compute_stats_batched(self, samples):
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if StatsKeys.text_embd_similarity not in s]
        if not todo:
            return samples
        keys = list(samples)
        texts = [self._text({k: samples[k][i] for k in keys}) for i in todo]
        valid = self._valid_embeddings()
        embs = self._embed(texts)
        torch = self._torch()
        for i, emb in zip(todo, embs):
            sim = None
            if emb is not None and len(emb) == valid.shape[1]:
                e = torch.tensor(emb, dtype=torch.float32).view(1, -1)
                sim = torch.nn.functional.cosine_similarity(e, valid).mean().item()
            stats[i][StatsKeys.text_embd_similarity] = sim
        return samples

    def process_batched(self, samples):
        return [True if s[StatsKeys.text_embd_similarity] is None
                else self.get_keep_boolean(s[StatsKeys.text_embd_similarity], self.min_score, self.max_score)
                for s in samples[Fields.stats]]
