import hashlib

from data_juicer.ops.base import Deduplicator
from data_juicer.ops.common.exact_dedup import dedup_by_media_hash
from data_juicer.ops.common.media import load_row_media, open_video
from data_juicer.ops.deduplicator.document_deduplicator import DocumentDeduplicator
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, HashKeys, InterVars


def video_packets_md5(containers) -> str:
    """MD5 over the packets of every video stream of each container, in demux order."""
    md5 = hashlib.md5()
    for container in containers:
        for packet in container.demux(container.streams.video):
            md5.update(packet)
    return md5.hexdigest()


@OPERATORS.register_module("video_deduplicator")
class VideoDeduplicator(Deduplicator):
    """Removes samples whose videos are exact duplicates.

    The encoded packets of all video streams of a sample's distinct videos (``video_key``:
    paths), in demux order, go through one MD5 whose hex digest goes into
    ``__dj__videohash``; audio and other streams are ignored, so a copy with another audio
    track or container metadata still counts as a duplicate, while a re-encoded copy does
    not. Only the first sample of each hash is kept, in the original order; samples without
    videos are always kept. With ``consider_text``, the MD5 of the text (``__dj__hash``, as
    ``document_deduplicator``) must match too, and samples without videos are then
    deduplicated by their text alone. Same hashes and kept samples as Data-Juicer 1.6.1.
    """

    modality = "video"
    uses = (InterVars.loaded_videos,)
    requires = ("av",)

    def __init__(self, consider_text: bool = False, **kwargs):
        """
        :param consider_text: samples are duplicates only when their texts are equal too
        """
        super().__init__(**kwargs)
        self.consider_text = consider_text
        self.text_dedup_op = DocumentDeduplicator(text_key=self.text_key) if consider_text else None

    def compute_hash(self, samples, context: bool = False):
        if self.consider_text:
            samples = self.text_dedup_op.compute_hash(samples)
        if HashKeys.videohash in samples:
            return samples
        paths_col = samples.get(self.video_key)
        n = len(next(iter(samples.values()))) if samples else 0
        if paths_col is None:
            samples[HashKeys.videohash] = [""] * n
            return samples
        contexts = samples.get(Fields.context)
        who = self.name
        out = []
        for i, paths in enumerate(paths_col):
            if not paths:
                out.append("")
                continue
            # containers are read to the end here, so they are not shared with later ops
            videos = load_row_media(samples, i, paths, lambda p: open_video(p, who),
                                    context=contexts[i] if contexts is not None else None, store=False)
            try:
                out.append(video_packets_md5(videos.values()))
            finally:
                for container in videos.values():
                    container.close()
        samples[HashKeys.videohash] = out
        return samples

    def process(self, dataset, show_num: int = 0):
        """Keep the first sample of each video hash; also return up to ``show_num`` duplicated
        hashes (most duplicated first), each with its first two samples, for the tracer."""
        return dedup_by_media_hash(dataset, HashKeys.videohash, self.consider_text, show_num)
