from typing import Literal, Union

from pydantic import PositiveInt

from data_juicer.models.vision_other import load_easyocr_detector, resolve_craft
from data_juicer.ops.base import Filter
from data_juicer.ops.common.vision_other import device_for
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, StatsKeys


def triangle_area(p1, p2, p3) -> float:
    """Area of the triangle with these (x, y) corners."""
    (x1, y1), (x2, y2), (x3, y3) = p1, p2, p3
    return 0.5 * abs(x1 * y2 + x2 * y3 + x3 * y1 - x2 * y1 - x3 * y2 - x1 * y3)


def text_area_ratio(horizontal: list, free: list, width: int, height: int) -> float:
    """The share of a ``width`` x ``height`` frame covered by EasyOCR's detected boxes: the
    ``[xmin, xmax, ymin, ymax]`` rectangles (inverted ones skipped) plus the 4-point free-form
    boxes (as two triangles), as Data-Juicer sums them (overlaps count twice)."""
    rect = sum((x1 - x0) * (y1 - y0) for x0, x1, y0, y1 in horizontal if x1 >= x0 and y1 >= y0)
    quad = sum(triangle_area(*pts[:3]) + triangle_area(*(list(pts[2:]) + [pts[0]])) for pts in free)
    return (rect + quad) / (width * height)


@OPERATORS.register_module("video_ocr_area_ratio_filter")
class VideoOcrAreaRatioFilter(Filter):
    """Keeps samples whose videos' detected-text area ratios (stat ``video_ocr_area_ratio``: per
    video, the mean over ``frame_sample_num`` uniformly sampled frames of the share of the frame
    covered by text boxes) are within [min_area_ratio, max_area_ratio].

    Text is detected with EasyOCR's CRAFT detector (``Reader.detect`` with its defaults; no
    recognition), as Data-Juicer does; the frames of one video go through it as one batch. The
    detector weights ``craft_mlt_25k.pth`` are looked up in the model folders and in EasyOCR's
    folder (``~/.EasyOCR/model``); nothing is downloaded (and, unlike EasyOCR, the file's MD5 is
    not checked, so a re-saved or fine-tuned CRAFT also loads).
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("easyocr", "torch", "av")
    uses_model = True

    def __init__(self, min_area_ratio: float = 0, max_area_ratio: float = 1.0, frame_sample_num: PositiveInt = 3,
                 languages_to_detect: Union[str, list[str]] = ["ch_sim", "en"],
                 any_or_all: Literal["any", "all"] = "any", **kwargs):
        """
        :param min_area_ratio: the smallest text area ratio kept
        :param max_area_ratio: the largest text area ratio kept
        :param frame_sample_num: frames sampled uniformly per video (first and last included when > 1)
        :param languages_to_detect: EasyOCR language codes (the detector is the same for all)
        :param any_or_all: keep a sample when any / all of its videos are in range
        """
        super().__init__(**kwargs)
        if any_or_all not in ("any", "all"):
            raise ValueError(f"{self.name}: Keep strategy [{any_or_all}] is not supported. "
                             "Can only be one of ['any', 'all'].")
        self.min_area_ratio = min_area_ratio
        self.max_area_ratio = max_area_ratio
        self.frame_sample_num = frame_sample_num
        self.languages_to_detect = [languages_to_detect] if isinstance(languages_to_detect, str) \
            else list(languages_to_detect)
        self.any = any_or_all == "any"
        resolve_craft(self.name)

    def _ratios(self, frames: list) -> float:
        import numpy as np

        reader = load_easyocr_detector(self.languages_to_detect, device_for(self), who=self.name)
        groups: dict = {}
        for k, f in enumerate(frames):
            groups.setdefault(f.size, []).append(k)
        ratios = [0.0] * len(frames)
        for idx in groups.values():
            arr = np.stack([np.asarray(frames[k]) for k in idx])
            # a batch skips reformat_input, which passes an RGB array through unchanged anyway
            horizontal, free = reader.detect(arr if len(idx) > 1 else arr[0], reformat=len(idx) == 1)
            for k, h, f in zip(idx, horizontal, free):
                ratios[k] = text_area_ratio(h, f, frames[k].width, frames[k].height)
        return float(np.mean(ratios))

    def compute_stats_batched(self, samples):
        from data_juicer.media.video import load_row_video_frames

        stats = samples[Fields.stats]
        vids = samples.get(self.video_key)
        for i, s in enumerate(stats):
            if StatsKeys.video_ocr_area_ratio in s:
                continue
            if vids is None or not vids[i]:
                s[StatsKeys.video_ocr_area_ratio] = []
                continue
            frames = load_row_video_frames(self, samples, i, "uniform", self.frame_sample_num)
            by_path = {p: self._ratios(fr) if fr else float("nan") for p, fr in frames.items()}
            s[StatsKeys.video_ocr_area_ratio] = [by_path[p] for p in vids[i]]
        return samples

    def process_batched(self, samples):
        out = []
        for s in samples[Fields.stats]:
            keep = [self.get_keep_boolean(v, self.min_area_ratio, self.max_area_ratio)
                    for v in s[StatsKeys.video_ocr_area_ratio]]
            out.append(True if not keep else (any(keep) if self.any else all(keep)))
        return out
