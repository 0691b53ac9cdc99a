from data_juicer.media.image import load_row_images
from data_juicer.ops.base import Filter
from data_juicer.ops.common.faces import load_cascade, resolve_cascade, row_faces
from data_juicer.ops.common.media import check_any_or_all, keep_by_strategy
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, StatsKeys


@OPERATORS.register_module("image_face_count_filter")
class ImageFaceCountFilter(Filter):
    """Keeps samples whose images hold between ``min_face_count`` and ``max_face_count`` faces
    (stat ``face_counts``, one per image in order), found with an OpenCV Haar cascade
    (``cv_classifier``; default OpenCV's bundled ``haarcascade_frontalface_alt.xml``) with
    Data-Juicer's detection settings (scaleFactor 1.1, minNeighbors 3). ``any_or_all`` decides
    over several images; a sample without images is kept. The cascade is loaded once per
    worker process / Ray actor; the grey image is shared with the other ops of the pass (e.g.
``image_subplot_filter``), and the filter runs only on the rows earlier filters kept. Needs ``opencv-python-headless<5`` (OpenCV 5 dropped cascades).
    Data-Juicer also reads undeclared ``scaleFactor``/``minNeighbors``/``minSize``/``maxSize``
    keyword arguments; here the defaults are fixed.
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("opencv-python-headless", "pillow")

    def __init__(self, cv_classifier: str = "", min_face_count: int = 1, max_face_count: int = 1,
                 any_or_all: str = "any", **kwargs):
        """
        :param cv_classifier: path (or bundled file name) of the OpenCV Haar cascade; empty for
            ``haarcascade_frontalface_alt.xml``
        :param min_face_count: fewest faces an image may hold
        :param max_face_count: most faces an image may hold
        :param any_or_all: keep a sample when ``any`` of its images is in range, or only when ``all`` are
        """
        super().__init__(**kwargs)
        self.cv_classifier = resolve_cascade(cv_classifier, self.name)
        load_cascade(self.cv_classifier, self.name)  # a bad file fails when the op is built
        self.min_face_count, self.max_face_count = min_face_count, max_face_count
        self.any = check_any_or_all(any_or_all, self.name)

    def compute_stats_batched(self, samples, context=False):
        cascade = None
        for i, stat in enumerate(samples[Fields.stats]):
            if StatsKeys.face_counts in stat:
                continue
            paths = samples[self.image_key][i] if self.image_key in samples else None
            if not paths:
                stat[StatsKeys.face_counts] = []
                continue
            cascade = cascade or load_cascade(self.cv_classifier, self.name)
            images = load_row_images(self, samples, i)
            counts = {p: len(row_faces(samples, i, p, img, self.cv_classifier, cascade))
                      for p, img in images.items()}
            stat[StatsKeys.face_counts] = [counts[p] for p in paths]
        return samples

    def process_batched(self, samples):
        return [keep_by_strategy((self.get_keep_boolean(c, self.min_face_count, self.max_face_count)
                                  for c in s[StatsKeys.face_counts]), self.any)
                for s in samples[Fields.stats]]
