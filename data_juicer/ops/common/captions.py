"""What the captioning mappers share: generating captions in batches, choosing among candidate
captions (``keep_candidate_mode``) and placing captions after their media tokens."""

from __future__ import annotations

import random
from typing import Sequence

CANDIDATE_MODES = ("random_any", "similar_one_simhash", "all")
MAX_NEW_TOKENS = 128  # as Data-Juicer's captioners generate


def only_special_tokens(text: str) -> str:
    """The special tokens of ``text``, in order, concatenated (Data-Juicer's ``remove_non_special_tokens``)."""
    import re

    from data_juicer.ops.common.special_tokens import special_tokens

    pattern = "|".join(re.escape(t) for t in special_tokens().values())
    return "".join(re.findall(pattern, text))


def insert_after_tokens(text: str, token: str, captions: Sequence[str]) -> str:
    """``text`` with ``captions[k]`` inserted (space-delimited) after the k-th ``token``.

    Data-Juicer's ``insert_texts_after_placeholders`` searches from the start of the string each
    time, so with several tokens every caption lands after the first token, in reverse order;
    here each caption follows its own token (a deliberate fix).
    """
    out, pos = [], 0
    for cap in captions:
        at = text.find(token, pos)
        if at == -1:
            raise ValueError(f"media token '{token}' not found for caption {cap!r}")
        end = at + len(token)
        out.append(text[pos:end] + " " + cap + " ")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def simhash_of(texts: list[str]) -> list[int]:
    """Data-Juicer's simhash (``document_simhash_deduplicator`` with window_size 2) of each text."""
    from data_juicer.ops.registry import OPERATORS

    op = OPERATORS.get("document_simhash_deduplicator")(window_size=2)
    return [int(h) for h in op.compute_hash({op.text_key: list(texts)})[op_hash_key()]]


def op_hash_key() -> str:
    from data_juicer.utils.constant import HashKeys

    return HashKeys.simhash


def choose_captions(mode: str, original: str, candidates: list[str]) -> list[str]:
    """The caption(s) kept of one image's candidates: a random one, the one closest (simhash
    Hamming distance) to ``original`` (the chunk's text without special tokens), or all."""
    if mode == "all":
        return list(candidates)
    if mode == "random_any":
        return [random.choice(candidates)]
    hashes = simhash_of([original] + list(candidates))
    dists = [bin(hashes[0] ^ h).count("1") for h in hashes[1:]]
    return [candidates[min(range(len(dists)), key=dists.__getitem__)]]


def generate_captions(model, processor, images: Sequence, prompts: Sequence | None, rounds: int,
                      chunk: int, **gen_kwargs) -> list[list[str]]:
    """``rounds`` sampled captions per image (``[image][round]``), images in chunks of ``chunk``."""
    from data_juicer.models.vision import to_model
    from data_juicer.utils.lazy import require

    torch = require("torch")
    kw = {"max_new_tokens": MAX_NEW_TOKENS, "do_sample": True, **gen_kwargs}
    out: list[list[str]] = [[] for _ in images]
    with torch.inference_mode():
        for _ in range(rounds):
            for s in range(0, len(images), chunk):
                imgs = list(images[s:s + chunk])
                texts = list(prompts[s:s + chunk]) if prompts is not None else None
                if texts is not None and all(t is None for t in texts):
                    texts = None
                inputs = to_model(processor(images=imgs, text=texts, return_tensors="pt"), model)
                ids = model.generate(**inputs, **kw)
                for k, cap in enumerate(processor.batch_decode(ids, skip_special_tokens=True)):
                    out[s + k].append(cap)
    return out
