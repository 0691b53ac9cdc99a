import json
import logging
import re
from typing import Any, List, Optional

from pydantic import PositiveInt

from data_juicer.models.llm.base import LLMResponseError, parse_batch_with_retry
from data_juicer.models.llm.op_params import LLMOpMixin, chat_messages
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys

logger = logging.getLogger(__name__)

SYSTEM_PROMPT_ZH = (
    "你负责数据合规审查。下面是若干字段的截断文本，其中一部分可能已经做过脱敏。"
    "请只找出**仍然残留**的敏感信息，例如真实姓名、未脱敏的手机号或证件号片段、内网地址、密钥或令牌片段、"
    "可识别的工号、尚未脱敏的 URL/IPv4/MAC、JWT/PEM 等凭据片段。不要猜测或编造，拿不准的不要列出。"
    "只输出一个 JSON 对象，不要 markdown，不要解释，格式：\n"
    '{"suspected":[{"field":"字段名","category":"类别","evidence":"从输入原样摘录的短片段，不超过48个字符"}],'
    '"likely_clean":true或false}\n'
    "没有可疑内容时 suspected 为 []，likely_clean 为 true。"
)
SYSTEM_PROMPT_EN = (
    "You review data for compliance. Below are truncated excerpts of some fields, possibly already partly "
    "redacted. List **only** sensitive data that is still there: real names, phone or ID number fragments, "
    "intranet hosts, secret or token fragments, identifiable employee IDs, unredacted URLs/IPv4/MAC "
    "addresses, JWT/PEM/credential fragments and the like. Do not guess or invent; leave out what you are "
    "unsure of.\nReply with exactly one JSON object, no markdown, no explanation:\n"
    '{"suspected":[{"field":"field_key","category":"short_type","evidence":"verbatim snippet from the input, '
    'at most 48 chars"}],"likely_clean":true or false}\n'
    "When nothing is suspicious: suspected=[] and likely_clean=true."
)
USER_PREFIX = "The text below may already be partly redacted by rules. Reply with JSON only, as instructed.\n\n"

_DIGITS = re.compile(r"\d{6,}")
_SECRET = re.compile(r"(?i)(?<![a-z0-9_])(?:api[_-]?key|apikey|secret|token|password|passwd|credential|bearer)\b")
_INTRANET = re.compile(r"(?i)(?:内网|局域网|\bvpn\b|\bssh\s|rdp://|mysql://|redis://)")
_LONG_RUN = re.compile(r"[A-Za-z0-9_-]{24,}")
_NAME_CUE = re.compile(
    r"(?:(?:^|[\s，,。.!！?？;；:：])(?:我叫|叫我|更名为|姓名\s*[:：为是]?|真名\s*[:：为是]?|联系人\s*[:：为]?|"
    r"负责人\s*[:：为]?|经办人\s*[:：为]?|用户(?:姓名|名叫)\s*[:：为]?|致|尊敬的)\s*[\u4e00-\u9fff]{2,4}"
    r"|[\u4e00-\u9fff]{2,4}(?:先生|女士|老师|大夫|经理|主任|院长|博士|教授|同志)(?=[\s，,。.!！?？;；]|$)"
    r"|\b(?:Mr|Mrs|Ms|Miss|Dr|Prof)\.?\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?\b)")


def clip(text: str, max_chars: int, note: str) -> str:
    """``text`` cut to ``max_chars`` with a marker saying so."""
    if not text or max_chars <= 0 or len(text) <= max_chars:
        return text
    suffix = f"\n…[{note}]…"
    take = max_chars - len(suffix)
    return text[:take] + suffix if take > 0 else suffix.strip()


def heuristic_trigger(text: str) -> bool:
    """Cheap patterns that suggest residual PII (long digit runs, @, secret words, intranet, tokens)."""
    if not text or len(text.strip()) < 8:
        return False
    return bool(_DIGITS.search(text) or "@" in text or _SECRET.search(text) or _INTRANET.search(text)
                or _LONG_RUN.search(text))


def name_cue(text: str) -> bool:
    return bool(text) and len(text.strip()) >= 4 and _NAME_CUE.search(text) is not None


def extract_json_object(text: str) -> Optional[dict]:
    s = (text or "").strip()
    if s.startswith("```"):
        s = re.sub(r"\s*```\s*$", "", re.sub(r"^```(?:json)?\s*", "", s, flags=re.IGNORECASE))
    start, end = s.find("{"), s.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(s[start:end + 1])
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [(b.get("text") or b.get("content")) if isinstance(b, dict) else b for b in content]
        return "".join(p + "\n" for p in parts if isinstance(p, str))
    return ""


def messages_excerpt(messages: Any, max_messages: int, max_chars: int) -> str:
    """The last ``max_messages`` non-empty turns as ``[role]text`` lines (500 chars each), clipped."""
    if not isinstance(messages, list):
        return ""
    parts = []
    for msg in reversed(messages):
        if len(parts) >= max_messages:
            break
        if isinstance(msg, dict):
            chunk = _message_text(msg.get("content")).strip()
            if chunk:
                parts.append(f"[{msg.get('role') or ''}]{chunk[:500]}")
    return clip("\n".join(reversed(parts)), max_chars, "messages excerpt truncated")


def redact_substrings(text: str, snippets: List[str], placeholder: str) -> str:
    for s in sorted({(x or "").strip() for x in snippets}, key=len, reverse=True):
        if len(s) >= 2 and s in text:
            text = text.replace(s, placeholder)
    return text


@OPERATORS.register_module("pii_llm_suspect_mapper")
class PiiLlmSuspectMapper(LLMOpMixin, Mapper):
    """Asks an API LLM which personal or secret data is still left in a sample after rule-based
    redaction (run it after ``pii_redaction_mapper``), writes the findings to
    ``meta[result_key]`` and can redact them.

    The prompt shows each string field of ``inspect_keys`` (clipped to ``max_chars_per_field``)
    and an excerpt of the last ``max_messages_for_prompt`` turns of ``messages_key``. With
    ``gate_mode: heuristic`` the LLM is asked only when cheap cues fire (long digit runs, ``@``,
    secret words, intranet terms, long tokens; name cues with ``heuristic_name_rules``; a
    PERSON entity from the spaCy pipelines ``spacy_ner_models`` / ``spacy_ner_model``);
    otherwise the result says ``skipped``. The result holds ``suspected`` (field, category,
    evidence), ``likely_clean``, ``fields_inspected``, ``redaction_mode``, ``redaction_applied``.
    ``redaction_mode``: ``none``, ``evidence`` (replace each evidence snippet by
    ``redaction_placeholder``) or ``whole_field``. An answer without JSON is asked again up to
    ``try_num`` times (Data-Juicer retries only empty answers); then, as Data-Juicer, the result is
    ``{"error": "json_parse_failed"}`` with the raw answer in ``meta[raw_key]``. spaCy pipelines are
    never downloaded here (``spacy_auto_download`` is accepted, and a missing pipeline is skipped
    with a warning).
    """

    def __init__(
        self,
        api_model: str = "qwen-turbo",
        *,
        inspect_keys: Optional[List[str]] = None,
        messages_key: Optional[str] = "messages",
        max_messages_for_prompt: PositiveInt = 4,
        max_chars_per_field: PositiveInt = 6000,
        max_chars_messages_excerpt: PositiveInt = 8000,
        gate_mode: str = "heuristic",
        result_key: str = MetaKeys.pii_llm_suspect,
        raw_key: str = MetaKeys.pii_llm_suspect_raw,
        overwrite: bool = False,
        api_endpoint: Optional[str] = None,
        response_path: Optional[str] = None,
        system_prompt: Optional[str] = None,
        preferred_output_lang: str = "zh",
        try_num: PositiveInt = 2,
        model_params: Optional[dict] = None,
        sampling_params: Optional[dict] = None,
        text_key: str = "text",
        heuristic_name_rules: bool = True,
        spacy_ner_model: Optional[str] = None,
        spacy_ner_models: Optional[List[str]] = None,
        spacy_ner_max_chars: PositiveInt = 4000,
        spacy_auto_download: bool = True,
        redaction_mode: str = "none",
        redaction_placeholder: str = "[LLM_PII_SUSPECT_REDACTED]",
        **kwargs,
    ):
        """
        :param api_model: API model name
        :param inspect_keys: string fields shown to the model (default ``text``, ``query``, ``response``)
        :param messages_key: field of a chat message list to excerpt (None: none)
        :param max_messages_for_prompt: most turns in the excerpt
        :param max_chars_per_field: each field is clipped to this many characters
        :param max_chars_messages_excerpt: the excerpt is clipped to this many characters
        :param gate_mode: ``heuristic`` (ask only when cheap cues fire) or anything else (always ask)
        :param result_key: meta key of the findings
        :param raw_key: meta key of the raw answer when it did not parse
        :param overwrite: recompute when ``result_key`` is already in the meta
        :param api_endpoint: path under the base URL or full URL of the chat endpoint
        :param response_path: dotted path of the text in the API answer
        :param system_prompt: system prompt (default: by ``preferred_output_lang``)
        :param preferred_output_lang: ``zh`` or ``en`` default prompt
        :param try_num: attempts until the answer holds a JSON object
        :param model_params: API client options (``base_url``, ``api_key``, ``timeout``, ``concurrency``, ...)
        :param sampling_params: generation settings (default ``max_tokens`` 512, ``temperature`` 0.1)
        :param text_key: field of the text
        :param heuristic_name_rules: name cues (CJK titles, "我叫…", Mr./Dr. …) open the gate too
        :param spacy_ner_model: a spaCy pipeline whose PERSON entities open the gate
        :param spacy_ner_models: several spaCy pipelines (tried in order)
        :param spacy_ner_max_chars: characters of the text given to spaCy
        :param spacy_auto_download: accepted for compatibility; nothing is downloaded at run time
        :param redaction_mode: ``none``, ``evidence`` or ``whole_field``
        :param redaction_placeholder: what replaces redacted text
        """
        super().__init__(text_key=text_key, **kwargs)
        self.inspect_keys = list(inspect_keys or ["text", "query", "response"])
        self.messages_key = messages_key
        self.max_messages_for_prompt = max_messages_for_prompt
        self.max_chars_per_field = max_chars_per_field
        self.max_chars_messages_excerpt = max_chars_messages_excerpt
        self.gate_mode = gate_mode
        self.result_key = result_key
        self.raw_key = raw_key
        self.overwrite = overwrite
        lang = "zh" if str(preferred_output_lang or "").strip().lower().startswith("zh") else "en"
        self.preferred_output_lang = lang
        self.system_prompt = system_prompt or (SYSTEM_PROMPT_ZH if lang == "zh" else SYSTEM_PROMPT_EN)
        self.heuristic_name_rules = heuristic_name_rules
        names = [str(x).strip() for x in (spacy_ner_models or []) if str(x).strip()]
        if spacy_ner_model and spacy_ner_model.strip() not in names:
            names.append(spacy_ner_model.strip())
        self.spacy_ner_model_names = list(dict.fromkeys(names))
        self.spacy_ner_max_chars = spacy_ner_max_chars
        self.spacy_auto_download = spacy_auto_download
        mode = (redaction_mode or "none").strip().lower()
        if mode not in ("none", "evidence", "whole_field"):
            raise ValueError(f"{self.name}: redaction_mode {redaction_mode!r} is not one of none, evidence, "
                             f"whole_field")
        self.redaction_mode = mode
        self.redaction_placeholder = str(redaction_placeholder or "[LLM_PII_SUSPECT_REDACTED]")
        self._spacy = {}
        self.init_llm(model=api_model, kind="api", api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num,
                      default_sampling={"max_tokens": 512, "temperature": 0.1})

    def __getstate__(self):
        d = super().__getstate__()
        d["_spacy"] = {}
        return d

    # -- gate ------------------------------------------------------------------------------
    def _nlp(self, name: str):
        if name not in self._spacy:
            try:
                import spacy

                self._spacy[name] = spacy.load(name)
            except (ImportError, OSError) as e:
                logger.warning(f"{self.name}: spaCy pipeline {name!r} is not available ({e}); install it with "
                               f"`python -m spacy download {name}` (nothing is downloaded at run time)")
                self._spacy[name] = None
        return self._spacy[name]

    def _spacy_person(self, text: str) -> bool:
        snippet = (text or "")[: self.spacy_ner_max_chars]
        for name in self.spacy_ner_model_names if len(snippet.strip()) >= 2 else ():
            nlp = self._nlp(name)
            if nlp is not None and any(e.label_ in ("PERSON", "PER") for e in nlp(snippet).ents):
                return True
        return False

    def gate_open(self, block: str) -> bool:
        return heuristic_trigger(block) or (self.heuristic_name_rules and name_cue(block)) or self._spacy_person(block)

    # -- prompt and result -----------------------------------------------------------------
    def user_block(self, row: dict) -> tuple:
        lines, used = [], []
        for k in self.inspect_keys:
            v = row.get(k)
            if isinstance(v, str) and v.strip():
                lines.append(f"### field:{k}\n{clip(v, self.max_chars_per_field, f'{k} truncated')}")
                used.append(k)
        if self.messages_key and self.messages_key in row:
            ex = messages_excerpt(row[self.messages_key], self.max_messages_for_prompt,
                                  self.max_chars_messages_excerpt)
            if ex.strip():
                lines.append(f"### field:{self.messages_key}_excerpt\n{ex}")
                used.append(f"{self.messages_key}_excerpt")
        return "\n\n".join(lines), used

    def _field_of(self, field: str) -> Optional[str]:
        f = (field or "").strip()
        if f in self.inspect_keys:
            return f
        if self.messages_key and f == f"{self.messages_key}_excerpt":
            return self.messages_key
        return None

    def redact(self, row: dict, found: list) -> None:
        if self.redaction_mode == "none":
            return
        ph = self.redaction_placeholder
        by_field: dict = {}
        for item in found:
            f = self._field_of(item["field"])
            if f is not None:
                by_field.setdefault(f, []).append(item["evidence"].strip())
        for f, snippets in by_field.items():
            value = row.get(f)
            if f == self.messages_key and isinstance(value, list):
                if self.redaction_mode == "whole_field":
                    row[f] = [{"role": "user", "content": ph}]
                else:
                    row[f] = [self._redact_msg(m, snippets) for m in value]
            elif isinstance(value, str):
                row[f] = ph if self.redaction_mode == "whole_field" else redact_substrings(value, snippets, ph)

    def _redact_msg(self, msg, snippets):
        if not isinstance(msg, dict):
            return msg
        msg = dict(msg)
        c = msg.get("content")
        ph = self.redaction_placeholder
        if isinstance(c, str):
            msg["content"] = redact_substrings(c, snippets, ph)
        elif isinstance(c, list):
            msg["content"] = [
                {k: redact_substrings(v, snippets, ph) if k in ("text", "content") and isinstance(v, str) else v
                 for k, v in b.items()} if isinstance(b, dict)
                else (redact_substrings(b, snippets, ph) if isinstance(b, str) else b) for b in c]
        return msg

    @staticmethod
    def _parse(raw: str):
        obj = extract_json_object(raw)
        return None if obj is None else (raw, obj)

    def process_batched(self, samples: dict[str, list]) -> dict[str, list]:
        keys = list(samples)
        n = len(samples[keys[0]]) if keys else 0
        rows = [{k: samples[k][i] for k in keys} for i in range(n)]
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        todo, msgs, used_by = [], [], {}
        for i, row in enumerate(rows):
            if not self.overwrite and self.result_key in metas[i]:
                continue
            block, used = self.user_block(row)
            if not block.strip():
                metas[i][self.result_key] = {"skipped": True, "reason": "no_inspectable_text", "fields_inspected": []}
            elif self.gate_mode == "heuristic" and not self.gate_open(block):
                metas[i][self.result_key] = {"skipped": True, "reason": "heuristic_gate", "fields_inspected": used,
                                             "likely_clean": True}
            else:
                todo.append(i)
                used_by[i] = used
                msgs.append(chat_messages(USER_PREFIX + block, self.system_prompt))
        if todo:
            results = parse_batch_with_retry(self.llm, msgs, self._parse, self.try_num, return_exceptions=True)
            for i, res in zip(todo, results):
                if isinstance(res, LLMResponseError):
                    if res.raw.strip():
                        metas[i][self.raw_key] = res.raw[:8000]
                        metas[i][self.result_key] = {"error": "json_parse_failed", "fields_inspected": used_by[i]}
                    else:
                        metas[i][self.result_key] = {"error": "empty_llm_response", "fields_inspected": used_by[i]}
                    continue
                if isinstance(res, BaseException):
                    raise res
                _, parsed = res
                suspected = parsed.get("suspected") if isinstance(parsed.get("suspected"), list) else []
                found = [{"field": str(x.get("field", ""))[:64], "category": str(x.get("category", ""))[:120],
                          "evidence": str(x.get("evidence", ""))[:80]} for x in suspected[:32] if isinstance(x, dict)]
                metas[i][self.result_key] = {
                    "suspected": found, "likely_clean": bool(parsed.get("likely_clean", not found)),
                    "fields_inspected": used_by[i], "redaction_mode": self.redaction_mode,
                    "redaction_applied": self.redaction_mode != "none"}
                self.redact(rows[i], found)
        for k in keys:
            samples[k] = [r[k] for r in rows]
        samples[Fields.meta] = metas
        return samples
