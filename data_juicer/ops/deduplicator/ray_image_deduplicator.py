from data_juicer.ops.base import Deduplicator
from data_juicer.ops.common.ray_dedup import keep_first, shard_count
from data_juicer.ops.deduplicator.image_deduplicator import ImageDeduplicator
from data_juicer.ops.deduplicator.ray_document_deduplicator import check_backend, media_exempt
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys, InterVars


@OPERATORS.register_module("ray_image_deduplicator")
class RayImageDeduplicator(Deduplicator):
    """Removes samples whose images are exact duplicates by perceptual hash, on Ray: hashes as
    ``image_deduplicator`` (``__dj__imagehash``); hash sets sharded over Ray actors keep, for each
    hash, the sample that comes first in the input; samples without images are kept. The kept
    samples are ``image_deduplicator``'s; on the default executor it runs as that op.
    """

    modality = "image"
    uses = (InterVars.loaded_images,)
    requires = ("pillow",)
    exec_modes = ("default", "ray", "ray_partitioned")

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        return ImageDeduplicator.required_packages(params)

    def __init__(self, backend: str = "ray_actor", redis_address: str = "redis://localhost:6379",
                 method: str = "phash", **kwargs):
        """
        :param backend: where the hash sets live: ``ray_actor`` (Ray actors)
        :param redis_address: accepted for compatibility (the ``redis`` backend is not offered)
        :param method: image hash: ``phash``, ``dhash``, ``whash`` or ``ahash``
        """
        super().__init__(**kwargs)
        check_backend(self.name, backend)
        self.backend = backend
        self.redis_address = redis_address
        self.method = method
        self.local = ImageDeduplicator(method=method, **kwargs)

    def compute_hash(self, samples, context: bool = False):
        return self.local.compute_hash(samples)

    def process(self, dataset, show_num: int = 0):
        return self.local.process(dataset, show_num)

    def run_ray(self, ds):
        """Keep the first sample of each image hash of a Ray ``Dataset`` (hashes already computed)."""
        return keep_first(ds, lambda t: t.column(HashKeys.imagehash).to_pylist(), shard_count("auto"),
                          exempt_of=media_exempt(HashKeys.imagehash))
