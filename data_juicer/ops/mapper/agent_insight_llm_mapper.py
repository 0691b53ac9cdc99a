import json
import re
from typing import Any, Optional

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.dialog_llm import batch_len, normalize_lang
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys, StatsKeys

SYSTEM_PROMPTS = {
    "en": ("You audit agent interaction logs carefully, like an automated data scientist.\n"
           "You get ONE sample as JSON: numeric stats, short previews of the query and response, "
           "optional LLM evaluation rationales, dialog_quality_llm (1-5 scores per axis from light "
           "turn/trace judges), dialog tags, tool usage and deterministic bad-case signals.\n\n"
           "Do this:\n1) Combine the numbers with the written rationales and note where they agree "
           "or conflict.\n2) Attribute causes only to keys present in the input; invent nothing.\n"
           "3) When unsure, say so with low confidence (precision matters for human review).\n\n"
           "Reply with one JSON object with exactly these keys:\n"
           "- headline: one short sentence for a dashboard card (English)\n"
           "- root_causes: a list of {factor, confidence (high|medium|low), cited_fields (field paths "
           "from the input), rationale_one_line}, in English\n"
           '- narrative_alignment: "aligned" | "mixed" | "conflict"\n'
           '- human_review_priority: "P0" | "P1" | "P2" | "P3" (use P0 rarely)\n'
           "- viz_facets: strings usable as chart dimensions (e.g. agent_request_model, agent_pt)\n"
           "- audit_notes: optional caveats in English\n\n"
           "Valid JSON only, without markdown fences."),
    "zh": ("你是谨慎的智能体交互日志审计员（类似自动化数据科学家）。\n"
           "你会收到单条样本的 JSON：数值统计、query/response 的简短预览、可选的 LLM 评估理由、"
           "dialog_quality_llm（轻量轮次/轨迹评审给出的各维度 1-5 分）、对话标签、工具使用情况以及确定性的 "
           "bad-case 信号。\n\n请这样做：\n1）把数字与文字理由结合起来，指出一致或矛盾之处。\n"
           "2）只把原因归到输入里出现的键上，不要编造。\n3）不确定时给低置信度（人工复核看重准确）。\n\n"
           "只回复一个 JSON 对象，键名必须完全如下：\n"
           "- headline：一句话的看板标题（中文）\n"
           "- root_causes：列表，元素为 {factor, confidence (high|medium|low), cited_fields（来自输入的字段路径）, "
           "rationale_one_line}，说明用中文\n"
           '- narrative_alignment："aligned" | "mixed" | "conflict"\n'
           '- human_review_priority："P0" | "P1" | "P2" | "P3"（P0 慎用）\n'
           "- viz_facets：可作图表维度的字符串（如 agent_request_model、agent_pt）\n"
           "- audit_notes：可选的中文备注\n\n只输出合法 JSON，不要 markdown 代码块。"),
}

# the 1-5 judges whose records are summarised into the evidence pack
QUALITY_KEYS = (MetaKeys.dialog_memory_consistency, MetaKeys.dialog_coreference, MetaKeys.dialog_topic_shift,
                MetaKeys.dialog_error_recovery, MetaKeys.dialog_clarification_quality, MetaKeys.dialog_proactivity,
                MetaKeys.dialog_non_repetition, MetaKeys.agent_trace_coherence, MetaKeys.agent_tool_relevance)


def _json_safe(x: Any, depth: int = 0) -> Any:
    if depth > 6:
        return "..."
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, dict):
        return {str(k): _json_safe(v, depth + 1) for k, v in list(x.items())[:40]}
    if isinstance(x, (list, tuple)):
        return [_json_safe(v, depth + 1) for v in x[:30]]
    if hasattr(x, "tolist"):
        return _json_safe(x.tolist(), depth + 1)
    return str(x)[:500]


def _capped(rec: Any, max_chars: int = 1200) -> Any:
    """A record (or its JSON string) as JSON-safe data, or its first ``max_chars`` characters + '…'."""
    if rec is None or rec == "":
        return None
    if isinstance(rec, str):
        try:
            rec = json.loads(rec)
        except ValueError:
            return rec if len(rec) <= max_chars else rec[:max_chars] + "…"
    s = json.dumps(_json_safe(rec), ensure_ascii=False)
    return json.loads(s) if len(s) <= max_chars else s[:max_chars] + "…"


def _quality_pack(meta: dict) -> Optional[dict]:
    out = {}
    for k in QUALITY_KEYS:
        rec = meta.get(k)
        if not isinstance(rec, dict):
            continue
        if rec.get("skipped"):
            out[k] = {"skipped": True}
        elif rec.get("error"):
            out[k] = {"error": str(rec["error"])}
        else:
            piece = {}
            if rec.get("score") is not None:
                piece["score"] = rec["score"]
            if isinstance(rec.get("reason"), str) and rec["reason"].strip():
                piece["reason"] = rec["reason"][:400]
            if piece:
                out[k] = piece
    return out or None


def evidence_pack(sample: dict, query_key: str, response_key: str, qmax: int, rmax: int) -> dict:
    """What the model sees: the sample's stats and tags, grouped, with short text previews."""
    meta = sample.get(Fields.meta) if isinstance(sample.get(Fields.meta), dict) else {}
    stats = sample.get(Fields.stats) if isinstance(sample.get(Fields.stats), dict) else {}

    def head(v, n=8):
        return v[:n] if isinstance(v, list) else v

    dq = _quality_pack(meta)
    return {
        "lineage": {k: meta.get(k) for k in (MetaKeys.agent_request_model, MetaKeys.agent_pt,
                                              MetaKeys.agent_total_cost_time_ms)},
        "usage_tokens": {k: meta.get(k) for k in (MetaKeys.prompt_tokens, MetaKeys.completion_tokens,
                                                   MetaKeys.total_tokens)},
        "tools": {MetaKeys.tool_success_count: meta.get(MetaKeys.tool_success_count),
                  MetaKeys.tool_fail_count: meta.get(MetaKeys.tool_fail_count),
                  MetaKeys.tool_success_ratio: meta.get(MetaKeys.tool_success_ratio),
                  MetaKeys.primary_tool_type: meta.get(MetaKeys.primary_tool_type),
                  MetaKeys.dominant_tool_types: head(meta.get(MetaKeys.dominant_tool_types)),
                  MetaKeys.agent_skill_insights: head(meta.get(MetaKeys.agent_skill_insights))},
        "dialog_tags": {MetaKeys.dialog_intent_labels: head(meta.get(MetaKeys.dialog_intent_labels)),
                        MetaKeys.dialog_topic_labels: head(meta.get(MetaKeys.dialog_topic_labels)),
                        MetaKeys.dialog_sentiment_labels: head(meta.get(MetaKeys.dialog_sentiment_labels)),
                        MetaKeys.agent_turn_count: meta.get(MetaKeys.agent_turn_count)},
        "scores": {k: stats.get(k) for k in (StatsKeys.llm_analysis_score, StatsKeys.llm_quality_score,
                                              StatsKeys.llm_difficulty_score)},
        "llm_eval_support": {k: _capped(stats.get(k)) for k in (StatsKeys.llm_analysis_record,
                                                                 StatsKeys.llm_quality_record,
                                                                 StatsKeys.llm_difficulty_record)},
        "text_stats": {k: stats.get(k) for k in (StatsKeys.text_len, StatsKeys.num_words, StatsKeys.perplexity,
                                                  StatsKeys.lang_score)},
        "deterministic_bad_case": {"signals": meta.get(MetaKeys.agent_bad_case_signals),
                                   "tier": meta.get(MetaKeys.agent_bad_case_tier)},
        "dialog_quality_llm": _capped(dq, 2800) if dq else None,
        "query_preview": str(sample.get(query_key) or "").strip()[:qmax],
        "response_preview": str(sample.get(response_key) or "").strip()[:rmax],
    }


def parse_insight(text: str) -> Optional[dict]:
    """The JSON object ending the answer (from its first ``{``), else None."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    m = re.search(r"\{[\s\S]*\}\s*$", s)
    try:
        obj = json.loads(m.group(0) if m else s)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


@OPERATORS.register_module("agent_insight_llm_mapper")
class AgentInsightLLMMapper(LLMOpMixin, Mapper):
    """Asks an LLM to turn a sample's statistics, tags, judge scores and bad-case signals into one
    auditable JSON insight (headline, root causes with cited fields, alignment, review priority).

    Run it after the filters / mappers that fill ``__dj__stats__`` and ``__dj__meta__`` (e.g.
    ``agent_bad_case_signal_mapper`` and the ``dialog_*`` judges). The user message is the
    evidence pack as JSON; ``meta.agent_insight_llm`` gets the parsed object,
    ``meta.agent_insight_llm_raw`` the raw answer and ``meta.agent_pipeline_output_lang`` the
    language. ``run_for_tiers`` limits the requests to samples whose ``meta.agent_bad_case_tier``
    is listed; samples that already have an insight are skipped. An answer that is not a JSON
    object after ``try_num`` requests sends the sample to the error ledger with the raw answer
    (Data-Juicer stores a placeholder insight instead).
    """

    def __init__(self, api_model: str = "gpt-4o", *, api_endpoint: Optional[str] = None,
                 response_path: Optional[str] = None, system_prompt: Optional[str] = None, query_key: str = "query",
                 response_key: str = "response", query_preview_max_chars: int = 500,
                 response_preview_max_chars: int = 500, run_for_tiers: Optional[list[str]] = None, try_num: int = 2,
                 model_params: dict = {}, sampling_params: dict = {},  # noqa: B006 (Data-Juicer's defaults)
                 preferred_output_lang: str = "en", **kwargs):
        """
        :param api_model: model name at the API endpoint
        :param api_endpoint: the endpoint URL (or a path under ``$OPENAI_BASE_URL``)
        :param response_path: dotted path of the text in the JSON answer (default
            ``choices.0.message.content``)
        :param system_prompt: the system prompt (default: a built-in one in ``preferred_output_lang``)
        :param query_key: field of the user query (previewed)
        :param response_key: field of the response (previewed)
        :param query_preview_max_chars: characters of the query in the evidence pack
        :param response_preview_max_chars: characters of the response in the evidence pack
        :param run_for_tiers: only samples whose ``agent_bad_case_tier`` is in this list (None: all)
        :param try_num: requests per sample until the answer parses; then the sample goes to the
            error ledger with the raw answer
        :param model_params: client options (``base_url``, ``api_key``, ``timeout``, ``concurrency``, ...)
        :param sampling_params: generation settings (``temperature``, ``max_tokens``, ...)
        :param preferred_output_lang: language of the insight's text (``en`` or ``zh``)
        """
        super().__init__(query_key=query_key, response_key=response_key, **kwargs)
        self.preferred_output_lang = normalize_lang(preferred_output_lang)
        self.system_prompt = system_prompt or SYSTEM_PROMPTS[self.preferred_output_lang]
        self.query_preview_max_chars = query_preview_max_chars
        self.response_preview_max_chars = response_preview_max_chars
        self.run_for_tiers = run_for_tiers
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    def process_batched(self, samples):
        n = batch_len(samples)
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        todo, msgs, raws = [], [], {}
        for i, meta in enumerate(metas):
            if MetaKeys.agent_insight_llm in meta:
                continue
            if self.run_for_tiers is not None and meta.get(MetaKeys.agent_bad_case_tier) not in self.run_for_tiers:
                continue
            row = {k: samples[k][i] for k in samples}
            row[Fields.meta] = meta
            pack = evidence_pack(row, self.query_key, self.response_key, self.query_preview_max_chars,
                                 self.response_preview_max_chars)
            todo.append(i)
            msgs.append([{"role": "system", "content": self.system_prompt},
                         {"role": "user", "content": json.dumps(pack, ensure_ascii=False)}])

        def parse(text):  # keep the raw answer beside the parsed one
            obj = parse_insight(text)
            return None if obj is None else (obj, text)

        if msgs:
            for i, (obj, raw) in zip(todo, self.llm_parse(msgs, parse)):
                raws[i] = raw
                metas[i][MetaKeys.agent_pipeline_output_lang] = self.preferred_output_lang
                metas[i][MetaKeys.agent_insight_llm_raw] = raw
                metas[i][MetaKeys.agent_insight_llm] = obj
        samples[Fields.meta] = metas
        return samples
