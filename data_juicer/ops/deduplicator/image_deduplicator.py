from data_juicer.ops.base import Deduplicator
from data_juicer.ops.common.exact_dedup import dedup_by_media_hash
from data_juicer.ops.common.image_hashes import METHODS, image_hash
from data_juicer.ops.common.media import load_image, load_row_media
from data_juicer.ops.deduplicator.document_deduplicator import DocumentDeduplicator
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, HashKeys, InterVars


@OPERATORS.register_module("image_deduplicator")
class ImageDeduplicator(Deduplicator):
    """Removes samples whose images are exact duplicates by perceptual hash.

    Each distinct image of a sample (``image_key``: paths; read from ``image_bytes_key`` when
    the bytes are there) gets a 64-bit perceptual hash (``method``, as ``imagededup`` computes
    it: ``phash``, ``dhash``, ``whash`` or ``ahash``); their hex strings, joined in order, go
    into ``__dj__imagehash``. Only the first sample of each hash is kept, in the original
    order; samples without images are always kept. With ``consider_text``, the MD5 of the
    text (``__dj__hash``, as ``document_deduplicator``) must match too, and samples without
    images are then deduplicated by their text alone. Same hashes and kept samples as
    Data-Juicer 1.6.1.
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("pillow",)

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        return ("pillow", "scipy") if params.get("method", "phash") == "phash" else ("pillow",)

    def __init__(self, method: str = "phash", consider_text: bool = False, **kwargs):
        """
        :param method: image hash: ``phash`` (perceptual, DCT), ``dhash`` (difference),
            ``whash`` (Haar wavelet) or ``ahash`` (average)
        :param consider_text: samples are duplicates only when their texts are equal too
        """
        super().__init__(**kwargs)
        if method not in METHODS:
            raise ValueError(f"{self.name}: unknown method '{method}'; use one of {', '.join(METHODS)}")
        if method == "phash":
            from data_juicer.models.loader import ensure_installed

            ensure_installed(("scipy",), self.name)
        self.method = method
        self.consider_text = consider_text
        self.text_dedup_op = DocumentDeduplicator(text_key=self.text_key) if consider_text else None

    def compute_hash(self, samples, context: bool = False):
        if self.consider_text:
            samples = self.text_dedup_op.compute_hash(samples)
        if HashKeys.imagehash in samples:
            return samples
        paths_col = samples.get(self.image_key)
        n = len(next(iter(samples.values()))) if samples else 0
        if paths_col is None:
            samples[HashKeys.imagehash] = [""] * n
            return samples
        contexts = samples.get(Fields.context)
        method, who = self.method, self.name
        out = []
        for i, paths in enumerate(paths_col):
            if not paths:
                out.append("")
                continue
            images = load_row_media(samples, i, paths, lambda p: load_image(p, who), bytes_key=self.image_bytes_key,
                                    context=contexts[i] if contexts is not None else None)
            out.append("".join(image_hash(img, method) for img in images.values()))
        samples[HashKeys.imagehash] = out
        return samples

    def process(self, dataset, show_num: int = 0):
        """Keep the first sample of each image hash; also return up to ``show_num`` duplicated
        hashes (most duplicated first), each with its first two samples, for the tracer."""
        return dedup_by_media_hash(dataset, HashKeys.imagehash, self.consider_text, show_num)
