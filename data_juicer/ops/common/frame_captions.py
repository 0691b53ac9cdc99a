"""What the frame-based video captioners share: the frames of a row's videos (decoded from the
videos or read from a frame field), batched image-to-text captioning of all the frames of a
batch, and building the output rows of a 1->many captioner."""

from __future__ import annotations

from typing import Optional, Sequence

from data_juicer.utils.constant import Fields


def pick_frame_paths(paths: Sequence[str], frame_num: int) -> list[str]:
    """``frame_num`` of ``paths`` evenly spread (``np.linspace`` indices, as Data-Juicer picks
    them from a frame field); all of them when there are no more than ``frame_num``."""
    paths = list(paths)
    if frame_num >= len(paths):
        return paths
    import numpy as np

    return [paths[k] for k in np.linspace(0, len(paths) - 1, frame_num, dtype=int)]


def row_video_frames(op, samples: dict, i: int, frame_field: Optional[str]) -> Optional[list[list]]:
    """The frames (RGB PIL images, flipped as the op says) of each video of row ``i``, in order;
    ``None`` when the row has neither frames (``frame_field``) nor videos.

    With ``frame_field`` set and present, video ``k``'s frames are the image files in
    ``row[frame_field][k]`` (``frame_num`` of them, evenly spread); otherwise the videos of
    ``video_key`` are decoded by ``op.frame_sampling_method`` through the media layer (so the
    frames are shared with the other ops of a fused pass).
    """
    from data_juicer.ops.common.vision import flip, load_image_file

    hf, vf = op.horizontal_flip, op.vertical_flip
    fcol = samples.get(frame_field) if frame_field else None
    if fcol is not None and not fcol[i]:
        fcol = None
    vcol = samples.get(op.video_key)
    if fcol is None and (vcol is None or not vcol[i]):
        return None
    if fcol is not None:
        return [[flip(load_image_file(p, op.name), hf, vf) for p in pick_frame_paths(paths, op.frame_num)]
                for paths in fcol[i]]
    from data_juicer.media.video import load_row_video_frames

    per_path = load_row_video_frames(op, samples, i, op.frame_sampling_method, op.frame_num)
    return [[flip(f, hf, vf) for f in per_path[p]] for p in vcol[i]]


def caption_frames(op, model_name: str, trust_remote_code: bool, frames: list, prompts: list,
                   rounds: int) -> list[list[str]]:
    """``rounds`` sampled captions (``[frame][round]``) of every frame, all frames of a batch
    captioned together in chunks (Data-Juicer runs one generation per video and round)."""
    from data_juicer.models.vision import chunk_size, load_vision_model, op_device
    from data_juicer.ops.common.captions import MAX_NEW_TOKENS, generate_captions

    if not frames:
        return []
    device = op_device(op)
    model, proc = load_vision_model(model_name, who=op.name, device=device, trust_remote_code=trust_remote_code,
                                    fallback_class="AutoModelForVision2Seq")
    if getattr(model.config, "model_type", "") == "blip-2":
        model.config.image_token_index = 50265  # as Data-Juicer sets it for BLIP-2 OPT
    use_prompts = prompts if any(p is not None for p in prompts) else None
    return generate_captions(model, proc, frames, use_prompts, rounds, chunk_size(device),
                             max_new_tokens=getattr(op, "max_new_tokens", MAX_NEW_TOKENS))


def build_rows(samples: dict, rows: list[tuple[int, Optional[dict]]]) -> dict:
    """A new batch: ``rows`` are ``(source row, None)`` for an original row kept as it is, or
    ``(source row, {field: value})`` for a new row copied from its source with those fields set.

    New rows get their own copy of ``__dj__stats__`` and an empty ``__dj__context__``; a field
    only new rows set is ``None`` in the others.
    """
    keys = list(samples)
    for _, new in rows:
        for k in new or ():
            if k not in keys:
                keys.append(k)
    out: dict = {k: [] for k in keys}
    for i, new in rows:
        for k in keys:
            if new is not None and k in new:
                v = new[k]
            elif k in samples:
                v = samples[k][i]
                if new is not None and k == Fields.stats and isinstance(v, dict):
                    v = dict(v)
                elif new is not None and k == Fields.context:
                    v = {}
            else:
                v = None
            out[k].append(v)
    return out
