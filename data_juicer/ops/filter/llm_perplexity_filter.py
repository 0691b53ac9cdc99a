import math

from data_juicer.ops.base import Filter
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys

_CHUNK = 8  # sequences per forward pass


def exp_or_inf(x: float) -> float:
    """``exp(x)`` as numpy gives it: ``inf`` on overflow, ``nan`` for ``nan``."""
    return math.inf if x > 709.78 else math.exp(x)


@OPERATORS.register_module("llm_perplexity_filter")
class LLMPerplexityFilter(Filter):
    """Keeps samples whose perplexity under a Hugging Face causal LM (stat ``llm_perplexity``)
    is within [min_score, max_score].

    The sample becomes a user message (``query_template``, default empty) and an assistant
    message (``response_template``, default ``{text}``), unless it already has ``messages``.
    The message contents are joined with spaces and the perplexity is ``exp`` of the mean token
    loss over the last tokens, as many as the response has (minus one when the tokenizer has a
    BOS token), exactly as Data-Juicer counts them. Texts longer than ``model_params.max_length``
    (else the tokenizer's limit) lose their beginning. The model is loaded offline from the
    models folder.
    """

    _accelerator = "cuda"
    requires = ("torch", "transformers")

    def __init__(
        self,
        hf_model: str = "Qwen/Qwen2.5-0.5B",
        model_params: dict | None = None,
        min_score: float = 1.0,
        max_score: float = 100.0,
        query_template: str | None = None,
        response_template: str | None = None,
        **kwargs,
    ):
        """
        :param hf_model: Hugging Face causal LM name (resolved to a local folder) or folder
        :param model_params: extra ``from_pretrained`` arguments; ``max_length`` caps the tokens
            scored, ``device`` picks the device
        :param min_score: smallest perplexity kept
        :param max_score: largest perplexity kept
        :param query_template: format template of the user message (default: empty)
        :param response_template: format template of the assistant message (default ``{text}``)
        """
        super().__init__(**kwargs)
        from data_juicer.models.hf import check_hf_model

        check_hf_model(hf_model, who=self.name)
        self.hf_model = hf_model
        self.model_params = dict(model_params or {})
        self.min_score = min_score
        self.max_score = max_score
        self.query_template = query_template or ""
        self.response_template = response_template or "{text}"

    # -- shared with instruction_following_difficulty_filter and in_context_influence_filter --
    def sample_with_messages(self, sample: dict, system_prompt: str | None = None) -> dict:
        """The sample with a ``messages`` list (its own, else built from the templates)."""
        if sample.get("messages") is not None:
            return sample
        messages = [{"role": "user", "content": self.query_template.format(**sample)},
                    {"role": "assistant", "content": self.response_template.format(**sample)}]
        if system_prompt is not None:
            messages = [{"role": "system", "content": system_prompt}] + messages
        return {**sample, "messages": messages}

    def _model(self):
        from data_juicer.models.hf import load_hf_model, pick_device

        params = {k: v for k, v in self.model_params.items() if k != "max_length"}
        model, processor = load_hf_model(self.hf_model, who=self.name, model_params=params,
                                         device=pick_device(self.accelerator, self.model_params),
                                         fallback_class="AutoModelForCausalLM")
        tok = getattr(processor, "tokenizer", processor)
        tok.truncation_side = "left"
        return model, tok

    def losses(self, pairs: list[tuple[dict, dict | None]]) -> list[float]:
        """Mean response-token loss of each ``(example, pre_example)``; both have ``messages``,
        the pre-example's messages (if any) come first as context."""
        if not pairs:
            return []
        from data_juicer.utils.lazy import require

        torch = require("torch", who=self.name)
        model, tok = self._model()
        max_length = self.model_params.get("max_length")
        fulls, responses = [], []
        for example, pre in pairs:
            msgs = (pre["messages"] if pre is not None else []) + example["messages"]
            fulls.append(" ".join(m["content"] for m in msgs).strip())
            responses.append(msgs[-1]["content"].strip())
        full_ids = tok(fulls, max_length=max_length, truncation=True)["input_ids"]
        resp_lens = [len(ids) for ids in tok(responses, max_length=max_length, truncation=True)["input_ids"]]
        has_bos = int(tok.bos_token_id is not None)
        out = [float("nan")] * len(full_ids)
        # similar lengths share a forward pass (less padding)
        order = sorted(range(len(full_ids)), key=lambda k: len(full_ids[k]))
        with torch.no_grad():
            for start in range(0, len(order), _CHUNK):
                chunk = order[start:start + _CHUNK]
                ids = [full_ids[k] for k in chunk]
                width = max(len(x) for x in ids)
                # right padding: with causal attention the real tokens never see the pads
                inp = torch.zeros((len(ids), width), dtype=torch.long)
                mask = torch.zeros((len(ids), width), dtype=torch.long)
                for j, x in enumerate(ids):
                    inp[j, :len(x)] = torch.tensor(x, dtype=torch.long)
                    mask[j, :len(x)] = 1
                logits = model(input_ids=inp.to(model.device), attention_mask=mask.to(model.device)).logits
                for j, x in enumerate(ids):
                    n = len(x)
                    labels = torch.tensor(x, dtype=torch.long)
                    # Data-Juicer masks labels[:-response_len] with Python slice semantics
                    masked = range(n)[:-(resp_lens[chunk[j]] - has_bos)]
                    labels[list(masked)] = -100
                    loss = torch.nn.functional.cross_entropy(
                        logits[j, : n - 1].float().cpu(), labels[1:], ignore_index=-100)
                    out[chunk[j]] = loss.item()
        return out

    def _rows(self, samples: dict, idx: list[int]) -> list[dict]:
        keys = list(samples)
        return [self.sample_with_messages({k: samples[k][i] for k in keys}) for i in idx]

    # -- the filter ----------------------------------------------------------------------------
    def compute_stats_batched(self, samples):
        stats = samples[Fields.stats]
        todo = [i for i, s in enumerate(stats) if StatsKeys.llm_perplexity not in s]
        if todo:
            rows = self._rows(samples, todo)
            for i, loss in zip(todo, self.losses([(r, None) for r in rows])):
                stats[i][StatsKeys.llm_perplexity] = exp_or_inf(loss)
        return samples

    def process_batched(self, samples):
        return [self.get_keep_boolean(s[StatsKeys.llm_perplexity], self.min_score, self.max_score)
                for s in samples[Fields.stats]]
