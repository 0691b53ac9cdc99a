"""Shared bits of the composite vision ops (``detect_character_*_mapper``,
``imgdiff_difference_area_generator_mapper``): building the ops they fuse with Data-Juicer's fixed
arguments, and asking those ops' models for many (image, text) pairs at once."""

from __future__ import annotations

from typing import Any


def merged_args(fixed: dict, given: dict | None, accelerator: str) -> dict:
    """``given`` completed with ``fixed`` (a given key wins), and ``accelerator`` set, as
    Data-Juicer's ``_prepare_op_args`` does (a copy: the recipe's dict is not changed)."""
    out = dict(given or {})
    for k, v in fixed.items():
        out.setdefault(k, v)
    out["accelerator"] = accelerator
    return out


def build_op(name: str, args: dict) -> Any:
    from data_juicer.ops.registry import OPERATORS

    args = dict(args)
    args.pop("num_proc", None)  # the inner op runs inside this op's worker
    return OPERATORS.get(name)(**args)


def mllm_ask(mllm: Any, pairs: list[tuple]) -> list[str]:
    """``mllm_mapper``'s answer (decoded with the prompt, as Data-Juicer's op returns it) to each
    ``(PIL image, question)`` pair, all generated in batches."""
    if not pairs:
        return []
    from data_juicer.models.vision import load_vision_model, op_device

    model, proc = load_vision_model(mllm.hf_model, who=mllm.name, device=op_device(mllm),
                                    fallback_class="AutoModelForImageTextToText")
    jobs = []
    for img, text in pairs:
        conversation = [{"role": "user", "content": [{"type": "text", "text": text}, {"type": "image"}]}]
        jobs.append((img, proc.apply_chat_template(conversation, add_generation_prompt=True)))
    return mllm._generate(model, proc, jobs)


def assistant_part(answer: str) -> str:
    """What follows the last ``ASSISTANT:`` of a decoded answer, stripped (Data-Juicer's parsing)."""
    return answer.split("ASSISTANT:")[-1].strip()


def itm_scores(itm: Any, pairs: list[tuple]) -> list[float]:
    """``image_text_matching_filter``'s matching probability of each ``(PIL image, text)`` pair
    (its flips applied), all in batches."""
    if not pairs:
        return []
    from data_juicer.models.vision_scores import blip_itm_probs
    from data_juicer.ops.common.vision import flip

    model, proc = itm.load_model()
    return blip_itm_probs(model, proc, [(flip(img, itm.horizontal_flip, itm.vertical_flip), text)
                                        for img, text in pairs])


def character_rows(op: Any, samples: dict, tag: str) -> tuple[list, list[int], list, list[list]]:
    """The rows of a batch still to ask about ``main_character_list``: (metas, rows, first images,
    character names). A row without an image or characters gets ``[]`` under ``tag``; a row that
    has ``tag`` already is left alone."""
    from data_juicer.ops.common.vision_other import num_rows, row_images, row_metas

    n = num_rows(samples)
    metas = row_metas(samples, n)
    col = samples.get(op.image_key)
    chars = samples.get("main_character_list") or [None] * n
    rows, images, names = [], [], []
    for i in range(n):
        if tag in metas[i]:
            continue
        if col is None or not col[i] or not chars[i]:
            metas[i][tag] = []
            continue
        rows.append(i)
        images.append(row_images(op, samples, i)[col[i][0]])
        names.append(list(chars[i]))
    return metas, rows, images, names

