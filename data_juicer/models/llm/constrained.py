"""Constrained decoding for the ``hf`` backend and the local test server: the output must match a regex.

A JSON schema (or ``response_format: json_object``) is turned into a regex over a compact JSON
spelling; during generation only tokens that keep the text a prefix of some match are allowed
(``regex`` partial matching), and the end token only once the text is a full match.
"""

from __future__ import annotations

import json
from typing import Optional

_STR_CHAR = r'(?:[^"\\\n]|\\["\\/nt])'


def _string(max_len: int) -> str:
    return f'"{_STR_CHAR}{{0,{max_len}}}"'


_NUMBER = r"-?(?:0|[1-9][0-9]{0,8})(?:\.[0-9]{1,6})?"
_INTEGER = r"-?(?:0|[1-9][0-9]{0,8})"


def schema_to_regex(schema: dict, max_str: int = 64, max_items: int = 8) -> str:
    """A regex matching the compact JSON texts valid for ``schema`` (a practical subset of JSON Schema:
    object/properties (all emitted, in order), array/items, string/enum/const, number, integer, boolean, null)."""
    if "enum" in schema:
        return "(?:" + "|".join(_escape(json.dumps(v, ensure_ascii=False)) for v in schema["enum"]) + ")"
    if "const" in schema:
        return _escape(json.dumps(schema["const"], ensure_ascii=False))
    if "anyOf" in schema or "oneOf" in schema:
        alts = schema.get("anyOf") or schema.get("oneOf")
        return "(?:" + "|".join(schema_to_regex(a, max_str, max_items) for a in alts) + ")"
    t = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(t, list):
        return "(?:" + "|".join(schema_to_regex(dict(schema, type=x), max_str, max_items) for x in t) + ")"
    if t == "object":
        props = schema.get("properties")
        if not props:
            return json_object_regex(max_str)
        parts = [_escape(json.dumps(k, ensure_ascii=False)) + ": ?" + schema_to_regex(v, max_str, max_items)
                 for k, v in props.items()]
        return r"\{ ?" + ", ?".join(parts) + r" ?\}"
    if t == "array":
        item = schema_to_regex(schema.get("items", {"type": "string"}), max_str, max_items)
        lo = int(schema.get("minItems", 0))
        hi = int(schema.get("maxItems", max_items))
        if lo == 0:
            return rf"\[(?:{item}(?:, ?{item}){{0,{max(hi - 1, 0)}}})?\]"
        return rf"\[{item}(?:, ?{item}){{{lo - 1},{max(hi - 1, lo - 1)}}}\]"
    if t == "string":
        return _string(int(schema.get("maxLength", max_str)))
    if t == "number":
        return _NUMBER
    if t == "integer":
        return _INTEGER
    if t == "boolean":
        return "(?:true|false)"
    if t == "null":
        return "null"
    raise ValueError(f"JSON schema type {t!r} is not supported for constrained decoding")


def json_object_regex(max_str: int = 64, max_keys: int = 8) -> str:
    """Any flat JSON object with string keys and string/number/boolean values."""
    value = f"(?:{_string(max_str)}|{_NUMBER}|true|false|null)"
    pair = f"{_string(32)}: ?{value}"
    return rf"\{{ ?(?:{pair}(?:, ?{pair}){{0,{max_keys - 1}}})? ?\}}"


def _escape(text: str) -> str:
    import re

    return re.escape(text)


def constraint_pattern(params: dict) -> Optional[str]:
    """The regex a request's params ask the output to match (OpenAI ``response_format``, vLLM's
    ``guided_regex``/``guided_json``/``structured_outputs``), or None."""
    so = params.get("structured_outputs") or {}
    if params.get("guided_regex") or so.get("regex"):
        return params.get("guided_regex") or so.get("regex")
    schema = params.get("guided_json") or so.get("json")
    rf = params.get("response_format") or {}
    if schema is None and rf.get("type") == "json_schema":
        js = rf.get("json_schema") or {}
        schema = js.get("schema", js)
    if schema is not None:
        if isinstance(schema, str):
            schema = json.loads(schema)
        return schema_to_regex(schema)
    if rf.get("type") == "json_object":
        return json_object_regex()
    if rf.get("type") == "regex":  # an extension some servers accept
        return rf.get("regex") or rf.get("pattern")
    return None


class RegexConstraint:
    """Which continuations keep a text on the way to a full match of ``pattern``."""

    def __init__(self, pattern: str):
        import regex

        self._re = regex.compile(pattern)

    def can_extend(self, text: str) -> bool:
        return self._re.fullmatch(text, partial=True) is not None

    def complete(self, text: str) -> bool:
        return self._re.fullmatch(text) is not None


class ConstrainedLogits:
    """A ``transformers`` logits processor enforcing one :class:`RegexConstraint` per batch row (or None).

    Checks the ``top_k`` best tokens first and falls back to every single-character token, so
    the cost stays small with large vocabularies.
    """

    def __init__(self, constraints: list, token_texts: list[str], prompt_len: int, eos_id: int, top_k: int = 48):
        self.constraints = constraints
        self.token_texts = token_texts
        self.prompt_len = prompt_len
        self.eos_id = eos_id
        self.top_k = top_k
        self.single = [i for i, t in enumerate(token_texts) if len(t) == 1 and i != eos_id]
        self.texts = [""] * len(constraints)

    def __call__(self, input_ids, scores):
        import torch

        for row, c in enumerate(self.constraints):
            if c is None:
                continue
            gen = input_ids[row, self.prompt_len:].tolist()
            text = "".join(self.token_texts[t] for t in gen if t != self.eos_id)
            if gen and gen[-1] == self.eos_id:
                allowed = [self.eos_id]
            else:
                allowed = []
                order = torch.topk(scores[row], min(self.top_k, scores.shape[-1])).indices.tolist()
                for cands in (order, self.single):
                    for t in cands:
                        if t == self.eos_id:
                            continue
                        piece = self.token_texts[t]
                        if piece and c.can_extend(text + piece):
                            allowed.append(t)
                            if len(allowed) >= 8:
                                break
                    if allowed:
                        break
                if c.complete(text):
                    allowed.append(self.eos_id)
                if not allowed:
                    allowed = [self.eos_id]
            mask = torch.full_like(scores[row], float("-inf"))
            mask[allowed] = 0.0
            scores[row] = scores[row] + mask
        return scores
