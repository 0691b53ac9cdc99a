from data_juicer.ops.base import Deduplicator
from data_juicer.ops.common.ray_dedup import keep_first, shard_count
from data_juicer.ops.deduplicator.ray_document_deduplicator import check_backend, media_exempt
from data_juicer.ops.deduplicator.video_deduplicator import VideoDeduplicator
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys, InterVars


@OPERATORS.register_module("ray_video_deduplicator")
class RayVideoDeduplicator(Deduplicator):
    """Removes samples whose videos are exact duplicates, on Ray: hashes as ``video_deduplicator``
    (MD5 of the video packets, ``__dj__videohash``); hash sets sharded over Ray actors keep, for
    each hash, the sample that comes first in the input; samples without videos are kept. The
    kept samples are ``video_deduplicator``'s; on the default executor it runs as that op.
    """

    modality = "video"
    uses = (InterVars.loaded_videos,)
    requires = ("av",)
    exec_modes = ("default", "ray", "ray_partitioned")

    def __init__(self, backend: str = "ray_actor", redis_address: str = "redis://localhost:6379", **kwargs):
        """
        :param backend: where the hash sets live: ``ray_actor`` (Ray actors)
        :param redis_address: accepted for compatibility (the ``redis`` backend is not offered)
        """
        super().__init__(**kwargs)
        check_backend(self.name, backend)
        self.backend = backend
        self.redis_address = redis_address
        self.local = VideoDeduplicator(**kwargs)

    def compute_hash(self, samples, context: bool = False):
        return self.local.compute_hash(samples)

    def process(self, dataset, show_num: int = 0):
        return self.local.process(dataset, show_num)

    def run_ray(self, ds):
        """Keep the first sample of each video hash of a Ray ``Dataset`` (hashes already computed)."""
        return keep_first(ds, lambda t: t.column(HashKeys.videohash).to_pylist(), shard_count("auto"),
                          exempt_of=media_exempt(HashKeys.videohash))
