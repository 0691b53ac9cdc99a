"""The video fan-out mappers as ``lineage_stage`` expands: one child per clip or per frame.

Data-Juicer's ``video_split_*`` mappers put all the clips of a sample into ONE new sample, and
``video_extract_frames_mapper`` adds the frames to the sample itself; as a flat recipe step
neither gives rows that later ops can judge one clip (or frame) at a time and gather back. As
the ``expand`` of a ``lineage_stage`` they do::

    - lineage_stage:
        expand: {video_split_by_duration_mapper: {split_duration: 2}}
        child_ops:
          - video_duration_filter: {min_duration: 1.5}
        children_key: clips            # each sample gets its kept clips' paths, in order

- ``video_split_by_duration_mapper``, ``video_split_by_key_frame_mapper``,
  ``video_split_by_scene_mapper``: the mapper runs as it does in a recipe (same clips, same
  content-derived names; ``keep_original_sample`` is ignored: the parent is the sample itself);
  each clip becomes a child whose ``video_key`` (or the mapper's ``save_field``) is ``[clip]``,
  whose ``__dj__source_file__`` is ``[the video it came from]`` and whose text is one video token.
- ``video_extract_frames_mapper``: each extracted frame becomes a child whose ``image_key`` is
  ``[frame path]`` (``image_bytes_key`` with ``output_format: bytes``), whose
  ``__dj__source_file__`` is ``[its video]`` and whose text is one image token.

Children start with empty statistics. The value a parent's ``children_key`` gets for each kept
child (when ``child_fields`` is not given) is the clip or frame itself.
"""

from __future__ import annotations

from typing import Any

from data_juicer.utils.batch import iter_rows, rows_to_batch
from data_juicer.utils.constant import Fields

PARENT = "__dj__lineage_parent__"
CLIP_SPLITTERS = ("video_split_by_duration_mapper", "video_split_by_key_frame_mapper", "video_split_by_scene_mapper")
FRAMES = "video_extract_frames_mapper"
MEDIA_EXPANDS = CLIP_SPLITTERS + (FRAMES,)


def _base(row: dict, drop=()) -> dict:
    return {k: v for k, v in row.items() if k not in (Fields.context, PARENT, *drop)}


class ClipExpander:
    """A ``video_split_*`` mapper as an expander: one child per clip, batched across parents."""

    def __init__(self, op):
        from data_juicer.media.tokens import special_token

        op.keep_original_sample = False  # the parent stays the sample itself
        self.op = op
        self.field = op.save_field or op.video_key
        self.token = special_token("video")

    def child_value(self, child: dict) -> Any:
        clips = child.get(self.field) or [None]
        return clips[0]

    def __call__(self, parents: list[dict]) -> list:
        rows = [dict(r, **{PARENT: i}) for i, r in enumerate(parents)]
        groups: list[list[dict]] = [[] for _ in parents]
        for r in iter_rows(self.op.process_batched(rows_to_batch(rows))):
            i = r.get(PARENT)
            if i is None:
                continue
            clips, sources = r.get(self.field) or [], r.get(Fields.source_file) or []
            base = _base(r)
            for k, clip in enumerate(clips):
                child = dict(base)
                child[self.field] = [clip]
                child[Fields.source_file] = [sources[k]] if k < len(sources) else []
                child[self.op.text_key] = self.token
                child[Fields.stats] = {}
                groups[i].append(child)
        return groups


class FrameExpander:
    """``video_extract_frames_mapper`` as an expander: one child per frame, videos in order."""

    def __init__(self, op):
        from data_juicer.media.tokens import special_token

        self.op = op
        self.field = op.image_bytes_key if op.output_format == "bytes" else op.image_key
        self.token = special_token("image")

    def child_value(self, child: dict) -> Any:
        frames = child.get(self.field) or [None]
        return frames[0]

    def __call__(self, parents: list[dict]) -> list:
        batch = rows_to_batch([_base(r) for r in parents])
        out = list(iter_rows(self.op.process_batched(batch)))
        groups: list[list[dict]] = []
        for r in out:
            videos = r.get(self.op.video_key) or []
            base = _base(r, drop=(self.op.frame_field,))
            children = []
            for v, frames in enumerate(r.get(self.op.frame_field) or []):
                for frame in frames or []:
                    child = dict(base)
                    child[self.field] = [frame]
                    child[Fields.source_file] = [videos[v]] if v < len(videos) else []
                    child[self.op.text_key] = self.token
                    child[Fields.stats] = {}
                    children.append(child)
            groups.append(children)
        return groups


def media_expander(name: str, op):
    """The expander for one of ``MEDIA_EXPANDS`` (built op ``op``)."""
    if name == FRAMES:
        return FrameExpander(op)
    return ClipExpander(op)


__all__ = ["MEDIA_EXPANDS", "ClipExpander", "FrameExpander", "media_expander"]
