import json
import re
from typing import Any, List, Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys

# Data-Juicer 1.6.1's default patterns (behaviour, kept as data)
DEFAULT_SUCCESS_PATTERNS = [
    r"(?i)wrote\s+\d+\s*bytes",
    r"(?i)^(?:success|ok)(?:\s|$)",
    r"(?i)\bsuccessfully\b",
    r"(?i)^ok$",
]
DEFAULT_ERROR_PATTERNS = [
    r"(?i)\berror\s*:",
    r"(?i)\bexception\b",
    r"(?i)\bfailed\b",
    r"(?i)\bfailure\b",
    r"(?i)not\s+found",
    r"(?i)permission\s+denied",
    r"(?:执行|操作|请求|调用|接口)失败",
    r"(?:发生|出现)错误",
    r"错误码",
    r"无法访问",
    r"权限不足",
    r"无权限",
    r"找不到(?:文件|路径)?",
]
_PREVIEW_CHARS = 200
_DICT_CHARS = 10000


def tool_content_text(content: Any) -> str:
    """A tool message's content as one string: strings stripped, dicts as (at most 10000 chars of)
    JSON, content-block lists as their texts joined by newlines, None as ``""``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, dict):
        try:
            return json.dumps(content, ensure_ascii=False)[:_DICT_CHARS]
        except (TypeError, ValueError):
            return str(content).strip()
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block.strip())
            elif isinstance(block, dict):
                if block.get("type") == "text":
                    text = block.get("text")
                    parts.append(text.strip() if isinstance(text, str) else tool_content_text(text))
                else:
                    parts.append(tool_content_text(block))
        return "\n".join(parts).strip()
    return str(content).strip()


def _compile(patterns: List[str], param: str) -> List[re.Pattern]:
    out = []
    for p in patterns:
        try:
            out.append(re.compile(p))
        except (re.error, TypeError) as e:
            raise ValueError(f"tool_success_tagger_mapper: bad regular expression {p!r} in {param}: {e}") from e
    return out


@OPERATORS.register_module("tool_success_tagger_mapper")
class ToolSuccessTaggerMapper(Mapper):
    """Counts the successful and failed tool calls of an agent conversation into ``__dj__meta__``.

    Each message of ``messages_key`` whose lower-cased ``role`` is one of ``tool_role_names`` is a
    tool result. Its content is turned into text (strings stripped; dicts as JSON; lists of
    content blocks as their texts joined by newlines) and labelled: ``unknown`` when empty,
    ``error`` when an error pattern matches anywhere in it, else ``success`` (non-empty output
    without an error counts as success, so success patterns never change a label; they are
    checked for validity only, as in Data-Juicer). Meta gets ``tool_success_count``,
    ``tool_fail_count``, ``tool_unknown_count``, ``tool_success_ratio`` (successes / (successes +
    failures), None without either) and, with ``store_per_tool_results``, ``tool_results``: one
    ``{"content_preview": first 200 chars, "result": label}`` per tool message. Messages that are
    not dicts are ignored. Existing values of these meta keys are overwritten.
    """

    def __init__(self, messages_key: str = "messages", tool_role_names: Optional[List[str]] = None,
                 success_patterns: Optional[List[str]] = None, error_patterns: Optional[List[str]] = None,
                 store_per_tool_results: bool = True, **kwargs):
        """
        :param messages_key: field holding the list of OpenAI-style messages
        :param tool_role_names: roles of tool-result messages (None or empty: ``["tool", "tool_use"]``)
        :param success_patterns: regular expressions of success (None or empty: built-in English patterns)
        :param error_patterns: regular expressions of failure, searched anywhere in the content (None or
            empty: built-in English and Chinese patterns)
        :param store_per_tool_results: also store each tool message's preview and label in ``tool_results``
        """
        super().__init__(**kwargs)
        self.messages_key = messages_key
        self.tool_role_names = list(tool_role_names or ["tool", "tool_use"])
        self.success_patterns = list(success_patterns or DEFAULT_SUCCESS_PATTERNS)
        self.error_patterns = list(error_patterns or DEFAULT_ERROR_PATTERNS)
        self.store_per_tool_results = store_per_tool_results
        _compile(self.success_patterns, "success_patterns")
        self._errors = _compile(self.error_patterns, "error_patterns")

    def _label(self, text: str) -> str:
        if not text:
            return "unknown"
        return "error" if any(p.search(text) for p in self._errors) else "success"

    def process_batched(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        all_messages = samples.get(self.messages_key) or [None] * n
        metas = samples.get(Fields.meta) or [None] * n
        roles = frozenset(self.tool_role_names)
        new_metas = []
        for messages, meta in zip(all_messages, metas):
            meta = dict(meta) if meta else {}
            counts = {"success": 0, "error": 0, "unknown": 0}
            results = []
            for m in messages if isinstance(messages, list) else ():
                if not isinstance(m, dict) or str(m.get("role") or "").lower() not in roles:
                    continue
                text = tool_content_text(m.get("content"))
                label = self._label(text)
                counts[label] += 1
                results.append({"content_preview": text[:_PREVIEW_CHARS], "result": label})
            ok, failed = counts["success"], counts["error"]
            meta[MetaKeys.tool_success_count] = ok
            meta[MetaKeys.tool_fail_count] = failed
            meta[MetaKeys.tool_unknown_count] = counts["unknown"]
            meta[MetaKeys.tool_success_ratio] = ok / (ok + failed) if ok + failed else None
            if self.store_per_tool_results:
                meta[MetaKeys.tool_results] = results
            new_metas.append(meta)
        samples[Fields.meta] = new_metas
        return samples
