import json
import os
from typing import Any, List, Optional

from loguru import logger

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys, StatsKeys

# 1-5 scores written by the lightweight dialog / trace judge mappers
_DIALOG_QUALITY_KEYS = (
    MetaKeys.dialog_memory_consistency,
    MetaKeys.dialog_coreference,
    MetaKeys.dialog_topic_shift,
    MetaKeys.dialog_error_recovery,
    MetaKeys.dialog_clarification_quality,
    MetaKeys.dialog_proactivity,
    MetaKeys.dialog_non_repetition,
    MetaKeys.agent_trace_coherence,
    MetaKeys.agent_tool_relevance,
)
_NEGATIVE_SENTIMENT = ["负面", "negative", "angry", "沮丧", "不满", "frustrated", "disappointed", "unhappy"]
_LLM_CODES = ("llm_agent_analysis_eval_low", "llm_reply_quality_eval_low")


def _load_calibration(path: str) -> Optional[dict]:
    """The calibration JSON object at ``path``; None (with a warning) when unreadable, as Data-Juicer."""
    if not path or not str(path).strip():
        return None
    full = os.path.abspath(os.path.expanduser(str(path).strip()))
    if not os.path.isfile(full):
        logger.warning(f"agent_bad_case_signal_mapper: calibration_json_path is not a file ({full}); "
                       f"auto thresholds disabled for this run.")
        return None
    try:
        with open(full, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        logger.warning(f"agent_bad_case_signal_mapper: failed to load calibration JSON {full}: {e}")
        return None
    return data if isinstance(data, dict) else None


def _recommendation(record: Any) -> str:
    """Lower-cased ``recommendation`` of an LLM eval record (a dict or its JSON), ``""`` if none."""
    if isinstance(record, str):
        if not record:
            return ""
        try:
            record = json.loads(record)
        except ValueError:
            return ""
    if not isinstance(record, dict):
        return ""
    rec = record.get("recommendation")
    if (isinstance(rec, (list, tuple)) or type(rec).__name__ == "ndarray") and len(rec) > 0:
        rec = rec[0]
    if hasattr(rec, "item"):  # numpy scalars
        try:
            rec = rec.item()
        except (TypeError, ValueError):  # not a one-element numpy value: keep it as it is
            pass
    return "" if rec is None else str(rec).strip().strip('"').lower()


def _as(cast, value):
    try:
        return cast(value)
    except (TypeError, ValueError):
        return None


@OPERATORS.register_module("agent_bad_case_signal_mapper")
class AgentBadCaseSignalMapper(Mapper):
    """Rule-based triage of agent samples: writes bad-case signals and a tier into ``__dj__meta__``.

    It reads what earlier ops left in meta and stats and writes ``agent_bad_case_signals`` (a list
    of ``{"code", "detail", "weight"}``, weight ``high`` or ``medium``) and ``agent_bad_case_tier``.
    Signals, each switched by its ``signal_on_*`` flag:

    - ``tool_message_error_pattern`` (high): meta ``tool_fail_count`` >= ``min_tool_fail_count_for_signal``;
    - ``low_tool_success_ratio``: ``tool_success_ratio`` <= ``tool_success_ratio_max_for_signal`` over at
      least ``min_tool_rounds_for_ratio_signal`` tool results;
    - ``suspect_empty_or_trivial_final_response``: a query of at least ``min_query_len_for_empty_check``
      characters answered by at most ``max_response_len_for_empty_check``;
    - ``high_token_usage`` / ``high_latency_ms``: meta ``total_tokens`` / ``agent_total_cost_time_ms`` above
      ``max_total_tokens`` / ``max_latency_ms``;
    - ``llm_agent_analysis_eval_low`` / ``llm_reply_quality_eval_low``: stats ``llm_analysis_score`` /
      ``llm_quality_score`` at most the ``*_score_max_for_bad`` (with a ``discard`` recommendation when
      ``*_discard_must_be_strict``); high when also at most the ``high_precision_*`` threshold and discarded;
    - ``negative_sentiment_label_hint``: a meta ``dialog_sentiment_labels`` entry contains a negative substring;
    - ``high_perplexity``: stats ``perplexity`` >= ``perplexity_high_threshold``;
    - ``hard_query_low_reply_quality_conjunction``: ``llm_difficulty_score`` >= ``hard_query_difficulty_min``
      and ``llm_quality_score`` <= ``poor_reply_quality_max``;
    - ``dialog_turn_quality_meta_low``: at least ``min_dialog_quality_low_axes_for_signal`` of the dialog /
      trace judge records (``dialog_*``, ``agent_trace_coherence``, ``agent_tool_relevance``) score at most
      ``dialog_quality_low_score_threshold``.

    All but the first two kinds are medium. Tier: ``high_precision`` on a tool failure (``watchlist`` when
    ``high_precision_on_tool_fail_alone`` is off) or a high LLM signal; else ``watchlist`` with at least
    ``min_medium_signals_for_watchlist`` medium signals or a single medium one; else ``none``.

    With ``auto_calibrate_thresholds`` the token, latency and perplexity thresholds may come from the JSON
    at ``calibration_json_path`` (``{"default": {...}, "by_request_model": {model: {...}}}``, chosen by meta
    ``agent_request_model``); an unreadable file only logs a warning, as in Data-Juicer.
    """

    def __init__(self, query_key: str = "query", response_key: str = "response", signal_on_tool_fail: bool = True,
                 min_tool_fail_count_for_signal: int = 1, signal_on_low_tool_success_ratio: bool = True,
                 tool_success_ratio_max_for_signal: float = 0.499, min_tool_rounds_for_ratio_signal: int = 2,
                 signal_on_suspect_empty_response: bool = True, min_query_len_for_empty_check: int = 80,
                 max_response_len_for_empty_check: int = 20, max_total_tokens: Optional[int] = None,
                 max_latency_ms: Optional[int] = None, calibration_json_path: Optional[str] = None,
                 auto_calibrate_thresholds: bool = False, calibration_manual_overrides_auto: bool = True,
                 auto_enable_perplexity_from_calibration: bool = True, signal_on_llm_analysis_low: bool = True,
                 llm_analysis_score_max_for_bad: float = 0.28, llm_analysis_discard_must_be_strict: bool = True,
                 high_precision_llm_analysis_discard_threshold: float = 0.24,
                 signal_on_llm_text_quality_low: bool = True, llm_text_quality_score_max_for_bad: float = 0.28,
                 llm_text_quality_discard_must_be_strict: bool = True,
                 high_precision_llm_text_quality_discard_threshold: float = 0.24,
                 signal_on_negative_sentiment_hint: bool = False,
                 negative_sentiment_substrings: Optional[List[str]] = None, signal_on_high_perplexity: bool = False,
                 perplexity_high_threshold: float = 800.0, signal_hard_query_poor_reply: bool = False,
                 hard_query_difficulty_min: float = 0.72, poor_reply_quality_max: float = 0.36,
                 high_precision_on_tool_fail_alone: bool = True, min_medium_signals_for_watchlist: int = 2,
                 signal_on_low_dialog_quality_meta: bool = True, dialog_quality_low_score_threshold: float = 2.0,
                 min_dialog_quality_low_axes_for_signal: int = 1, **kwargs):
        """
        :param query_key: field of the (last) query
        :param response_key: field of the (last) response
        :param signal_on_tool_fail: signal failed tool calls (meta ``tool_fail_count``)
        :param min_tool_fail_count_for_signal: failed tool calls needed for that signal (at least 1)
        :param signal_on_low_tool_success_ratio: signal a low meta ``tool_success_ratio``
        :param tool_success_ratio_max_for_signal: highest ratio that signals
        :param min_tool_rounds_for_ratio_signal: tool results (successes + failures) needed for the ratio signal
        :param signal_on_suspect_empty_response: signal a long query with an (almost) empty response
        :param min_query_len_for_empty_check: shortest stripped query checked
        :param max_response_len_for_empty_check: longest stripped response that signals
        :param max_total_tokens: meta ``total_tokens`` above this signals (None: off unless calibrated)
        :param max_latency_ms: meta ``agent_total_cost_time_ms`` above this signals (None: off unless calibrated)
        :param calibration_json_path: JSON file of percentile thresholds (used with ``auto_calibrate_thresholds``)
        :param auto_calibrate_thresholds: take thresholds from ``calibration_json_path``
        :param calibration_manual_overrides_auto: thresholds given here win over calibrated ones
        :param auto_enable_perplexity_from_calibration: a calibrated perplexity threshold turns the perplexity
            signal on
        :param signal_on_llm_analysis_low: signal a low stats ``llm_analysis_score``
        :param llm_analysis_score_max_for_bad: highest analysis score that signals
        :param llm_analysis_discard_must_be_strict: also require the record's recommendation ``discard``
        :param high_precision_llm_analysis_discard_threshold: at or below this (and discarded) the signal is high
        :param signal_on_llm_text_quality_low: signal a low stats ``llm_quality_score``
        :param llm_text_quality_score_max_for_bad: highest quality score that signals
        :param llm_text_quality_discard_must_be_strict: also require the record's recommendation ``discard``
        :param high_precision_llm_text_quality_discard_threshold: at or below this (and discarded) the signal
            is high
        :param signal_on_negative_sentiment_hint: signal negative meta ``dialog_sentiment_labels``
        :param negative_sentiment_substrings: substrings marking a negative label (None: built-in English and
            Chinese list)
        :param signal_on_high_perplexity: signal a high stats ``perplexity``
        :param perplexity_high_threshold: lowest perplexity that signals
        :param signal_hard_query_poor_reply: signal a hard query (``llm_difficulty_score``) with a poor reply
        :param hard_query_difficulty_min: lowest difficulty counted as hard
        :param poor_reply_quality_max: highest ``llm_quality_score`` counted as poor
        :param high_precision_on_tool_fail_alone: a tool failure alone makes the tier ``high_precision``
            (else ``watchlist``)
        :param min_medium_signals_for_watchlist: medium signals that make the tier ``watchlist``
        :param signal_on_low_dialog_quality_meta: signal low 1-5 dialog / trace judge scores in meta
        :param dialog_quality_low_score_threshold: highest judge score counted as low
        :param min_dialog_quality_low_axes_for_signal: low judge scores needed for that signal (at least 1)
        """
        super().__init__(query_key=query_key, response_key=response_key, **kwargs)
        self.signal_on_tool_fail = signal_on_tool_fail
        self.min_tool_fail_count_for_signal = max(1, int(min_tool_fail_count_for_signal))
        self.signal_on_low_tool_success_ratio = signal_on_low_tool_success_ratio
        self.tool_success_ratio_max_for_signal = tool_success_ratio_max_for_signal
        self.min_tool_rounds_for_ratio_signal = min_tool_rounds_for_ratio_signal
        self.signal_on_suspect_empty_response = signal_on_suspect_empty_response
        self.min_query_len_for_empty_check = min_query_len_for_empty_check
        self.max_response_len_for_empty_check = max_response_len_for_empty_check
        self.max_total_tokens = max_total_tokens
        self.max_latency_ms = max_latency_ms
        self.calibration_json_path = calibration_json_path
        self.auto_calibrate_thresholds = bool(auto_calibrate_thresholds)
        self.calibration_manual_overrides_auto = bool(calibration_manual_overrides_auto)
        self.auto_enable_perplexity_from_calibration = bool(auto_enable_perplexity_from_calibration)
        self.calibration = (_load_calibration(calibration_json_path)
                            if self.auto_calibrate_thresholds and calibration_json_path else None)
        self.signal_on_llm_analysis_low = signal_on_llm_analysis_low
        self.llm_analysis_score_max_for_bad = llm_analysis_score_max_for_bad
        self.llm_analysis_discard_must_be_strict = llm_analysis_discard_must_be_strict
        self.high_precision_llm_analysis_discard_threshold = high_precision_llm_analysis_discard_threshold
        self.signal_on_llm_text_quality_low = signal_on_llm_text_quality_low
        self.llm_text_quality_score_max_for_bad = llm_text_quality_score_max_for_bad
        self.llm_text_quality_discard_must_be_strict = llm_text_quality_discard_must_be_strict
        self.high_precision_llm_text_quality_discard_threshold = high_precision_llm_text_quality_discard_threshold
        self.signal_on_negative_sentiment_hint = signal_on_negative_sentiment_hint
        self.negative_sentiment_substrings = list(negative_sentiment_substrings or _NEGATIVE_SENTIMENT)
        self.signal_on_high_perplexity = signal_on_high_perplexity
        self.perplexity_high_threshold = perplexity_high_threshold
        self.signal_hard_query_poor_reply = signal_hard_query_poor_reply
        self.hard_query_difficulty_min = hard_query_difficulty_min
        self.poor_reply_quality_max = poor_reply_quality_max
        self.high_precision_on_tool_fail_alone = high_precision_on_tool_fail_alone
        self.min_medium_signals_for_watchlist = min_medium_signals_for_watchlist
        self.signal_on_low_dialog_quality_meta = bool(signal_on_low_dialog_quality_meta)
        self.dialog_quality_low_score_threshold = float(dialog_quality_low_score_threshold)
        self.min_dialog_quality_low_axes_for_signal = max(1, int(min_dialog_quality_low_axes_for_signal))

    # -- thresholds (manual vs calibrated) --------------------------------------------------
    def _calibration_row(self, meta: dict) -> dict:
        if not self.auto_calibrate_thresholds or not self.calibration:
            return {}
        default = self.calibration.get("default")
        row = dict(default) if isinstance(default, dict) else {}
        by_model = self.calibration.get("by_request_model")
        model = str(meta.get(MetaKeys.agent_request_model) or "").strip()
        if model and isinstance(by_model, dict) and isinstance(by_model.get(model), dict):
            row.update(by_model[model])
        return row

    def _limit(self, row: dict, key: str, manual: Optional[int]) -> Optional[int]:
        raw = row.get(key)
        calibrated = None if raw is None else _as(int, raw)
        if self.calibration_manual_overrides_auto:
            return manual if manual is not None else calibrated
        return calibrated if calibrated is not None else manual

    def _perplexity_threshold(self, row: dict) -> Optional[float]:
        """The perplexity threshold in force, None when the signal is off."""
        raw = row.get("perplexity_high_threshold")
        calibrated = None if raw is None else _as(float, raw)
        manual = float(self.perplexity_high_threshold)
        if self.signal_on_high_perplexity:
            if self.calibration_manual_overrides_auto or calibrated is None:
                return manual
            return calibrated
        if calibrated is not None and self.auto_enable_perplexity_from_calibration:
            return calibrated
        return None

    # -- signals ----------------------------------------------------------------------------
    @staticmethod
    def _llm_signal(stats: dict, score_key: str, record_key: str, score_max: float, strict: bool,
                    high_max: float, code: str) -> Optional[dict]:
        rec = _recommendation(stats.get(record_key))
        score = stats.get(score_key)
        if score is None or float(score) > score_max or (strict and rec != "discard"):
            return None
        weight = "high" if float(score) <= high_max and rec == "discard" else "medium"
        return {"code": code, "detail": f"score={score}, recommendation={rec or 'n/a'}", "weight": weight}

    def _signals(self, q: str, r: str, meta: dict, stats: dict) -> list[dict]:
        signals = []

        def add(code, detail, weight="medium"):
            signals.append({"code": code, "detail": detail, "weight": weight})

        fails = int(meta.get(MetaKeys.tool_fail_count) or 0)
        if self.signal_on_tool_fail and fails >= self.min_tool_fail_count_for_signal:
            add("tool_message_error_pattern", f"tool_fail_count={fails}", "high")
        succ = int(meta.get(MetaKeys.tool_success_count) or 0)
        ratio = meta.get(MetaKeys.tool_success_ratio)
        if (self.signal_on_low_tool_success_ratio and succ + fails >= self.min_tool_rounds_for_ratio_signal
                and ratio is not None and float(ratio) <= self.tool_success_ratio_max_for_signal):
            add("low_tool_success_ratio", f"ratio={ratio}, success={succ}, fail={fails}")
        if (self.signal_on_suspect_empty_response and len(q) >= self.min_query_len_for_empty_check
                and len(r) <= self.max_response_len_for_empty_check):
            add("suspect_empty_or_trivial_final_response", f"query_len={len(q)}, response_len={len(r)}")

        row = self._calibration_row(meta)
        max_tokens = self._limit(row, "max_total_tokens", self.max_total_tokens)
        tokens = meta.get(MetaKeys.total_tokens)
        if max_tokens is not None and tokens is not None and int(tokens) > max_tokens:
            add("high_token_usage", f"total_tokens={tokens}")
        max_latency = self._limit(row, "max_latency_ms", self.max_latency_ms)
        latency = meta.get(MetaKeys.agent_total_cost_time_ms)
        if max_latency is not None and latency is not None and int(latency) > max_latency:
            add("high_latency_ms", f"total_cost_time_ms={latency}")

        if self.signal_on_llm_analysis_low:
            s = self._llm_signal(stats, StatsKeys.llm_analysis_score, StatsKeys.llm_analysis_record,
                                 self.llm_analysis_score_max_for_bad, self.llm_analysis_discard_must_be_strict,
                                 self.high_precision_llm_analysis_discard_threshold, _LLM_CODES[0])
            if s:
                signals.append(s)
        if self.signal_on_llm_text_quality_low:
            s = self._llm_signal(stats, StatsKeys.llm_quality_score, StatsKeys.llm_quality_record,
                                 self.llm_text_quality_score_max_for_bad, self.llm_text_quality_discard_must_be_strict,
                                 self.high_precision_llm_text_quality_discard_threshold, _LLM_CODES[1])
            if s:
                signals.append(s)
        if self.signal_on_negative_sentiment_hint:
            labels = meta.get(MetaKeys.dialog_sentiment_labels)
            if isinstance(labels, list) and labels:
                blob = " ".join(str(x).lower() for x in labels)
                if any(s.lower() in blob for s in self.negative_sentiment_substrings):
                    add("negative_sentiment_label_hint", f"labels={labels[:6]}")
        threshold = self._perplexity_threshold(row)
        ppl = stats.get(StatsKeys.perplexity)
        if threshold is not None and ppl is not None and float(ppl) >= threshold:
            add("high_perplexity", f"perplexity={ppl}")
        if self.signal_hard_query_poor_reply:
            d, qs = stats.get(StatsKeys.llm_difficulty_score), stats.get(StatsKeys.llm_quality_score)
            if (d is not None and qs is not None and float(d) >= self.hard_query_difficulty_min
                    and float(qs) <= self.poor_reply_quality_max):
                add("hard_query_low_reply_quality_conjunction", f"difficulty={d}, llm_quality_score={qs}")
        if self.signal_on_low_dialog_quality_meta:
            th = self.dialog_quality_low_score_threshold
            lows = []
            for key in _DIALOG_QUALITY_KEYS:
                rec = meta.get(key)
                if not isinstance(rec, dict) or rec.get("skipped") or rec.get("error") or rec.get("score") is None:
                    continue
                score = _as(float, rec["score"])
                if score is not None and score <= th:
                    lows.append(key)
            if len(lows) >= self.min_dialog_quality_low_axes_for_signal:
                add("dialog_turn_quality_meta_low", f"axes={lows}, threshold={th}")
        return signals

    def _tier(self, signals: list[dict]) -> str:
        if any(s["code"] == "tool_message_error_pattern" and s["weight"] == "high" for s in signals):
            return "high_precision" if self.high_precision_on_tool_fail_alone else "watchlist"
        if any(s["code"] in _LLM_CODES and s["weight"] == "high" for s in signals):
            return "high_precision"
        mediums = sum(s["weight"] == "medium" for s in signals)
        if mediums >= self.min_medium_signals_for_watchlist or (len(signals) == 1 and mediums == 1):
            return "watchlist"
        return "none"

    def process_batched(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        queries = samples.get(self.query_key) or [None] * n
        responses = samples.get(self.response_key) or [None] * n
        metas = samples.get(Fields.meta) or [None] * n
        all_stats = samples.get(Fields.stats) or [None] * n
        new_metas = []
        for q, r, meta, stats in zip(queries, responses, metas, all_stats):
            meta = dict(meta) if meta else {}
            signals = self._signals((q or "").strip(), (r or "").strip(), meta, stats or {})
            meta[MetaKeys.agent_bad_case_signals] = signals
            meta[MetaKeys.agent_bad_case_tier] = self._tier(signals)
            new_metas.append(meta)
        samples[Fields.meta] = new_metas
        return samples
