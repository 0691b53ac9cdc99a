"""Prompt strategies shared by the semantic LLM ops (``llm_condition_filter``, ``llm_extract_mapper``)."""

from __future__ import annotations

import json
from enum import Enum
from typing import Optional


class InferenceStrategy(str, Enum):
    DIRECT = "direct"  # answer at once
    COT = "cot"  # reason first
    FEW_SHOT = "few_shot"  # answer at once, after examples
    COT_SHOT = "cot_shot"  # reason first, after examples


EXTRACT_SYSTEM = ("You extract information precisely. From the input, pull out the requested fields and reply "
                  "with one valid JSON object only, using exactly the output keys given; use null for a value "
                  "the input does not determine.")
_EXTRACT_BODY = "# Input\n{input_text}\n\n# Fields to extract (output key: what to extract)\n{instructions}\n\n"
_EXTRACT_TAIL = {
    InferenceStrategy.DIRECT: "# Output\nOne JSON object with these keys, no explanation.",
    InferenceStrategy.COT: "# Output\nThink through each field step by step, then give one JSON object with "
                           "these keys.",
    InferenceStrategy.FEW_SHOT: "# Output\nOne JSON object with these keys, no explanation.",
    InferenceStrategy.COT_SHOT: "# Output\nFollowing the examples, think through each field step by step, then give "
                                "one JSON object with these keys.",
}


def strategy_of(strategy) -> InferenceStrategy:
    return InferenceStrategy(strategy.value if isinstance(strategy, Enum) else (strategy or "direct"))


def extract_prompt(input_text: str, schema: dict, grounding: Optional[str] = None, strategy=None,
                   examples: Optional[str] = None) -> str:
    st = strategy_of(strategy)
    body = _EXTRACT_BODY.format(input_text=input_text,
                                instructions="\n".join(f"- {k}: {v}" for k, v in schema.items()))
    if st in (InferenceStrategy.FEW_SHOT, InferenceStrategy.COT_SHOT):
        body = f"# Examples\n{examples or ''}\n\n" + body
    body += _EXTRACT_TAIL[st]
    return f"# Background / grounding\n{grounding}\n\n" + body if grounding else body


def parse_extraction(raw: str, keys: list) -> Optional[dict]:
    """``{key: value}`` from the first JSON object in ``raw`` (or a JSON array, for a single key); None if none."""
    raw = (raw or "").strip()
    so, eo = raw.find("{"), raw.rfind("}") + 1
    sa, ea = raw.find("["), raw.rfind("]") + 1
    has_obj, has_arr = so >= 0 and eo > so, sa >= 0 and ea > sa
    try:
        if has_obj and (not has_arr or so <= sa):
            js = json.loads(raw[so:eo])
            if isinstance(js, dict):
                return {k: js.get(k) for k in keys}
        if has_arr and len(keys) == 1:
            js = json.loads(raw[sa:ea])
            if isinstance(js, list):
                return {keys[0]: js}
    except ValueError:
        return None
    return None


def add_usage(prev: Optional[dict], usage: Optional[dict]) -> dict:
    """Token counts summed over calls (``cost_estimate`` kept: the servers report no price)."""
    prev, usage = prev or {}, usage or {}
    out = {k: int(prev.get(k, 0) or 0) + int(usage.get(k, 0) or 0)
           for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    out["cost_estimate"] = float(prev.get("cost_estimate", 0) or 0)
    return out
