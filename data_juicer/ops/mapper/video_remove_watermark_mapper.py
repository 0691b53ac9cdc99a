import os
import re
from typing import List, Optional

from pydantic import PositiveInt

from data_juicer.media.files import transform_file_name
from data_juicer.media.video import check_video_path, extract_frames_uniformly, open_video
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.media import row_source_files
from data_juicer.ops.mapper.video_face_blur_mapper import process_each_frame
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars
from data_juicer.utils.lazy import require

_ROI = re.compile(r"^\s*[\[\(]?\s*(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)\s*,\s*(\d+(?:\.\d+)?)\s*,"
                  r"\s*(\d+(?:\.\d+)?)\s*[\]\)]?\s*$")


def parse_roi(roi_string, roi_type: str = "pixel"):
    """``(x1, y1, x2, y2)`` from ``"x1, y1, x2, y2"`` (optionally in ``()`` or ``[]``): ints for
    ``pixel``, floats capped at 1 for ``ratio``; None when the string is not four non-negative
    numbers (as Data-Juicer's ``parse_string_to_roi``)."""
    if not roi_string or not isinstance(roi_string, str):
        return None
    m = _ROI.match(roi_string)
    if not m:
        return None
    if roi_type == "pixel":
        return tuple(int(float(v)) if "." in v else int(v) for v in m.groups())
    return tuple(min(1.0, float(v)) for v in m.groups())


@OPERATORS.register_module("video_remove_watermark_mapper")
class VideoRemoveWatermarkMapper(Mapper):
    """Removes a static watermark from given regions of each video, as Data-Juicer 1.6.1 does:
    ``frame_num`` frames are sampled uniformly (Data-Juicer's frame indices), a watermark mask
    is found inside the ROIs, dilated with a 5x5 kernel, and every frame is inpainted over it
    (``cv2.inpaint``, radius 3, Navier-Stokes) and re-encoded (same codec, base rate, pixel
    format and size).

    Detection: ``pixel_value`` Otsu-thresholds each ROI of each sampled frame (inverted when
    most of its top row and left column are set, the watermark being assumed inside the box)
    and keeps the pixels set in at least ``min_frame_threshold`` frames; ``pixel_diversity``
    Otsu-thresholds the per-pixel standard deviation across the sampled frames and keeps the
    pixels that vary least. ROIs are ``roi_strings`` or, with ``roi_key``, the sample's field
    (a string or list of strings; unparsable ones are skipped), in pixels or ratios of the
    frame size (``roi_type``).

    New files go to ``save_dir`` (else ``$DJ_PRODUCED_DATA_DIR/<op>``, else
    ``__dj__produced_data__`` beside the source), named from the source's content, the
    parameters and (with ``roi_key``) the sample's ROIs, so a rerun reuses them; written under
    a temporary name renamed on success; ``__dj__source_file__`` keeps the original paths.
    Differs from Data-Juicer on purpose: with ``roi_key`` and ``roi_type='ratio'`` the sample's
    ROIs are used (Data-Juicer then falls back to ``roi_strings``, which it does not parse when
    ``roi_key`` is set, so it finds no ROI); the audio track is copied (Data-Juicer drops its
    packets); a missing or corrupt video raises an error naming it.
    """

    modality = "video"
    uses = (InterVars.loaded_videos,)
    requires = ("opencv-python-headless", "av")

    def __init__(self, roi_strings: List[str] = ["0,0,0.1,0.1"], roi_type: str = "ratio",
                 roi_key: Optional[str] = None, frame_num: PositiveInt = 10, min_frame_threshold: PositiveInt = 7,
                 detection_method: str = "pixel_value", save_dir: str = None, **kwargs):
        """
        :param roi_strings: the regions the watermarks are in, each ``"x1, y1, x2, y2"``,
            ``"(x1, y1, x2, y2)"`` or ``"[x1, y1, x2, y2]"`` (top-left and bottom-right corners)
        :param roi_type: ``pixel`` (pixel coordinates) or ``ratio`` (fractions of width/height)
        :param roi_key: field of each sample holding its own ROI strings (replaces
            ``roi_strings``)
        :param frame_num: frames sampled uniformly to find the watermark
        :param min_frame_threshold: a pixel is a watermark pixel when found in at least this many
            sampled frames (``pixel_value`` only)
        :param detection_method: ``pixel_value`` or ``pixel_diversity`` (needs frame_num > 1)
        :param save_dir: folder the new videos are written to (default: beside the source, or
            ``$DJ_PRODUCED_DATA_DIR``)
        """
        super().__init__(**kwargs)
        if roi_type not in ("ratio", "pixel"):
            raise ValueError(f"roi_type [{roi_type}] is not supported. Can only be one of ['ratio', 'pixel']")
        if detection_method not in ("pixel_value", "pixel_diversity"):
            raise ValueError(f"detection_method [{detection_method}] is not supported. Can only be one of "
                             f"['pixel_value', 'pixel_diversity']")
        if detection_method == "pixel_diversity" and frame_num < 2:
            raise ValueError("frame_num must be greater than 1 in 'pixel_diversity' mode")
        self.rois = []
        if roi_key is None:
            for s in roi_strings:
                roi = parse_roi(s, roi_type)
                if roi is None:
                    raise ValueError(f"roi {s!r}: each roi in roi_strings must be four non-negative numbers in "
                                     f'the format of "x1, y1, x2, y2", "(x1, y1, x2, y2)", or "[x1, y1, x2, y2]"')
                self.rois.append(roi)
        self.roi_strings, self.roi_type, self.roi_key = list(roi_strings), roi_type, roi_key
        self.frame_num, self.min_frame_threshold = frame_num, min_frame_threshold
        self.detection_method, self.save_dir = detection_method, save_dir

    def sample_rois(self, samples, i) -> list:
        if self.roi_key is None:
            return self.rois
        vals = samples.get(self.roi_key, [None] * (i + 1))[i]
        if isinstance(vals, str):
            vals = [vals]
        return [r for r in (parse_roi(v, self.roi_type) for v in vals or []) if r is not None]

    def pixel_rois(self, rois, width, height) -> list:
        if self.roi_type != "ratio":
            return list(rois)
        return [(int(a * width), int(b * height), int(c * width), int(d * height)) for a, b, c, d in rois]

    def _mask_pixel_value(self, frames, rois):
        import numpy as np

        cv2 = require("opencv-python-headless", who=self.name)
        count = np.zeros(frames[0].shape[:2], dtype=np.int64)
        for frame in frames:
            mask = np.zeros(frame.shape[:2], dtype=np.uint8)
            for x1, y1, x2, y2 in rois:
                gray = cv2.cvtColor(np.ascontiguousarray(frame[y1:y2, x1:x2]), cv2.COLOR_BGR2GRAY)
                _, binary = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
                edge = int((binary[0] > 0).sum() + (binary[:, 0] > 0).sum())
                if edge * 2 > binary.shape[0] + binary.shape[1]:
                    binary = ~binary
                mask[y1:y2, x1:x2] |= binary
            count += mask == 255
        return np.where(count >= self.min_frame_threshold, 255, 0).astype(np.uint8)

    def _mask_pixel_diversity(self, frames, rois):
        import numpy as np

        cv2 = require("opencv-python-headless", who=self.name)
        mask = np.zeros(frames[0].shape[:2], dtype=np.uint8)
        stack = np.stack(frames, axis=0)
        for x1, y1, x2, y2 in rois:
            div = stack[:, y1:y2, x1:x2].std(axis=0).sum(-1)
            hi, lo = div.max(), div.min()
            scaled = 255 * (div - lo) / (hi - lo) if hi > lo else np.zeros_like(div)
            _, binary = cv2.threshold(scaled.astype(np.uint8), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
            mask[y1:y2, x1:x2] |= ~binary
        return mask

    def watermark_mask(self, path: str, rois):
        """The dilated uint8 mask (255 = watermark) of ``path`` for ``rois`` (as given)."""
        import numpy as np

        cv2 = require("opencv-python-headless", who=self.name)
        with open_video(path, who=self.name) as c:
            frames = extract_frames_uniformly(c, self.frame_num, convert=lambda f: f.to_ndarray(format="bgr24"))
            if not frames:
                vs = c.streams.video[0]
                width, height = vs.codec_context.width, vs.codec_context.height
                return np.zeros((height, width), np.uint8)
        height, width = frames[0].shape[:2]
        rois = self.pixel_rois(rois, width, height)
        if self.detection_method == "pixel_value":
            mask = self._mask_pixel_value(frames, rois)
        else:
            mask = self._mask_pixel_diversity(frames, rois)
        return cv2.dilate(mask, np.ones((5, 5), np.uint8))

    def clean_video(self, path: str, rois, out: str) -> str:
        av = require("av", who=self.name)
        cv2 = require("opencv-python-headless", who=self.name)
        mask = self.watermark_mask(path, rois)

        def clean(frame):
            img = cv2.inpaint(frame.to_ndarray(format="bgr24"), mask, 3, cv2.INPAINT_NS)
            return av.VideoFrame.from_ndarray(img, format="bgr24")

        process_each_frame(path, out, clean, who=self.name)
        return out

    def process_batched(self, samples):
        if self.video_key not in samples:
            return samples
        n = len(samples[self.video_key])
        sources = [None] * n
        for i in range(n):
            paths = samples[self.video_key][i] or []
            sources[i] = row_source_files(samples, i, paths)
            if not paths:
                continue
            rois = self.sample_rois(samples, i)
            params = dict(roi_strings=self.roi_strings, roi_type=self.roi_type, roi_key=self.roi_key,
                          frame_num=self.frame_num, min_frame_threshold=self.min_frame_threshold,
                          detection_method=self.detection_method, rois=[list(r) for r in rois])
            done = {}
            for p in paths:
                if p in done:
                    continue
                p = check_video_path(p)
                out = transform_file_name(p, self.name, params, out_dir=self.save_dir)
                done[p] = out if os.path.exists(out) else self.clean_video(p, rois, out)
            samples[self.video_key][i] = [done[p] for p in paths]
        samples[Fields.source_file] = sources
        return samples
