"""The base of the filters that score each image of a sample with a model (aesthetics, NSFW,
watermark): the images of a whole batch go through the model together, one score per distinct
image of a sample, then 'any'/'all' of a sample's scores decide.
"""

from __future__ import annotations

from typing import ClassVar

from data_juicer.ops.base import Filter
from data_juicer.ops.common.vision import ANY_OR_ALL, check_choice, keep_by, load_images, split_by_counts
from data_juicer.utils.constant import Fields


class ImageModelFilter(Filter):
    """Scores every image with ``score_images`` (a batch at a time) into ``stat_key``."""

    _accelerator = "cuda"
    modality = "image"
    requires = ("torch", "transformers", "pillow")
    uses_model = True
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

    def compute_stats_batched(self, samples):
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
