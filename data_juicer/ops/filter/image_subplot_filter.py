from data_juicer.media.image import load_row_images, row_gray
from data_juicer.ops.base import Filter
from data_juicer.ops.common.media import check_any_or_all
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("image_subplot_filter")
class ImageSubplotFilter(Filter):
    """Drops samples whose images look like grids of subplots (multi-panel figures).

    Each image is blurred (Gaussian 5x5), edge-detected (Canny), and its straight segments are
    found with the probabilistic Hough transform; segments within ``angle_tolerance`` degrees of
    horizontal or vertical are counted. A confidence in [0, 1] combines the line counts, the
    regularity of their spacing, a grid-density score and the consistency of their lengths, with
    Data-Juicer 1.6.1's weights. Stats per image: ``image_subplot_confidence``,
    ``horizontal_peak_count``, ``vertical_peak_count``; ``subplot_detected`` is whether the best
    confidence reaches ``min_confidence``. An image is a subplot figure when its confidence reaches
    ``min_confidence`` and it has at least ``min_horizontal_lines`` / ``min_vertical_lines``
    lines; with ``any`` a sample is dropped when any image is one, with ``all`` only when all are.
    As in Data-Juicer, an image the detector fails on scores 0 (an unreadable file is an error).
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("opencv-python-headless", "pillow")

    def __init__(self, min_horizontal_lines: int = 3, min_vertical_lines: int = 3, min_confidence: float = 0.5,
                 any_or_all: str = "any", canny_threshold1: int = 70, canny_threshold2: int = 190,
                 hough_threshold: int = 110, min_line_length: int = 110, max_line_gap: int = 18,
                 angle_tolerance: float = 4.0, **kwargs):
        """
        :param min_horizontal_lines: horizontal lines an image needs to count as a subplot figure
        :param min_vertical_lines: vertical lines an image needs to count as a subplot figure
        :param min_confidence: confidence from which an image counts as a subplot figure
        :param any_or_all: drop a sample when ``any`` of its images is a subplot figure, or only when ``all`` are
        :param canny_threshold1: first (low) threshold of the Canny edge detector
        :param canny_threshold2: second (high) threshold of the Canny edge detector
        :param hough_threshold: accumulator threshold of the Hough transform
        :param min_line_length: shortest segment the Hough transform reports, in pixels
        :param max_line_gap: largest gap joined into one segment, in pixels
        :param angle_tolerance: degrees from horizontal/vertical a segment may lean and still count
        """
        super().__init__(**kwargs)
        self.any = check_any_or_all(any_or_all, self.name)
        self.min_horizontal_lines = min_horizontal_lines
        self.min_vertical_lines = min_vertical_lines
        self.min_confidence = min_confidence
        self.canny_threshold1 = canny_threshold1
        self.canny_threshold2 = canny_threshold2
        self.hough_threshold = hough_threshold
        self.min_line_length = min_line_length
        self.max_line_gap = max_line_gap
        self.angle_tolerance = angle_tolerance

    def compute_stats_batched(self, samples, context=False):
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.image_subplot_confidence in stat:
                continue
            paths = (samples[self.image_key][i] if self.image_key in samples else None) or []
            images = load_row_images(self, samples, i) if paths else {}
            scores = []
            for p in paths:
                try:
                    scores.append(self.detect(images[p], row_gray(samples, i, p, images[p])))
                except Exception:  # Data-Juicer scores an image the detector fails on as 0
                    scores.append((0.0, 0, 0))
            stat[StatsKeys.image_subplot_confidence] = [s[0] for s in scores]
            stat[StatsKeys.horizontal_peak_count] = [s[1] for s in scores]
            stat[StatsKeys.vertical_peak_count] = [s[2] for s in scores]
            stat[StatsKeys.subplot_detected] = bool(scores) and max(s[0] for s in scores) >= self.min_confidence
        return samples

    def process_batched(self, samples):
        keep = []
        for s in samples[Fields.stats]:
            conf = s[StatsKeys.image_subplot_confidence]
            if not len(conf):
                keep.append(True)
                continue
            hs, vs = s[StatsKeys.horizontal_peak_count], s[StatsKeys.vertical_peak_count]
            flags = [c >= self.min_confidence and hs[j] >= self.min_horizontal_lines
                     and vs[j] >= self.min_vertical_lines for j, c in enumerate(conf)]
            keep.append(not (any(flags) if self.any else all(flags)))
        return keep

    # -- detection -------------------------------------------------------------------------
    def detect(self, image, gray=None) -> tuple[float, int, int]:
        """(confidence, horizontal line count, vertical line count) of one PIL image (``gray``: its
        ``media.image.to_gray``, when the caller has it)."""
        import cv2
        import numpy as np

        if gray is None:
            arr = np.asarray(image)
            gray = cv2.cvtColor(arr, cv2.COLOR_RGB2GRAY) if arr.ndim == 3 else arr
        height, width = gray.shape[:2]
        edges = cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 0), self.canny_threshold1, self.canny_threshold2)
        lines = cv2.HoughLinesP(edges, 1, np.pi / 180, self.hough_threshold, minLineLength=self.min_line_length,
                                maxLineGap=self.max_line_gap)
        if lines is None:
            return 0.0, 0, 0
        tol = self.angle_tolerance
        horizontal, vertical = [], []
        for seg in lines:
            x1, y1, x2, y2 = seg[0]
            angle = 90.0 if x2 - x1 == 0 else np.degrees(np.arctan2(y2 - y1, x2 - x1))
            if abs(angle) <= tol or abs(angle - 180) <= tol:
                horizontal.append(seg[0])
            elif abs(angle - 90) <= tol or abs(angle + 90) <= tol:
                vertical.append(seg[0])
        return float(self._confidence(horizontal, vertical, width, height)), len(horizontal), len(vertical)

    def _confidence(self, horizontal, vertical, width, height):
        if not horizontal or not vertical or width == 0 or height == 0:
            return 0.0
        h_count = min(len(horizontal) / self.min_horizontal_lines, 1.0)
        v_count = min(len(vertical) / self.min_vertical_lines, 1.0)
        h_reg = _spacing_regularity([(s[1] + s[3]) / 2 for s in horizontal], height)
        v_reg = _spacing_regularity([(s[0] + s[2]) / 2 for s in vertical], width)
        grid = _grid_density(horizontal, vertical, width, height)
        h_len = _length_consistency([abs(s[2] - s[0]) for s in horizontal], width)
        v_len = _length_consistency([abs(s[3] - s[1]) for s in vertical], height)
        score = (h_count * 0.2 + v_count * 0.2 + h_reg * 0.15 + v_reg * 0.15 + grid * 0.2
                 + h_len * 0.05 + v_len * 0.05)
        return min(score, 1.0)


def _spacing_regularity(positions, dimension) -> float:
    """1 - coefficient of variation of the gaps between sorted line positions, halved when the mean gap
    is under 5% of the dimension."""
    import numpy as np

    if len(positions) < 2:
        return 0.0
    gaps = np.diff(sorted(positions))
    mean = np.mean(gaps)
    if mean == 0:
        return 0.0
    score = max(0, 1 - np.std(gaps) / mean)
    return score * 0.5 if mean < dimension * 0.05 else score


def _grid_density(horizontal, vertical, width, height) -> float:
    if len(horizontal) < 2 or len(vertical) < 2:
        return 0.0
    return min(len(horizontal) * len(vertical) / (width * height) * 10000 / 10.0, 1.0)


def _length_consistency(lengths, dimension) -> float:
    """1 - coefficient of variation of the segment lengths, halved when the mean is under 30% of the dimension."""
    import numpy as np

    if len(lengths) < 2:
        return 0.0
    mean = np.mean(lengths)
    if mean == 0:
        return 0.0
    score = max(0, 1 - np.std(lengths) / mean)
    return score * 0.5 if mean < dimension * 0.3 else score
