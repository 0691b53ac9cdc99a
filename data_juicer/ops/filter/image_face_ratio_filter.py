from data_juicer.media.image import load_row_images
from data_juicer.ops.base import Filter
from data_juicer.ops.common.faces import load_cascade, resolve_cascade, row_faces
from data_juicer.ops.common.media import check_any_or_all, keep_by_strategy
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("image_face_ratio_filter")
class ImageFaceRatioFilter(Filter):
    """Keeps samples whose images' largest face covers a share of the image area (stat
    ``face_ratios``, one per image in order; 0 without a face) within [min_ratio, max_ratio].
    Faces are found with an OpenCV Haar cascade (``cv_classifier``; default OpenCV's bundled
    ``haarcascade_frontalface_alt.xml``) with Data-Juicer's settings (scaleFactor 1.1,
    minNeighbors 3); boxes are clipped to the image. ``any_or_all`` decides over several images;
    a sample without images is kept. The cascade is loaded once per worker process / Ray actor;
    in one pass with ``image_face_count_filter`` on the same cascade the detections are shared (and
    the grey image with ``image_subplot_filter``). Needs ``opencv-python-headless<5``.
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("opencv-python-headless", "pillow")

    def __init__(self, cv_classifier: str = "", min_ratio: float = 0.0, max_ratio: float = 0.4,
                 any_or_all: str = "any", **kwargs):
        """
        :param cv_classifier: path (or bundled file name) of the OpenCV Haar cascade; empty for
            ``haarcascade_frontalface_alt.xml``
        :param min_ratio: smallest share of the image the largest face may cover
        :param max_ratio: largest share of the image the largest face may cover
        :param any_or_all: keep a sample when ``any`` of its images is in range, or only when ``all`` are
        """
        super().__init__(**kwargs)
        self.cv_classifier = resolve_cascade(cv_classifier, self.name)
        load_cascade(self.cv_classifier, self.name)  # a bad file fails when the op is built
        self.min_ratio, self.max_ratio = min_ratio, max_ratio
        self.any = check_any_or_all(any_or_all, self.name)

    def compute_stats_batched(self, samples, context=False):
        cascade = None
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.face_ratios in stat:
                continue
            paths = samples[self.image_key][i] if self.image_key in samples else None
            if not paths:
                stat[StatsKeys.face_ratios] = []
                continue
            cascade = cascade or load_cascade(self.cv_classifier, self.name)
            images = load_row_images(self, samples, i)
            ratios = {}
            for p, img in images.items():
                faces = row_faces(samples, i, p, img, self.cv_classifier, cascade)
                ratios[p] = max((w * h for _, _, w, h in faces), default=0.0) / (img.width * img.height)
            stat[StatsKeys.face_ratios] = [ratios[p] for p in paths]
        return samples

    def process_batched(self, samples):
        return [keep_by_strategy((self.get_keep_boolean(r, self.min_ratio, self.max_ratio)
                                  for r in s[StatsKeys.face_ratios]), self.any)
                for s in samples[Fields.stats]]
