import io
import os

from pydantic import PositiveInt

from data_juicer.media.files import transform_file_name
from data_juicer.media.tokens import special_token
from data_juicer.media.video import (extract_frames_by_second, extract_frames_uniformly, extract_key_frames,
                                     iter_frames, open_video)
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars, MetaKeys


@OPERATORS.register_module("video_extract_frames_mapper")
class VideoExtractFramesMapper(Mapper):
    """Extracts frames of each video into ``frame_field`` (one list per video, in the order of
    ``video_key``): JPEG files (``output_format: path``) or JPEG bytes (``bytes``).

    ``all_keyframes``: every key frame; ``all_frames``: every frame; ``uniform``: ``frame_num``
    frames at Data-Juicer's timestamps (1: the middle; 2: first and last; more: evenly
    between, see ``media/video.uniform_frame_pts``). With ``duration`` > 0 the method works on
    each ``duration``-second segment (Data-Juicer decodes a re-encoded copy of each segment; the
    original frames are used here, see ``media/video.extract_frames_by_second``). With
    ``legacy_split_by_text_token`` only the videos the text's video tokens refer to are
    extracted (the others get ``[]``), as Data-Juicer. A sample that already has frames in
    ``frame_field`` is left as it is. Frames go to ``<frame_dir>/<stem>__dj_hash_#<content+
    params>#/frame_<i>.jpg`` (Data-Juicer: ``<frame_dir>/<stem>/``, which mixes up two videos
    with the same file name); existing frame files are reused. Difference: a sample without
    videos gets ``[]`` here (Data-Juicer's single-sample path fails on it).
    """

    modality = "video"
    requires = ("av", "pillow")
    uses = (InterVars.loaded_videos,)

    def __init__(self, frame_sampling_method: str = "all_keyframes", output_format: str = "path",
                 frame_num: PositiveInt = 3, duration: float = 0, frame_dir: str = None, frame_key: str = None,
                 frame_field: str = MetaKeys.video_frames, legacy_split_by_text_token: bool = True,
                 video_backend: str = "av", **kwargs):
        """
        :param frame_sampling_method: ``all_keyframes``, ``all_frames`` or ``uniform``
        :param output_format: ``path`` (JPEG files under ``frame_dir``) or ``bytes`` (JPEG bytes)
        :param frame_num: frames per video (or per segment) with ``uniform``
        :param duration: segment length in seconds; 0 works on the whole video
        :param frame_dir: folder of the frame files (required with ``path``)
        :param frame_key: deprecated name of ``frame_field``
        :param frame_field: field the frames go to
        :param legacy_split_by_text_token: extract only the videos referenced by video tokens
        :param video_backend: ``av`` or ``ffmpeg`` (accepted; frames are decoded with PyAV)
        """
        super().__init__(**kwargs)
        self.output_format = str(output_format).lower()
        if self.output_format not in ("path", "bytes"):
            raise ValueError(f"output_format must be 'path' or 'bytes', got {output_format!r}")
        if frame_sampling_method not in ("all_keyframes", "all_frames", "uniform"):
            raise ValueError(f"frame_sampling_method must be 'all_keyframes', 'all_frames' or 'uniform', "
                             f"got {frame_sampling_method!r}")
        if self.output_format == "path" and frame_dir is None:
            raise ValueError("frame_dir must be set when output_format is 'path'")
        if video_backend not in ("ffmpeg", "av"):
            raise ValueError(f"video_backend must be 'ffmpeg' or 'av', got {video_backend!r}")
        self.frame_sampling_method = frame_sampling_method
        self.frame_num = frame_num
        self.duration = duration
        self.frame_dir = frame_dir
        self.frame_field = frame_key or frame_field
        self.legacy_split_by_text_token = legacy_split_by_text_token
        self.video_backend = video_backend

    def extract(self, path):
        with open_video(path, who=self.name) as c:
            if self.duration:
                num = self.frame_num if self.frame_sampling_method == "uniform" else None
                if self.frame_sampling_method == "all_frames":
                    return [f.to_image() for f in iter_frames(c, path)]
                return extract_frames_by_second(c, self.duration, num)
            if self.frame_sampling_method == "all_keyframes":
                return extract_key_frames(c)
            if self.frame_sampling_method == "all_frames":
                return [f.to_image() for f in iter_frames(c, path)]
            return extract_frames_uniformly(c, self.frame_num)

    def _write(self, path):
        frames = self.extract(path)
        if self.output_format == "bytes":
            out = []
            for f in frames:
                buf = io.BytesIO()
                f.save(buf, format="jpeg")
                out.append(buf.getvalue())
            return out
        params = dict(frame_sampling_method=self.frame_sampling_method, frame_num=self.frame_num,
                      duration=self.duration)
        folder = transform_file_name(path, self.name, params, ext="", out_dir=self.frame_dir)
        os.makedirs(folder, exist_ok=True)
        paths = []
        for i, f in enumerate(frames):
            p = os.path.join(folder, f"frame_{i}.jpg")
            if not os.path.exists(p):
                tmp = os.path.join(folder, f".tmp-{os.getpid()}-frame_{i}.jpg")
                f.save(tmp, format="jpeg")
                os.replace(tmp, p)
            paths.append(p)
        return paths

    def _row_frames(self, text, videos):
        wanted = range(len(videos))
        if self.legacy_split_by_text_token:
            vtok, eoc = special_token("video"), special_token("eoc")
            wanted, offset = [], 0
            for chunk in (text or "").split(eoc):
                n = chunk.count(vtok)
                if n and chunk:
                    wanted.extend(range(offset, min(offset + n, len(videos))))
                    offset += n
        out = [[] for _ in videos]
        done = {}
        for idx in wanted:
            p = videos[idx]
            if p not in done:
                done[p] = self._write(p)
            out[idx] = done[p]
        return out

    def process_batched(self, samples):
        n = len(next(iter(samples.values()))) if samples else 0
        existing = samples.get(self.frame_field, [None] * n)
        videos_col = samples.get(self.video_key, [None] * n)
        texts = samples.get(self.text_key, [None] * n)
        samples[self.frame_field] = [
            existing[i] if existing[i] else (self._row_frames(texts[i], videos_col[i]) if videos_col[i] else [])
            for i in range(n)]
        return samples
