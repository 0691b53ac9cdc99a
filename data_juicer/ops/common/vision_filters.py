"""The base of the filters that score each image of a sample with a model (aesthetics, NSFW,
watermark): the images of a whole batch go through the model together, one score per distinct
image of a sample, then 'any'/'all' of a sample's scores decide.
"""

from __future__ import annotations

from typing import ClassVar

from data_juicer.ops.base import Filter
from data_juicer.ops.common.vision import ANY_OR_ALL, check_choice, keep_by, load_images, split_by_counts
from data_juicer.utils.constant import Fields, InterVars


class ImageModelFilter(Filter):
    """Scores every image with ``score_images`` (a batch at a time) into ``stat_key``."""

    _accelerator = "cuda"
    modality = "image"
    requires = ("torch", "transformers", "pillow")
    uses_model = True
    uses = (InterVars.loaded_images,)  # a fused pass decodes each image once for all these ops
    stat_key: ClassVar[str] = ""
    default_memory: ClassVar[str] = "1GB"

    def setup(self, any_or_all: str, kwargs: dict) -> dict:
        check_choice(any_or_all, ANY_OR_ALL, "Keep strategy", self._name or type(self).__name__)
        self.any = any_or_all == "any"
        if not kwargs.get("memory") and not kwargs.get("mem_required"):
            kwargs["memory"] = self.default_memory  # Data-Juicer's default need per worker
        return kwargs

    def score_images(self, images: list) -> list[float]:
        raise NotImplementedError

    def bounds(self) -> tuple:
        return self.min_score, self.max_score

    def compute_stats_batched(self, samples, context=False):
        stats = samples[Fields.stats]
        key = self.stat_key
        col = samples.get(self.image_key)
        rows, counts, flat = [], [], []
        for i, s in enumerate(stats):
            if key in s:
                continue
            if col is None or not col[i]:
                s[key] = []
                continue
            imgs = list(load_images(self, samples, i).values())
            rows.append(i)
            counts.append(len(imgs))
            flat.extend(imgs)
        if flat:
            scores = self.score_images(flat)
            for i, vals in zip(rows, split_by_counts(scores, counts)):
                stats[i][key] = vals
        return samples

    def process_batched(self, samples):
        lo, hi = self.bounds()
        return [keep_by(self, s[self.stat_key], lo, hi, self.any) for s in samples[Fields.stats]]


def video_frames(op, samples: dict, i: int, frame_field=None) -> list[list]:
    """The sampled frames (PIL images) of each distinct video of row ``i``, in order.

    With ``frame_field`` present in the batch, the row's frames are image files already
    extracted, one list per video (``frame_num`` of them taken evenly, as Data-Juicer does).
    """
    if frame_field and frame_field in samples and samples[frame_field][i] is not None:
        import numpy as np

        from data_juicer.ops.common.vision import load_image_file

        out = []
        for paths in samples[frame_field][i]:
            if op.frame_num < len(paths):
                paths = [paths[k] for k in np.linspace(0, len(paths) - 1, op.frame_num, dtype=int)]
            out.append([load_image_file(p, op.name) for p in paths])
        return out
    from data_juicer.media.video import load_row_video_frames

    return list(load_row_video_frames(op, samples, i, op.frame_sampling_method, op.frame_num).values())


class VideoFrameModelFilter(ImageModelFilter):
    """Scores the sampled frames of each video with ``score_images`` (all frames of a batch
    together), reduces them per video (``reduce_mode``; a video without frames scores 0.0)."""

    modality = "video"
    requires = ("torch", "transformers", "pillow", "av")
    uses = (InterVars.loaded_videos, InterVars.sampled_frames)
    frame_field = None

    def setup_video(self, frame_sampling_method, frame_num, reduce_mode, any_or_all, kwargs) -> dict:
        from data_juicer.ops.common.vision import FRAME_SAMPLING, REDUCE_MODES

        who = self._name or type(self).__name__
        check_choice(frame_sampling_method, FRAME_SAMPLING, "Frame sampling method", who)
        check_choice(reduce_mode, REDUCE_MODES, "Reduce mode", who)
        self.frame_sampling_method = frame_sampling_method
        self.frame_num = frame_num
        self.reduce_mode = reduce_mode
        return self.setup(any_or_all, kwargs)

    def compute_stats_batched(self, samples, context=False):
        from data_juicer.ops.common.vision import reduce_scores

        stats = samples[Fields.stats]
        key = self.stat_key
        col = samples.get(self.video_key)
        ff = self.frame_field
        rows, counts, flat = [], [], []  # counts: frames per video, per row
        for i, s in enumerate(stats):
            if key in s:
                continue
            has_frames = ff and ff in samples and samples[ff][i] is not None
            if not has_frames and (col is None or not col[i]):
                s[key] = []
                continue
            per_video = video_frames(self, samples, i, ff)
            rows.append(i)
            counts.append([len(f) for f in per_video])
            for f in per_video:
                flat.extend(f)
        scores = self.score_images(flat) if flat else []
        pos = 0
        for i, cs in zip(rows, counts):
            vals = []
            for n in cs:
                vals.append(reduce_scores(scores[pos:pos + n], self.reduce_mode) if n else 0.0)
                pos += n
            stats[i][key] = vals
        return samples


class TextMediaMatchFilter(Filter):
    """Base of the filters that score each text chunk against its images or video frames with a
    model (``image_text_matching_filter``, ``image_text_similarity_filter``,
    ``video_frames_text_similarity_filter``): one stat value per chunk under ``stat_key``, kept by
    ``any``/``all`` of the chunks being in ``[min_score, max_score]``."""

    _accelerator = "cuda"
    modality = "multimodal"
    uses_model = True
    stat_key: ClassVar[str] = ""
    model_attr: ClassVar[str] = ""  # the parameter naming the model (``hf_clip``, ``hf_blip``)

    def setup_match(self, model: str, trust_remote_code: bool, min_score: float, max_score: float,
                    horizontal_flip: bool, vertical_flip: bool, any_or_all: str, reduce_mode: str,
                    kwargs: dict) -> None:
        from data_juicer.models.vision import check_vision_model
        from data_juicer.ops.common.vision import REDUCE_MODES

        kwargs.setdefault("memory", kwargs.get("mem_required") or "1500MB")
        Filter.__init__(self, **kwargs)
        check_choice(reduce_mode, REDUCE_MODES, "Reduce mode", self.name)
        check_choice(any_or_all, ANY_OR_ALL, "Keep strategy", self.name)
        setattr(self, self.model_attr, model)
        self.trust_remote_code = trust_remote_code
        self.min_score = min_score
        self.max_score = max_score
        self.horizontal_flip = horizontal_flip
        self.vertical_flip = vertical_flip
        self.any = any_or_all == "any"
        self.reduce_mode = reduce_mode
        check_vision_model(model, who=self.name)

    def load_model(self):
        """``(model, processor)``, loaded once per worker."""
        from data_juicer.models.vision import load_vision_model, op_device

        return load_vision_model(getattr(self, self.model_attr), who=self.name, device=op_device(self),
                                 trust_remote_code=self.trust_remote_code)

    def process_batched(self, samples):
        return [keep_by(self, s[self.stat_key], self.min_score, self.max_score, self.any) for s in samples[Fields.stats]]
