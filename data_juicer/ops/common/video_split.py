"""What the video_split_* mappers share: Data-Juicer's one-split-sample-per-parent layout.

For each sample with videos, Data-Juicer 1.6.1 builds ONE new sample holding all the clips of
all its videos (not one sample per clip): its ``videos`` (or ``save_field``) is the flat list
of clips, ``__dj__source_file__`` the parent video of each clip, and its text the sample's
chunks with each ``<__dj__video>`` repeated once per clip of that video (every chunk closed by
``<|__dj__eoc|>``; with ``legacy_split_by_text_token`` only the videos referenced by tokens are
split). The parent is kept before it when ``keep_original_sample``; a sample without videos
leaves only its parent (if kept). Output names are content-derived
(``files.transform_file_name`` + ``_<k>``), so a rerun writes the same paths.
"""

from __future__ import annotations

import copy
import re

from data_juicer.media.files import transform_file_name
from data_juicer.media.tokens import special_token
from data_juicer.ops.base import Mapper
from data_juicer.utils.batch import iter_rows, rows_to_batch
from data_juicer.utils.constant import Fields


def add_suffix(path: str, suffix: str) -> str:
    """``a/b.mp4`` + ``_0`` -> ``a/b_0.mp4`` (Data-Juicer's ``add_suffix_to_filename``)."""
    stem, ext = path.rsplit(".", 1) if "." in path.rsplit("/", 1)[-1] else (path, None)
    return f"{stem}{suffix}.{ext}" if ext is not None else f"{stem}{suffix}"


class VideoSplitMapper(Mapper):
    """Base of the video_split_* fan-out mappers: subclasses implement ``split_video``."""

    modality = "video"
    fan_out = True

    def __init__(self, keep_original_sample: bool = True, save_dir: str | None = None,
                 output_format: str = "path", save_field: str | None = None,
                 legacy_split_by_text_token: bool = True, **kwargs):
        super().__init__(**kwargs)
        if str(output_format).lower() not in ("path", "bytes"):
            raise ValueError(f"output_format must be 'path' or 'bytes', got {output_format!r}")
        self.keep_original_sample = keep_original_sample
        self.save_dir = save_dir
        self.output_format = str(output_format).lower()
        self.save_field = save_field
        self.legacy_split_by_text_token = legacy_split_by_text_token

    def name_params(self) -> dict:
        """The parameters the output names are derived from (besides the source's content)."""
        raise NotImplementedError

    def split_video(self, path: str, out_base: str) -> list[str]:
        """The clip paths written for ``path`` (``out_base`` + ``_<k>``), or ``[path]`` unsplit."""
        raise NotImplementedError

    def _clips(self, path: str, cache: dict) -> list[str]:
        if path not in cache:
            base = transform_file_name(path, self.name, self.name_params(), out_dir=self.save_dir)
            cache[path] = self.split_video(path, base)
        return cache[path]

    def _split_sample(self, sample: dict) -> list[dict]:
        videos = sample.get(self.video_key)
        if not videos:
            sample[Fields.source_file] = []
            return []
        if not sample.get(Fields.source_file):
            sample[Fields.source_file] = list(videos)
        child = copy.deepcopy({k: v for k, v in sample.items() if k != Fields.context})
        child[Fields.context] = {}
        child[self.text_key] = ""
        child[Fields.source_file] = []
        clips: list[str] = []
        cache: dict = {}
        if self.legacy_split_by_text_token:
            vtok, eoc = special_token("video"), special_token("eoc")
            offset = 0
            for chunk in (sample.get(self.text_key) or "").split(eoc):
                if not chunk.strip():
                    continue
                n = chunk.count(vtok)
                holders = []
                for idx in range(offset, offset + n):
                    new = self._clips(videos[idx], cache)
                    child[Fields.source_file].extend([videos[idx]] * len(new))
                    clips.extend(new)
                    holders.append(vtok * len(new))
                it = iter(holders)
                chunk = re.sub(re.escape(vtok), lambda m: next(it, m.group(0)), chunk)
                child[self.text_key] += f"{chunk}{eoc}"
                offset += n
        else:
            for path in videos:
                new = self._clips(path, cache)
                child[Fields.source_file].extend([path] * len(new))
                clips.extend(new)
        if self.output_format == "bytes":
            out = []
            for c in clips:
                with open(c, "rb") as f:
                    out.append(f.read())
        else:
            out = clips
        child[self.save_field or self.video_key] = out
        return [child]

    def process_batched(self, samples):
        rows = []
        for row in iter_rows(samples):
            children = self._split_sample(row)
            if self.keep_original_sample:
                rows.append(row)
            rows.extend(children)
        keys = list(samples)
        for extra in (Fields.source_file, self.save_field or self.video_key):
            if extra not in keys and any(extra in r for r in rows):
                keys.append(extra)
        for r in rows:
            for k in keys:
                r.setdefault(k, None)
        return rows_to_batch(rows, keys=keys) if rows else {k: [] for k in keys}
