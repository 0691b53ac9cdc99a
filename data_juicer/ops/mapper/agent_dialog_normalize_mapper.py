import re
from typing import Any, List

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys

_REASONING_TYPES = ("thinking", "reasoning")
_TRUNCATED = "\n…[truncated — agent_dialog_normalize_mapper]…"
_OMITTED = "\n\n[··· {} chars omitted from middle; head+tail preserved — agent_dialog_normalize_mapper]\n\n"
_MARKER_RESERVE = 128
_MAX_CALL_NAMES = 10
# skill names: a ``<name>/SKILL.md`` path segment, an English ``## name`` header line, a
# ``Check "...<name>/SKILL.md`` hint (Data-Juicer 1.6.1's patterns, tried in this order)
_SKILL_PATTERNS = (
    re.compile(r"[/\\]([a-zA-Z][a-zA-Z0-9_]*)[/\\]SKILL\.md", re.IGNORECASE),
    re.compile(r"##\s+([a-zA-Z][a-zA-Z0-9_]*(?:\.[a-zA-Z0-9_]+)?)\s*(?:\n|$)"),
    re.compile(r"Check\s+[\"'].*?([a-zA-Z][a-zA-Z0-9_]*)/SKILL\.md", re.IGNORECASE),
)


def _fragment_text(val: Any) -> str:
    """Flat text of a block's text field: strings stripped, dicts by their first non-empty
    ``value``/``text``/``content``, lists joined by newlines."""
    if val is None:
        return ""
    if isinstance(val, str):
        return val.strip()
    if isinstance(val, dict):
        for key in ("value", "text", "content"):
            if key in val and val[key] is not None and not (isinstance(val[key], str) and val[key] == ""):
                return _fragment_text(val[key])
        return ""
    if isinstance(val, list):
        parts = (_fragment_text(x) for x in val if x is not None and not (isinstance(x, str) and x == ""))
        return "\n".join(parts).strip()
    return str(val).strip()


def message_text(content: Any) -> str:
    """Plain text of a message's content: a string, a dict, or a list of strings and blocks
    (``text`` / ``input_text`` / any block with ``text``, and thinking/reasoning blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, dict):
        return _fragment_text(content)
    if not isinstance(content, list):
        return str(content).strip()
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block.strip())
        elif isinstance(block, dict):
            kind = block.get("type")
            if kind == "text" or kind == "input_text" or (kind not in _REASONING_TYPES and "text" in block):
                parts.append(_fragment_text(block.get("text")))
            elif kind in _REASONING_TYPES or "thinking" in block or "reasoning_content" in block:
                parts.append(_fragment_text(block.get("thinking") or block.get("reasoning")
                                            or block.get("reasoning_content")))
    return "\n".join(p for p in parts if p).strip()


def _call_name(call: Any):
    """Tool name of one tool-call item (``function.name`` / ``function_call.name`` / ``name``)."""
    if not isinstance(call, dict):
        return None
    fn = call.get("function") or call.get("function_call")
    if isinstance(fn, dict) and fn.get("name"):
        return fn["name"]
    return call.get("name") or None


def _tool_calls(message: dict):
    return message.get("tool_calls") or message.get("tool_use") or []


def _unique(names) -> list:
    seen: dict = {}
    for n in names:
        if n and n not in seen:
            seen[n] = None
    return list(seen)


def _calls_summary(calls: Any) -> str:
    if not calls or not isinstance(calls, list):
        return ""
    names = _unique(map(_call_name, calls))
    if not names:
        return ""
    shown = names[:_MAX_CALL_NAMES]
    if len(names) > _MAX_CALL_NAMES:
        shown.append(f"...+{len(names) - _MAX_CALL_NAMES}")
    return "[Tool calls: " + ", ".join(shown) + "]"


def _meta_str_list(values: list) -> list[str]:
    # never an empty list: Arrow would type it list<null> and clash with other rows
    out = [s for s in (str(v).strip() for v in values if v is not None) if s]
    return out or [""]


def compress_head_tail(text: str, max_chars: int, head_ratio: float) -> str:
    """``text`` cut to about ``max_chars``: its head and tail around a marker saying how much of
    the middle was left out (a plain truncation marker when ``max_chars`` is small)."""
    if max_chars <= 0 or not text or len(text) <= max_chars:
        return text
    head_ratio = min(0.85, max(0.35, float(head_ratio)))
    budget = max_chars - _MARKER_RESERVE
    if budget < 400:
        return text[:max(0, max_chars - 48)] + _TRUNCATED
    head = max(200, int(budget * head_ratio))
    tail = budget - head
    if tail < 200:
        tail, head = 200, max(200, budget - 200)
    omitted = len(text) - head - tail
    if omitted <= 0:
        return text
    marker = _OMITTED.format(omitted)
    over = head + len(marker) + tail - max_chars
    if over > 0:
        head = max(120, head - over)
    return text[:head] + marker + text[-tail:]


@OPERATORS.register_module("agent_dialog_normalize_mapper")
class AgentDialogNormalizeMapper(Mapper):
    """Turns an agent trace (OpenAI-style ``messages`` plus ``choices``) into dialog fields.

    The user and assistant messages become ``history_key``: one ``[query, response]`` pair per
    user message. Consecutive assistant messages of a turn are joined by a blank line (an
    assistant message without text shows as ``[Tool calls: name, ...]``), tool results are
    appended to the turn's response after ``[Tool result]``; other roles are skipped, and
    system messages are prepended to the next user message with
    ``include_system_in_first_user``. Message content may be a string, a dict or a list of
    content blocks (text, input_text, thinking/reasoning). ``text_key`` gets the history
    flattened as ``<user_label>: q`` / ``<assistant_label>: r`` paragraphs, ``query_key`` and
    ``response_key`` the last pair (the response falls back to the first non-empty choice).

    Long parts can be capped, keeping head and tail around a marker: each tool result
    (``history_tool_result_max_chars``), each user message (``history_max_user_chars``) and a
    turn's whole response (``history_max_assistant_trace_chars``); 0 means no cap.

    ``__dj__meta__`` gets ``agent_dialog_history_compressed`` (a cap fired), ``agent_turn_count``,
    ``agent_tool_types`` / ``agent_skill_types`` (unique tool-call names; skill names from
    ``<name>/SKILL.md`` paths and ``## name`` headers; ``[""]`` when none),
    ``agent_last_user_msg_idx`` / ``agent_last_assistant_msg_idx`` (positions in ``messages``),
    ``agent_request_id`` (first non-empty of ``request_id_keys``) and the lineage fields
    ``agent_request_model`` / ``agent_pt`` / ``agent_total_cost_time_ms`` copied from
    ``request_model`` / ``pt`` / ``total_cost_time``. Messages that are not dicts are skipped.
    """

    def __init__(self, messages_key: str = "messages", choices_key: str = "choices", text_key: str = "text",
                 history_key: str = "dialog_history", query_key: str = "query", response_key: str = "response",
                 extract_tool_skill_tags: bool = True, include_system_in_first_user: bool = False,
                 user_label: str = "User", assistant_label: str = "Assistant", copy_lineage_fields: bool = True,
                 copy_request_id: bool = True, request_id_keys: List[str] = ["request_id", "trace_id", "id"],
                 history_tool_result_max_chars: int = 10000, history_max_assistant_trace_chars: int = 0,
                 history_max_user_chars: int = 0, history_compress_head_ratio: float = 0.62, **kwargs):
        """
        :param messages_key: field holding the OpenAI-style list of messages
        :param choices_key: field holding the model's choices (fallback for the last response)
        :param text_key: field receiving the flattened dialog text
        :param history_key: field receiving the ``[query, response]`` pairs
        :param query_key: field receiving the last query
        :param response_key: field receiving the last response
        :param extract_tool_skill_tags: write ``agent_tool_types`` and ``agent_skill_types`` into meta
        :param include_system_in_first_user: prepend system messages to the next user message
        :param user_label: label of user lines in the flattened text
        :param assistant_label: label of assistant lines in the flattened text
        :param copy_lineage_fields: copy ``request_model``, ``pt`` and ``total_cost_time`` into meta
        :param copy_request_id: copy the first non-empty of ``request_id_keys`` into ``agent_request_id``
        :param request_id_keys: fields tried, in order, for the request id
        :param history_tool_result_max_chars: cap on each tool result's characters (0: no cap)
        :param history_max_assistant_trace_chars: cap on a turn's whole response (0: no cap)
        :param history_max_user_chars: cap on each user message (0: no cap)
        :param history_compress_head_ratio: share of a capped text kept from its head (clamped to 0.35-0.85)
        """
        super().__init__(text_key=text_key, history_key=history_key, query_key=query_key,
                         response_key=response_key, **kwargs)
        self.messages_key = messages_key
        self.choices_key = choices_key
        self.extract_tool_skill_tags = extract_tool_skill_tags
        self.include_system_in_first_user = include_system_in_first_user
        self.user_label = user_label
        self.assistant_label = assistant_label
        self.copy_lineage_fields = copy_lineage_fields
        self.copy_request_id = copy_request_id
        self.request_id_keys = list(request_id_keys)
        self.history_tool_result_max_chars = history_tool_result_max_chars
        self.history_max_assistant_trace_chars = history_max_assistant_trace_chars
        self.history_max_user_chars = history_max_user_chars
        self.history_compress_head_ratio = history_compress_head_ratio

    def _history(self, messages: list, texts: list[str]) -> tuple[list[list[str]], bool]:
        compressed = False
        ratio = self.history_compress_head_ratio

        def cap(text: str, limit: int) -> str:
            nonlocal compressed
            if limit <= 0 or not text or len(text) <= limit:
                return text
            compressed = True
            return compress_head_tail(text, limit, ratio)

        trace_cap = self.history_max_assistant_trace_chars
        history: list[list[str]] = []
        system: list[str] = []
        for m, content in zip(messages, texts):
            role = str(m.get("role") or "").lower()
            if role == "system":
                if self.include_system_in_first_user and content:
                    system.append(content)
            elif role == "user":
                if system:
                    content = "\n\n".join(system + [content]).strip()
                    system = []
                history.append([cap(content, self.history_max_user_chars), ""])
            elif role == "assistant":
                if not content:
                    content = _calls_summary(_tool_calls(m))
                if not history:
                    history.append(["", cap(content, trace_cap)])
                else:
                    prev = history[-1][1]
                    joined = prev + "\n\n" + content if prev and content else content or prev
                    history[-1][1] = cap(joined, trace_cap)
            elif role == "tool":
                # capped even when dropped (no turn yet): the compressed flag counts it, as in Data-Juicer
                body = cap(content, self.history_tool_result_max_chars)
                if not history:
                    continue
                prev = history[-1][1]
                history[-1][1] = cap(prev + "\n[Tool result]\n" + body if prev else "[Tool result]\n" + body,
                                     trace_cap)
        return history, compressed

    def _choices_text(self, choices: Any) -> str:
        if not choices or not isinstance(choices, list):
            return ""
        for c in choices:
            if not isinstance(c, dict):
                continue
            msg = c.get("message") or c.get("delta") or c
            text = msg.get("content") if isinstance(msg, dict) else None
            if isinstance(text, str) and text.strip():
                return text.strip()
            if isinstance(text, list):
                flat = message_text(text)
                if flat:
                    return flat
        return ""

    def _flatten(self, history: list[list[str]]) -> str:
        lines = []
        for q, r in history:
            if q:
                lines.append(f"{self.user_label}: {q}")
            if r:
                lines.append(f"{self.assistant_label}: {r}")
        return "\n\n".join(lines)

    def process_batched(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        column = samples.get(self.messages_key) or [None] * n
        all_choices = samples.get(self.choices_key) or [None] * n
        metas = samples.get(Fields.meta) or [None] * n
        id_columns = [samples[k] for k in self.request_id_keys if k in samples] if self.copy_request_id else []
        lineage = [(MetaKeys.agent_request_model, "request_model"), (MetaKeys.agent_pt, "pt"),
                   (MetaKeys.agent_total_cost_time_ms, "total_cost_time")] if self.copy_lineage_fields else []
        lineage = [(meta_key, samples[key]) for meta_key, key in lineage if key in samples]
        texts_out, histories, queries, responses, new_metas = [], [], [], [], []
        for i in range(n):
            raw = column[i] if isinstance(column[i], list) else []
            indexed = [(j, m) for j, m in enumerate(raw) if isinstance(m, dict)]
            messages = [m for _, m in indexed]
            texts = [message_text(m.get("content")) for m in messages]
            history, compressed = self._history(messages, texts)
            query, response = history[-1] if history else ("", "")
            if not response and all_choices[i]:
                response = self._choices_text(all_choices[i])
            texts_out.append(self._flatten(history))
            histories.append(history)
            queries.append(query)
            responses.append(response)

            meta = dict(metas[i]) if metas[i] else {}
            meta[MetaKeys.agent_dialog_history_compressed] = compressed
            meta[MetaKeys.agent_turn_count] = len(history)
            if self.extract_tool_skill_tags:
                meta[MetaKeys.agent_tool_types] = _meta_str_list(
                    _unique(_call_name(c) for m in messages for c in _tool_calls(m)))
                meta[MetaKeys.agent_skill_types] = _meta_str_list(_unique(
                    match.group(1).strip() for t in texts for p in _SKILL_PATTERNS for match in p.finditer(t)))
            last = {}
            for j, m in indexed:
                role = str(m.get("role") or "").lower()
                if role in ("user", "assistant"):
                    last[role] = j
            if "user" in last:
                meta[MetaKeys.agent_last_user_msg_idx] = last["user"]
            if "assistant" in last:
                meta[MetaKeys.agent_last_assistant_msg_idx] = last["assistant"]
            for col in id_columns:
                value = col[i]
                if value is not None and str(value).strip():
                    meta[MetaKeys.agent_request_id] = str(value).strip()
                    break
            for meta_key, col in lineage:
                if col[i] is not None:
                    meta[meta_key] = col[i]
            new_metas.append(meta)
        samples[self.text_key] = texts_out
        samples[self.history_key] = histories
        samples[self.query_key] = queries
        samples[self.response_key] = responses
        samples[Fields.meta] = new_metas
        return samples
