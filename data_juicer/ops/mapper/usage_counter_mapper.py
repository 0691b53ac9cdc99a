from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys


def _as_int(v, default=0):
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _usage_of(obj) -> dict | None:
    """The (prompt, completion, total) usage an object carries, or None for a non-dict.

    Looks at ``obj.usage`` / ``obj.usage_metadata`` first, then at ``obj`` itself when it has
    prompt/completion counts; Anthropic-style input/output token names are understood.
    """
    if not isinstance(obj, dict):
        return None
    usage = obj.get("usage") or obj.get("usage_metadata") or {}
    if not isinstance(usage, dict):
        usage = {}
    usage_has_counts = usage.get("prompt_tokens") is not None or usage.get("completion_tokens") is not None
    obj_has_counts = obj.get("prompt_tokens") is not None or obj.get("completion_tokens") is not None
    if not (usage and usage_has_counts) and obj_has_counts:
        usage = obj
    return {
        "prompt_tokens": usage.get("prompt_tokens") or usage.get("input_tokens", 0),
        "completion_tokens": usage.get("completion_tokens") or usage.get("output_tokens", 0),
        "total_tokens": usage.get("total_tokens"),
    }


def _snapshot_key(u: dict) -> tuple:
    p = _as_int(u["prompt_tokens"] or 0)
    c = _as_int(u["completion_tokens"] or 0)
    t = u["total_tokens"]
    return p, c, (p + c if t is None else _as_int(t, p + c))


@OPERATORS.register_module("usage_counter_mapper")
class UsageCounterMapper(Mapper):
    """Writes the token usage of an LLM/agent response into ``__dj__meta__``
    (``prompt_tokens``, ``completion_tokens``, ``total_tokens``).

    Usage objects are collected from the ``usage_key`` field (or, when it holds no dict, the
    sample's own top-level counts), from ``response_metadata_key``, and from every entry of
    ``choices_key`` and its ``message``/``delta``; each may carry OpenAI-style
    ``prompt_tokens``/``completion_tokens``/``total_tokens`` or Anthropic-style
    ``input_tokens``/``output_tokens``, directly or under ``usage``/``usage_metadata``.
    Prompt and completion counts are summed; ``total_tokens`` is the first total found, else
    prompt + completion when any count is non-zero, else None. By default identical snapshots
    (same prompt, completion and total) are counted once.

    :param choices_key: field holding the list of choices
    :param usage_key: field holding the top-level usage object
    :param response_metadata_key: field holding response metadata (with a usage object)
    :param dedupe_identical_usage: count identical usage snapshots only once
    """

    def __init__(
        self,
        choices_key: str = "choices",
        usage_key: str = "usage",
        response_metadata_key: str = "response_metadata",
        dedupe_identical_usage: bool = True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.choices_key = choices_key
        self.usage_key = usage_key
        self.response_metadata_key = response_metadata_key
        self.dedupe_identical_usage = bool(dedupe_identical_usage)

    def _collect(self, sample: dict, whole_row) -> list:
        found = []
        if self.usage_key in sample:
            # a usage field without a dict: fall back to the sample's own top-level counts
            found.append(_usage_of(sample[self.usage_key]) or _usage_of(whole_row()))
        meta = sample.get(self.response_metadata_key) or {}
        found.append(_usage_of(meta))
        choices = sample.get(self.choices_key) or []
        if isinstance(choices, list):
            for ch in choices:
                if isinstance(ch, dict):
                    found.append(_usage_of(ch))
                    found.append(_usage_of(ch.get("message") or ch.get("delta")))
        found = [u for u in found if u]
        if self.dedupe_identical_usage:
            seen: set = set()
            uniq = []
            for u in found:
                k = _snapshot_key(u)
                if k not in seen:
                    seen.add(k)
                    uniq.append(u)
            found = uniq
        return found

    def process_batched(self, samples):
        keys = list(samples)
        n = len(samples[keys[0]]) if keys else 0
        metas = samples.get(Fields.meta) or [None] * n
        cols = [k for k in (self.usage_key, self.response_metadata_key, self.choices_key) if k in samples]
        new_metas = []
        for i in range(n):
            usages = self._collect({k: samples[k][i] for k in cols}, lambda i=i: {k: v[i] for k, v in samples.items()})
            p = sum(u["prompt_tokens"] or 0 for u in usages)
            c = sum(u["completion_tokens"] or 0 for u in usages)
            t = next((u["total_tokens"] for u in usages if u["total_tokens"] is not None), None)
            if t is None and (p or c):
                t = p + c
            meta = dict(metas[i]) if metas[i] else {}
            meta[MetaKeys.prompt_tokens] = p
            meta[MetaKeys.completion_tokens] = c
            meta[MetaKeys.total_tokens] = t
            new_metas.append(meta)
        samples[Fields.meta] = new_metas
        return samples
