"""A batched ``transformers`` generation engine: the ``hf`` backend's core and the local server's engine.

``generate`` takes many chats at once, groups them by generation settings and runs each group
as one left-padded ``model.generate`` call (``max_batch`` rows at a time), with an optional
regex/JSON constraint per row (see :mod:`data_juicer.models.llm.constrained`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Optional, Sequence

from data_juicer.models.llm.constrained import ConstrainedLogits, RegexConstraint, constraint_pattern
from data_juicer.utils.lazy import require

# OpenAI/vLLM sampling params -> transformers ``generate`` kwargs
_GEN_KEYS = {"max_tokens": "max_new_tokens", "max_new_tokens": "max_new_tokens", "temperature": "temperature",
             "top_p": "top_p", "top_k": "top_k", "repetition_penalty": "repetition_penalty"}


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" | "length"


def render_chat(tokenizer, messages: list[dict]) -> str:
    """The prompt text of a chat: the tokenizer's chat template, else ``role: content`` lines."""
    msgs = [dict(m, content=content_text(m.get("content"))) for m in messages]
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    return "".join(f"{m['role']}: {m['content']}\n" for m in msgs) + "assistant: "


def content_text(content) -> str:
    """The text of a message's content (OpenAI content parts: the text parts joined)."""
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


class HFEngine:
    def __init__(self, model, tokenizer, device: str = "cpu", max_batch: int = 32, default_max_tokens: int = 256):
        self.model = model.to(device).eval()
        self.tok = tokenizer
        self.device = device
        self.max_batch = max_batch
        self.default_max_tokens = default_max_tokens
        if self.tok.pad_token_id is None:
            self.tok.pad_token = self.tok.eos_token
        self.tok.padding_side = "left"
        self._token_texts = None
        self._lock = threading.Lock()  # one generate at a time per engine

    @property
    def token_texts(self) -> list[str]:
        if self._token_texts is None:
            self._token_texts = [self.tok.decode([i]) for i in range(len(self.tok))]
        return self._token_texts

    def _gen_kwargs(self, params: dict) -> dict:
        kw = {_GEN_KEYS[k]: v for k, v in params.items() if k in _GEN_KEYS and v is not None}
        kw.setdefault("max_new_tokens", self.default_max_tokens)
        temp = kw.get("temperature")
        if temp is None or temp <= 0:
            kw.pop("temperature", None)
            kw.pop("top_p", None)
            kw.pop("top_k", None)
            kw["do_sample"] = False
        else:
            kw["do_sample"] = True
        return kw

    def generate(self, chats: Sequence[list[dict]], params: Sequence[dict] | dict | None = None) -> list[Generation]:
        """One :class:`Generation` per chat, in order; ``params`` one dict for all or one per chat."""
        if not isinstance(params, (list, tuple)):
            params = [params or {}] * len(chats)
        groups: dict[str, list[int]] = {}
        import json

        for i, p in enumerate(params):
            key = json.dumps({k: v for k, v in p.items() if k in _GEN_KEYS or k == "seed"}, sort_keys=True)
            groups.setdefault(key, []).append(i)
        out: list[Optional[Generation]] = [None] * len(chats)
        for idx in groups.values():
            for s in range(0, len(idx), self.max_batch):
                part = idx[s:s + self.max_batch]
                for i, g in zip(part, self._run([chats[i] for i in part], [params[i] for i in part])):
                    out[i] = g
        return out

    def _run(self, chats, params: list[dict]) -> list[Generation]:
        torch = require("torch")
        transformers = require("transformers")
        prompts = [render_chat(self.tok, c) for c in chats]
        enc = self.tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        kw = self._gen_kwargs(params[0])
        patterns = [constraint_pattern(p) for p in params]
        extra = {}
        if any(patterns):
            proc = ConstrainedLogits([RegexConstraint(p) if p else None for p in patterns], self.token_texts,
                                     enc["input_ids"].shape[1], self.tok.eos_token_id)
            extra["logits_processor"] = transformers.LogitsProcessorList([proc])
        with self._lock, torch.inference_mode():
            if params[0].get("seed") is not None:
                torch.manual_seed(int(params[0]["seed"]))
            ids = self.model.generate(**enc, **kw, **extra, pad_token_id=self.tok.pad_token_id,
                                      eos_token_id=self.tok.eos_token_id)
        n_prompt = enc["input_ids"].shape[1]
        res = []
        for row in range(len(chats)):
            gen = ids[row, n_prompt:].tolist()
            stopped = self.tok.eos_token_id in gen
            if stopped:
                gen = gen[:gen.index(self.tok.eos_token_id)]
            gen = [t for t in gen if t != self.tok.pad_token_id]
            text = self.tok.decode(gen, skip_special_tokens=True)
            stops = params[row].get("stop")
            for st in ([stops] if isinstance(stops, str) else (stops or [])):
                if st and st in text:
                    text, stopped = text[:text.index(st)], True
            res.append(Generation(text, int(enc["attention_mask"][row].sum()), len(gen),
                                  "stop" if stopped else "length"))
        return res

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Mean-pooled last hidden states (what the local server answers ``/v1/embeddings`` with)."""
        torch = require("torch")
        enc = self.tok(list(texts), return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        with self._lock, torch.inference_mode():
            hidden = self.model(**enc, output_hidden_states=True).hidden_states[-1]
        mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
        return pooled.float().cpu().tolist()
