"""Shared parts of the LLM extraction mappers (``extract_*``, ``relation_identity_mapper``).

:class:`MetaLLMMapper` sends one chat per sample for a whole batch at once, parses each answer
(resent up to ``try_num`` times while it does not parse) and writes the result into the
sample's ``__dj__meta__``. An answer that never parses raises
:class:`~data_juicer.models.llm.LLMResponseError` with the raw text, so the executor puts that
sample in the error ledger (Data-Juicer writes an empty or placeholder value and goes on).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from loguru import logger

from data_juicer.models.llm.op_params import LLMOpMixin
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.dialog_llm import batch_len
from data_juicer.utils.constant import Fields

# any CJK / full-width punctuation, or any ASCII punctuation (Data-Juicer's split rule)
PUNCTUATION = r'[\u3000-\u303f\uff00-\uffef]|[!"#$%&\'()*+,\-./:;<=>?@\[\\\]^_`{|}~]'


def split_text_by_punctuation(text: str) -> list[str]:
    """The non-empty, stripped pieces of ``text`` between punctuation marks."""
    return [s.strip() for s in re.split(PUNCTUATION, text or "") if s.strip()]


def unique(items) -> list:
    """``items`` without repeats, first occurrence first (Data-Juicer uses a set: random order)."""
    return list(dict.fromkeys(items))


def is_float(s: Any) -> bool:
    try:
        float(s)
        return True
    except (TypeError, ValueError):
        return False


COMMON_DOCS = """
        :param api_endpoint: the endpoint URL (or a path under ``$OPENAI_BASE_URL``)
        :param response_path: dotted path of the text in the JSON answer (default
            ``choices.0.message.content``)
        :param try_num: requests per sample until the answer parses; then the sample goes to the
            error ledger with the raw answer
        :param drop_text: remove the text field from the output
        :param model_params: client options (``base_url``, ``api_key``, ``timeout``, ``concurrency``, ...)
        :param sampling_params: generation settings (``temperature``, ``max_tokens``, ...)"""


class MetaLLMMapper(LLMOpMixin, Mapper):
    """One chat per sample -> a parsed value in the meta. Subclasses set ``done_keys`` (a sample
    having all of them is skipped) and implement :meth:`messages`, :meth:`parse`, :meth:`write`."""

    def init_common(self, api_model: str, api_endpoint, response_path, try_num, drop_text, model_params,
                    sampling_params) -> None:
        self.drop_text = drop_text
        self.init_llm(model=api_model, api_endpoint=api_endpoint, response_path=response_path,
                      model_params=model_params, sampling_params=sampling_params, try_num=try_num)

    def done_keys(self) -> tuple:
        raise NotImplementedError

    def messages(self, row: dict, meta: dict) -> Optional[list]:
        """The chat for this sample, or None to send nothing (the sample is left as it is)."""
        raise NotImplementedError

    def parse(self, text: str) -> Any:
        """The parsed answer, or None when it is not acceptable (it is then asked again)."""
        raise NotImplementedError

    def write(self, meta: dict, value: Any) -> None:
        raise NotImplementedError

    def process_batched(self, samples: dict) -> dict:
        n = batch_len(samples)
        metas = [dict(m) if isinstance(m, dict) else {} for m in (samples.get(Fields.meta) or [None] * n)]
        todo, msgs = [], []
        for i, meta in enumerate(metas):
            if all(k in meta for k in self.done_keys()):
                continue
            m = self.messages({k: samples[k][i] for k in samples}, meta)
            if m is not None:
                todo.append(i)
                msgs.append(m)
        if msgs:
            for i, value in zip(todo, self.llm_parse(msgs, self.parse)):
                self.write(metas[i], value)
        samples[Fields.meta] = metas
        if self.drop_text:
            samples.pop(self.text_key, None)
        return samples


def warn_once(op, message: str) -> None:
    if not getattr(op, "_warned", False):
        logger.warning(f"{op.name}: {message}")
        op._warned = True
