"""What the 1->1 video-rewriting mappers share (resize, ffmpeg filters, blurs...)."""

from __future__ import annotations

from typing import Callable

from data_juicer.utils.constant import Fields


def rewrite_videos(op, samples: dict, rewrite: Callable[[str], str]) -> dict:
    """Replace each video path of each row by ``rewrite(path)`` (called once per distinct path of
    a row; it returns the path itself when the video needs no change).

    As Data-Juicer: a row without videos gets ``__dj__source_file__ = []``; otherwise the
    source files (when not already set) are the original paths. Difference: Data-Juicer
    aliases that list to the video list it then edits in place, so its source files end up
    naming the *new* files; here they keep naming the originals.
    """
    n = len(next(iter(samples.values()))) if samples else 0
    videos_col = samples.get(op.video_key, [None] * n)
    sources = samples.setdefault(Fields.source_file, [None] * n)
    new_col = []
    for i in range(n):
        videos = videos_col[i]
        if not videos:
            sources[i] = []
            new_col.append(videos)
            continue
        if not sources[i]:
            sources[i] = list(videos)
        done: dict = {}
        for p in videos:
            if p not in done:
                done[p] = rewrite(p)
        new_col.append([done[p] for p in videos])
    if op.video_key in samples:
        samples[op.video_key] = new_col
    return samples
