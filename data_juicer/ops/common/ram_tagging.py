"""What the RAM tagging ops share: tagging the images / sampled frames of a batch's rows in one
plug-in call and writing the tags to each row's meta field (see data_juicer/models/tagging.py)."""

from __future__ import annotations

from data_juicer.utils.constant import Fields


def tag_rows(op, samples: dict, media_of_row, field: str) -> dict:
    """For each row lacking ``field`` in its meta: ``media_of_row(i)`` gives the row's media as a
    list of image lists (one list per image or video; ``None`` when the row has none). Every
    image of the batch is tagged at once; each medium gets its tags (counted over its images,
    most frequent first). A row without media gets ``[[]]``, as Data-Juicer writes it."""
    from data_juicer.models.tagging import ordered_tags, tag_images
    from data_juicer.models.vision import op_device

    n = len(next(iter(samples.values()))) if samples else 0
    metas = samples.get(Fields.meta) or [None] * n
    metas = [dict(m) if isinstance(m, dict) else {} for m in metas]
    images, owners, media = [], [], {}
    for i in range(n):
        if field in metas[i]:
            continue
        per = media_of_row(i)
        if not per:
            metas[i][field] = [[]]
            continue
        media[i] = len(per)
        for k, imgs in enumerate(per):
            images += imgs
            owners += [(i, k)] * len(imgs)
    outs = tag_images(images, op.ram_path, op_device(op), who=op.name) if images else []
    raw: dict = {}
    for owner, o in zip(owners, outs):
        raw.setdefault(owner, []).append(o)
    for i, count in media.items():
        metas[i][field] = [ordered_tags(raw[(i, k)]) if (i, k) in raw else [] for k in range(count)]
    samples[Fields.meta] = metas
    return samples
