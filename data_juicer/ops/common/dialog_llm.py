"""Shared prompt building and parsing of the dialog / agent LLM mappers.

Two families, one base each:

* :class:`DialogScoreLLMMapper` - one call per sample, a JSON ``{"score": 1-5, "reason": ...}``
  answer written to ``meta[META_KEY]`` as ``{"score", "reason", "eval_kind"}``
  (``dialog_*_quality``-style judges, ``agent_tool_relevance_mapper``, ``agent_trace_coherence_mapper``).
* :class:`DialogTurnLLMMapper` - one call per user turn (each prompt carries the earlier turns
  with their analyses), a line-prefixed answer parsed by regexes
  (``dialog_{intent,topic,sentiment}_detection_mapper``, ``dialog_sentiment_intensity_mapper``).

Requests of a whole batch go out together (the backend sends them concurrently / batches them
into the engine); turn ``t`` of every sample of the batch is one round. A response that never
parses within ``try_num`` attempts raises :class:`~data_juicer.models.llm.LLMResponseError`
carrying the raw text, so that sample goes to the error ledger (Data-Juicer instead writes an
empty or ``{"error": ...}`` value into the meta and goes on).
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.base import Mapper
from data_juicer.utils.constant import Fields, MetaKeys

# -- language --------------------------------------------------------------------------------


def normalize_lang(value: Optional[str]) -> str:
    """``zh`` for any Chinese locale (``zh``, ``zh-CN``, ``zh_TW``), else ``en``."""
    s = str(value or "").strip().lower()
    return "zh" if s.startswith("zh") else "en"


SCORE_JSON_INSTRUCTION = {
    "en": ("Answer with a single JSON object and nothing else (no markdown):\n"
           '{"score": <an integer from 1 to 5>, "reason": "<a short justification>"}\n'
           "A higher score means the reply does better on this criterion."),
    "zh": ("只回答一个 JSON 对象，不要 markdown，也不要其他内容：\n"
           '{"score": <1 到 5 的整数>, "reason": "<简短的理由>"}\n'
           "分数越高，表示回复在这一维度上越好。"),
}
REASON_LANGUAGE = {
    "en": "Write the `reason` in brief English, whatever the language of the dialog.",
    "zh": "评分标准可能是英文，请照此评分；`reason` 字段请用简洁的简体中文书写。",
}


# -- dialog turns ----------------------------------------------------------------------------


def dialog_turns(sample: dict, history_key: str, query_key: str, response_key: str) -> list[tuple[str, str]]:
    """``(user, assistant)`` turns: the ``history_key`` pairs, then ``query``/``response`` as the last
    turn unless it is already the last history pair (as after ``agent_dialog_normalize_mapper``);
    a last pair with the same query gets the new response. ``sample`` is not changed."""
    turns: list[tuple[str, str]] = []
    hist = sample.get(history_key)
    if isinstance(hist, (list, tuple)):
        for t in hist:
            if isinstance(t, (list, tuple)) and len(t) >= 2:
                turns.append(("" if t[0] is None else str(t[0]), "" if t[1] is None else str(t[1])))
    q = sample.get(query_key)
    if q:
        r = sample.get(response_key)
        qs, rs = str(q), "" if r is None else str(r)
        if turns and turns[-1][0] == qs:
            turns[-1] = (qs, rs)
        else:
            turns.append((qs, rs))
    return turns


def clip(text: Any, max_chars: int, note: str = "truncated") -> str:
    """``text`` cut to ``max_chars`` characters (a marker included) when ``max_chars`` > 0."""
    s = "" if text is None else str(text)
    if not max_chars or max_chars <= 0 or len(s) <= max_chars:
        return s
    mark = f"\n…[{note}]…"
    keep = max_chars - len(mark)
    return mark.strip() if keep <= 0 else s[:keep] + mark


def extract_json_object(text: str) -> Optional[dict]:
    """The outermost ``{...}`` of ``text`` (code fences allowed) as a dict, else None."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    if s.startswith("```"):
        s = re.sub(r"^```(?:json)?\s*", "", s, flags=re.IGNORECASE)
        s = re.sub(r"\s*```\s*$", "", s)
    a, b = s.find("{"), s.rfind("}")
    if a < 0 or b <= a:
        return None
    try:
        obj = json.loads(s[a:b + 1])
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def parse_score_reason(text: str) -> Optional[dict]:
    """``{"score": float in [1, 5], "reason": str}`` from a JSON answer; None when there is no
    object or its ``score`` is not a number (then the request is sent again)."""
    obj = extract_json_object(text)
    if obj is None:
        return None
    try:
        score = float(obj.get("score"))
    except (TypeError, ValueError):
        return None
    if score != score:  # NaN
        return None
    return {"score": max(1.0, min(5.0, score)), "reason": str(obj.get("reason") or "")[:2000]}


def meta_list(samples: dict, n: int) -> list[dict]:
    """The batch's ``__dj__meta__`` column as fresh dicts (a missing column or value is ``{}``)."""
    metas = samples.get(Fields.meta) or [None] * n
    return [dict(m) if isinstance(m, dict) else {} for m in metas]


def batch_len(samples: dict) -> int:
    return len(next(iter(samples.values()))) if samples else 0


# -- 1-5 score judges ------------------------------------------------------------------------


class DialogScoreLLMMapper(LLMOpMixin, Mapper):
    """Base of the 1-5 judges: one request per sample, ``meta[META_KEY] = {score, reason, eval_kind}``.

    A sample whose prompt would be empty gets ``{"skipped": True, "reason": "empty_input"}``; a
    sample that already has the key is left alone unless ``overwrite``.
    """

    META_KEY: str = ""
    EVAL_KIND: str = "dialog_turn"
    RUBRIC: str = ""

    def __init__(self, api_model: str = "qwen-turbo", *, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, history_key: str = "dialog_history", query_key: str = "query",
                 response_key: str = "response", text_key: str = "text", max_round: int = 8,
                 max_query_chars_for_prompt: int = 6000, max_response_chars_for_prompt: int = 8000,
                 trajectory_text_max_chars: int = 12000, tool_types_key: str = MetaKeys.agent_tool_types,
                 primary_tool_key: str = MetaKeys.primary_tool_type, try_num: int = 2, overwrite: bool = False,
                 model_params: Optional[dict] = None, sampling_params: Optional[dict] = None,
                 preferred_output_lang: str = "en", **kwargs):
        """
        :param api_model: model name at the API endpoint
        :param api_endpoint: the endpoint URL (or a path under ``$OPENAI_BASE_URL``)
        :param response_path: dotted path of the text in the JSON answer (default
            ``choices.0.message.content``)
        :param history_key: field of the earlier ``[user, assistant]`` turns
        :param query_key: field of the last user message
        :param response_key: field of the reply to judge
        :param text_key: field of the flattened session text (trace judges)
        :param max_round: most recent turns put in the prompt (0: all)
        :param max_query_chars_for_prompt: cut each user message to this many characters (0: no cut)
        :param max_response_chars_for_prompt: cut each assistant message to this many characters (0: no cut)
        :param trajectory_text_max_chars: cut the session text to this many characters (0: no cut)
        :param tool_types_key: meta key of the tools the sample used
        :param primary_tool_key: meta key of the sample's main tool
        :param try_num: requests per sample until the answer parses; then the sample goes to the
            error ledger with the raw answer
        :param overwrite: judge again a sample that already has the meta key
        :param model_params: client options (``base_url``, ``api_key``, ``timeout``, ``concurrency``, ...)
        :param sampling_params: generation settings (default ``max_tokens`` 384, ``temperature`` 0.2)
        :param preferred_output_lang: language of the ``reason`` (``en`` or ``zh``)
        """
        super().__init__(history_key=history_key, query_key=query_key, response_key=response_key,
                         text_key=text_key, **kwargs)
        self.max_round = int(max_round)
        self.max_query_chars_for_prompt = int(max_query_chars_for_prompt)
        self.max_response_chars_for_prompt = int(max_response_chars_for_prompt)
        self.trajectory_text_max_chars = int(trajectory_text_max_chars)
        self.tool_types_key = tool_types_key
        self.primary_tool_key = primary_tool_key
        self.overwrite = bool(overwrite)
        self.preferred_output_lang = normalize_lang(preferred_output_lang)
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num,
                      default_sampling={"max_tokens": 384, "temperature": 0.2})

    def system_prompt(self) -> str:
        lang = self.preferred_output_lang
        return f"{self.RUBRIC}\n\n{SCORE_JSON_INSTRUCTION[lang]}\n\n{REASON_LANGUAGE[lang]}"

    def user_content(self, sample: dict) -> str:
        """The final turn to judge after its earlier turns (the dialog judges' prompt)."""
        turns = dialog_turns(sample, self.history_key, self.query_key, self.response_key)
        if self.max_round > 0:
            turns = turns[-self.max_round:]
        if not turns:
            return ""
        qmax, rmax = self.max_query_chars_for_prompt, self.max_response_chars_for_prompt
        earlier = "".join(f"[User]\n{clip(u, qmax, 'query truncated')}\n"
                          f"[Assistant]\n{clip(a, rmax, 'response truncated')}\n" for u, a in turns[:-1])
        last_u, last_a = turns[-1]
        return (f"### Earlier turns\n{earlier}"
                f"### Current user message\n{clip(last_u, qmax, 'query truncated')}\n"
                f"### Assistant reply to score (judge only this part)\n{clip(last_a, rmax, 'response truncated')}\n")

    def process_batched(self, samples: dict) -> dict:
        n = batch_len(samples)
        metas = meta_list(samples, n)
        rows = [{k: samples[k][i] for k in samples} for i in range(n)]
        todo, msgs = [], []
        system = self.system_prompt()
        for i, (row, meta) in enumerate(zip(rows, metas)):
            if self.META_KEY in meta and not self.overwrite:
                continue
            user = self.user_content(row)
            if not user.strip():
                meta[self.META_KEY] = {"skipped": True, "reason": "empty_input"}
                continue
            todo.append(i)
            msgs.append([{"role": "system", "content": system}, {"role": "user", "content": user}])
        if msgs:
            for i, res in zip(todo, self.llm_parse(msgs, parse_score_reason)):
                metas[i][self.META_KEY] = dict(res, eval_kind=self.EVAL_KIND)
        samples[Fields.meta] = metas
        return samples


# -- per-turn labelling (intent / topic / sentiment / intensity) -----------------------------


class DialogTurnLLMMapper(LLMOpMixin, Mapper):
    """Base of the per-turn dialog labellers.

    For each user turn the prompt is the optional candidate line, the last ``max_round`` earlier
    turns (query, the analysis and value found for it, response) and the current query; the
    answer's ``analysis_pattern`` and value pattern give that turn's analysis and value. An
    answer is accepted when its analysis is not empty (as Data-Juicer).
    """

    MODE: str = ""  # intent | topic | sentiment | intensity (the language note)
    VALUE_NAME: str = ""  # what the value pattern gives, for error messages
    DEFAULT_SYSTEM_PROMPT: str = ""
    DEFAULT_QUERY_TEMPLATE = "用户：{query}\n"
    DEFAULT_RESPONSE_TEMPLATE = "LLM：{response}\n"
    DEFAULT_ANALYSIS_TEMPLATE: str = ""
    DEFAULT_ANALYSIS_PATTERN: str = ""
    LANG_NOTE: dict = {}

    def __init__(self, api_model: str = "gpt-4o", max_round: int = 10, *, analysis_key: str = "",
                 api_endpoint: Optional[str] = None, response_path: Optional[str] = None,
                 system_prompt: Optional[str] = None, query_template: Optional[str] = None,
                 response_template: Optional[str] = None, analysis_template: Optional[str] = None,
                 analysis_pattern: Optional[str] = None, try_num: int = 3, max_query_chars_for_prompt: int = 0,
                 max_response_chars_for_prompt: int = 0, model_params: dict = {},  # noqa: B006 (DJ's default)
                 sampling_params: dict = {}, preferred_output_lang: str = "zh", **kwargs):  # noqa: B006
        super().__init__(**kwargs)
        self.max_round = int(max_round)
        self.analysis_key = analysis_key
        self.system_prompt = system_prompt or self.DEFAULT_SYSTEM_PROMPT
        self.query_template = query_template or self.DEFAULT_QUERY_TEMPLATE
        self.response_template = response_template or self.DEFAULT_RESPONSE_TEMPLATE
        self.analysis_template = analysis_template or self.DEFAULT_ANALYSIS_TEMPLATE
        self.analysis_pattern = analysis_pattern or self.DEFAULT_ANALYSIS_PATTERN
        self.max_query_chars_for_prompt = int(max_query_chars_for_prompt)
        self.max_response_chars_for_prompt = int(max_response_chars_for_prompt)
        self.preferred_output_lang = normalize_lang(preferred_output_lang)
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    # what a labeller defines ------------------------------------------------------------
    value_key: str = ""
    value_template: str = ""
    value_pattern: str = ""

    def candidates_line(self) -> str:
        return ""

    def value_from(self, match: Optional[re.Match]):
        return match.group(1) if match else ""

    def finish(self, meta: dict, analyses: list, values: list) -> None:
        meta[self.value_key] = list(dict.fromkeys(values))
        meta[self.analysis_key] = analyses

    # shared --------------------------------------------------------------------------------
    def system_text(self) -> str:
        return self.system_prompt + self.LANG_NOTE.get(self.preferred_output_lang, "")

    def parse(self, text: str):
        """``(analysis, value)``, or None when there is no analysis (the request is sent again)."""
        if not isinstance(text, str):
            return None
        m = re.search(self.analysis_pattern, text)
        analysis = m.group(1) if m else ""
        if not analysis:
            return None
        return analysis, self.value_from(re.search(self.value_pattern, text))

    def build_input(self, history: list[str], query: str) -> str:
        prompt = self.candidates_line()
        if self.max_round > 0:
            prompt += "".join(history[-self.max_round * 4:])
        return prompt + self.query_template.format(query=query)

    def process_batched(self, samples: dict) -> dict:
        n = batch_len(samples)
        metas = meta_list(samples, n)
        todo = [i for i in range(n) if not (self.value_key in metas[i] and self.analysis_key in metas[i])]
        dialogs = {}
        for i in todo:
            row = {k: samples[k][i] for k in samples}
            dialogs[i] = [(clip(q, self.max_query_chars_for_prompt, "query truncated"),
                           clip(r, self.max_response_chars_for_prompt, "response truncated"))
                          for q, r in dialog_turns(row, self.history_key, self.query_key, self.response_key)]
        history = {i: [] for i in todo}
        found = {i: ([], []) for i in todo}
        system = self.system_text()
        rounds = max((len(d) for d in dialogs.values()), default=0)
        for t in range(rounds):  # turn t of every sample is one batch of requests
            ids = [i for i in todo if len(dialogs[i]) > t]
            msgs = [[{"role": "system", "content": system},
                     {"role": "user", "content": self.build_input(history[i], dialogs[i][t][0])}] for i in ids]
            for i, (analysis, value) in zip(ids, self.llm_parse(msgs, self.parse)):
                q, r = dialogs[i][t]
                found[i][0].append(analysis)
                found[i][1].append(value)
                history[i] += [self.query_template.format(query=q), self.analysis_template.format(analysis=analysis),
                               self.value_template.format(**{self.VALUE_NAME: value}),
                               self.response_template.format(response=r)]
        for i in todo:
            self.finish(metas[i], *found[i])
        samples[Fields.meta] = metas
        return samples


class DialogLabelLLMMapper(DialogTurnLLMMapper):
    """Labels (a de-duplicated list) and analyses (one per turn) of each user turn."""

    VALUE_NAME = "labels"
    DEFAULT_CANDIDATES_TEMPLATE: str = ""
    DEFAULT_LABELS_TEMPLATE: str = ""
    DEFAULT_LABELS_PATTERN: str = ""

    def __init__(self, api_model: str = "gpt-4o", max_round: int = 10, *, labels_key: str = "",
                 candidate_template: Optional[str] = None, labels_template: Optional[str] = None,
                 labels_pattern: Optional[str] = None, **kwargs):
        super().__init__(api_model, max_round, **kwargs)
        self.labels_key = self.value_key = labels_key
        self.candidate_template = candidate_template or self.DEFAULT_CANDIDATES_TEMPLATE
        self.labels_template = self.value_template = labels_template or self.DEFAULT_LABELS_TEMPLATE
        self.labels_pattern = self.value_pattern = labels_pattern or self.DEFAULT_LABELS_PATTERN
        self.candidates: Optional[list] = None  # set by the op from its own ``*_candidates`` parameter

    def candidates_line(self) -> str:
        return self.candidate_template.format(candidate_str=",".join(self.candidates)) if self.candidates else ""


TURN_PARAM_DOCS = """
        :param api_model: model name at the API endpoint
        :param max_round: earlier turns put in each prompt (0: none)
        :param analysis_key: meta key of the per-turn analyses
        :param api_endpoint: the endpoint URL (or a path under ``$OPENAI_BASE_URL``)
        :param response_path: dotted path of the text in the JSON answer (default
            ``choices.0.message.content``)
        :param system_prompt: the system prompt (default: a built-in one with a worked example)
        :param query_template: how a user turn is written in the prompt (``{query}``)
        :param response_template: how an assistant turn is written in the prompt (``{response}``)
        :param analysis_template: how an earlier turn's analysis is written (``{analysis}``)
        :param analysis_pattern: regex whose group 1 is the analysis in the answer
        :param try_num: requests per turn until the answer has an analysis; then the sample goes to
            the error ledger with the raw answer
        :param max_query_chars_for_prompt: cut each user message to this many characters (0: no cut)
        :param max_response_chars_for_prompt: cut each assistant message to this many characters (0: no cut)
        :param model_params: client options (``base_url``, ``api_key``, ``timeout``, ``concurrency``, ...)
        :param sampling_params: generation settings (``temperature``, ``max_tokens``, ...)
        :param preferred_output_lang: language of the analyses (``zh`` or ``en``; the line prefixes
            stay as in the templates, so the patterns still match)"""

LABEL_PARAM_DOCS = TURN_PARAM_DOCS + """
        :param labels_key: meta key of the labels (de-duplicated, in first-seen order)
        :param candidate_template: how the candidate labels are given (``{candidate_str}``)
        :param labels_template: how an earlier turn's labels are written (``{labels}``)
        :param labels_pattern: regex whose group 1 is the labels in the answer"""


def label_note(prefix_a: str, prefix_b: str) -> dict:
    """The language notes appended to a labeller's system prompt."""
    return {
        "zh": f"\n\n【输出语言】「{prefix_a}」「{prefix_b}」之后的内容请用简体中文。",
        "en": (f"\n\n[Output language] Keep the prefixes 「{prefix_a}：」「{prefix_b}：」 exactly as in the "
               "example, and write what follows each colon in English."),
    }
