import numpy as np

from data_juicer.media.video import cut_video, cut_video_reencode, video_info
from data_juicer.ops.common.video_split import VideoSplitMapper, add_suffix
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars


@OPERATORS.register_module("video_split_by_duration_mapper")
class VideoSplitByDurationMapper(VideoSplitMapper):
    """Cuts each video into ``split_duration``-second clips starting every ``split_duration -
    overlap_duration`` seconds; all clips of a sample go into ONE new sample (see
    ``ops/common/video_split.py`` for Data-Juicer's layout of that sample and its text).

    A video no longer than ``split_duration`` is not cut (the new sample points at it); the
    last clip (to the end of the video) is dropped when shorter than
    ``min_last_split_duration``. With the ``ffmpeg`` backend a clip is Data-Juicer's stream
    copy (``ffmpeg -ss <start> -i <video> -t <len> -c copy -f mp4 <ffmpeg_extra_args>``, so it
    starts at the key frame at or before ``start``); with ``av`` it is re-encoded as
    Data-Juicer's ``av`` backend does (frames with start <= t <= end). Same clip count,
    durations and frame counts as Data-Juicer 1.6.1. Clips are named
    ``<stem>__dj_hash_#<content+params>#_<k>.mp4`` in ``save_dir`` (default: beside the source,
    under ``__dj__produced_data__``); Data-Juicer's names carry the process id and time, so
    they differ on every run, ours do not. A missing or unreadable video fails its sample
    (error ledger), not the run.
    """

    requires = ("av",)
    uses = (InterVars.loaded_videos,)

    def __init__(self, split_duration: float = 10, overlap_duration: float = 0, min_last_split_duration: float = 0,
                 keep_original_sample: bool = True, save_dir: str = None, video_backend: str = "ffmpeg",
                 ffmpeg_extra_args: str = "", output_format: str = "path", save_field: str = None,
                 legacy_split_by_text_token: bool = True, **kwargs):
        """
        :param split_duration: length of each clip, in seconds
        :param overlap_duration: seconds each clip shares with the previous one (0 <= overlap < split_duration)
        :param min_last_split_duration: drop the last clip when it is shorter than this, in seconds
        :param keep_original_sample: keep the original sample before its split sample
        :param save_dir: folder of the clips (default: ``__dj__produced_data__`` beside the source,
            or ``$DJ_PRODUCED_DATA_DIR/<op>``)
        :param video_backend: ``ffmpeg`` (stream copy) or ``av`` (re-encode), as in Data-Juicer
        :param ffmpeg_extra_args: extra ffmpeg output arguments (``ffmpeg`` backend)
        :param output_format: ``path`` (clip paths) or ``bytes`` (clip file contents)
        :param save_field: field for the clips (default: replace ``video_key``)
        :param legacy_split_by_text_token: split only the videos the text's video tokens refer to,
            chunk by chunk, and rewrite the text (Data-Juicer's default)
        """
        super().__init__(keep_original_sample=keep_original_sample, save_dir=save_dir, output_format=output_format,
                         save_field=save_field, legacy_split_by_text_token=legacy_split_by_text_token, **kwargs)
        if overlap_duration < 0 or overlap_duration >= split_duration:
            raise ValueError(f"overlap_duration must be >= 0 and < split_duration ({split_duration}), "
                             f"got {overlap_duration}")
        if video_backend not in ("ffmpeg", "av"):
            raise ValueError(f"video_backend must be 'ffmpeg' or 'av', got {video_backend!r}")
        self.split_duration = split_duration
        self.overlap_duration = overlap_duration
        self.min_last_split_duration = min_last_split_duration
        self.video_backend = video_backend
        self.ffmpeg_extra_args = ffmpeg_extra_args

    def name_params(self):
        return dict(split_duration=self.split_duration, overlap_duration=self.overlap_duration,
                    min_last_split_duration=self.min_last_split_duration, video_backend=self.video_backend,
                    ffmpeg_extra_args=self.ffmpeg_extra_args)

    def _cut(self, path, out, start, end):
        if self.video_backend == "ffmpeg":
            return cut_video(path, out, start, end, self.ffmpeg_extra_args)
        return cut_video_reencode(path, out, start, end)

    def split_video(self, path, out_base):
        duration = video_info(path)["duration"]
        if duration <= self.split_duration:
            return [path]
        clips = []
        for start in np.arange(0, duration, self.split_duration - self.overlap_duration).tolist():
            end = start + self.split_duration
            if end >= duration:
                if duration - start >= self.min_last_split_duration:
                    clips.append(self._cut(path, add_suffix(out_base, f"_{len(clips)}"), start, None))
                break
            clips.append(self._cut(path, add_suffix(out_base, f"_{len(clips)}"), start, end))
        return clips
