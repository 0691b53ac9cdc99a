import math
import os
import re
import shutil
import tempfile

from pydantic import NonNegativeFloat, NonNegativeInt

from data_juicer.media.files import transform_file_name
from data_juicer.media.tokens import special_token
from data_juicer.media.video import VideoError, check_video_path, open_video
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.video_split import add_suffix
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.batch import iter_rows, rows_to_batch
from data_juicer.utils.constant import Fields
from data_juicer.utils.lazy import require

# the extra keyword arguments Data-Juicer hands to each detector class
DETECTOR_KWARGS = {
    "ContentDetector": ("weights", "luma_only", "kernel_size"),
    "AdaptiveDetector": ("window_width", "min_content_val", "weights", "luma_only", "kernel_size",
                         "video_manager", "min_delta_hsv"),
    "ThresholdDetector": ("fade_bias", "add_final_scene", "method", "block_size"),
}


@OPERATORS.register_module("video_split_by_scene_mapper")
class VideoSplitBySceneMapper(Mapper):
    """Cuts each video at the scene changes PySceneDetect finds (``ContentDetector``,
    ``ThresholdDetector`` or ``AdaptiveDetector`` built with ``threshold`` and ``min_scene_len``
    and the detector's extra keyword arguments, detection with ``start_in_scene=True``), as
    Data-Juicer 1.6.1 does.

    As in Data-Juicer the sample is rewritten in place (no new sample): a video with more than
    one scene is replaced by its scene clips (written by ``scenedetect.split_video_ffmpeg``
    with ``ffmpeg_extra_args`` as ffmpeg's output arguments), a video with one scene stays as
    it is; the ``k``-th ``<__dj__video>`` token of the text is repeated once per clip of the
    ``k``-th video, and ``__dj__source_file__`` holds each clip's parent video. Clips go to
    ``save_field`` (default: replace ``video_key``) as paths or, with ``output_format='bytes'``,
    file contents.

    Clips are named ``<stem>__dj_hash_#<content+params>#_<NNN>.mp4`` (scene numbers from 1,
    at least 3 digits, as Data-Juicer's ``_$SCENE_NUMBER``) in ``save_dir`` (else
    ``$DJ_PRODUCED_DATA_DIR/<op>``, else ``__dj__produced_data__`` beside the source), so a rerun
    gives the same paths; they are written in a temporary folder and renamed into place.
    Differs from Data-Juicer on purpose: a missing or unreadable video raises an error naming
    it (the sample goes to the error ledger) where Data-Juicer logs it and leaves a path to a
    file it never wrote, with the video's tokens removed from the text.
    """

    modality = "video"
    requires = ("scenedetect", "opencv-python-headless", "av")

    def __init__(self, detector: str = "ContentDetector", threshold: NonNegativeFloat = 27.0,
                 min_scene_len: NonNegativeInt = 15, show_progress: bool = False, save_dir: str = None,
                 save_field: str = None, ffmpeg_extra_args: str = "-movflags frag_keyframe+empty_moov",
                 output_format: str = "path", **kwargs):
        """
        :param detector: PySceneDetect detector: ``ContentDetector``, ``ThresholdDetector`` or
            ``AdaptiveDetector`` (its extra arguments, e.g. ``luma_only``, may be given too)
        :param threshold: threshold passed to the detector
        :param min_scene_len: minimum length of a scene, in frames
        :param show_progress: show PySceneDetect's progress bars
        :param save_dir: folder of the clips (default: ``$DJ_PRODUCED_DATA_DIR/<op>`` or
            ``__dj__produced_data__`` beside the source)
        :param save_field: field for the clips (default: replace ``video_key``)
        :param ffmpeg_extra_args: ffmpeg output arguments used to write the clips
        :param output_format: ``path`` (clip paths) or ``bytes`` (clip file contents)
        """
        if detector not in DETECTOR_KWARGS:
            raise ValueError(f"Scene detector {detector} is not supported. Can only be one of "
                             f"{list(DETECTOR_KWARGS)}")
        self.detector_kwargs = {k: kwargs.pop(k) for k in DETECTOR_KWARGS[detector] if k in kwargs}
        super().__init__(**kwargs)
        if str(output_format).lower() not in ("path", "bytes"):
            raise ValueError(f"output_format '{output_format}' is not supported. Can only be one of "
                             f"['path', 'bytes']")
        self.detector = detector
        self.threshold = threshold
        self.min_scene_len = min_scene_len
        self.show_progress = show_progress
        self.save_dir = save_dir
        self.save_field = save_field
        self.ffmpeg_extra_args = ffmpeg_extra_args
        self.output_format = str(output_format).lower()

    def name_params(self) -> dict:
        return dict(detector=self.detector, threshold=self.threshold, min_scene_len=self.min_scene_len,
                    ffmpeg_extra_args=self.ffmpeg_extra_args, **self.detector_kwargs)

    def detect_scenes(self, path: str) -> list:
        """PySceneDetect's scene list (pairs of ``FrameTimecode``) for ``path``."""
        scenedetect = require("scenedetect", who=self.name)
        cls = getattr(scenedetect.detectors, self.detector)
        det = cls(self.threshold, self.min_scene_len, **self.detector_kwargs)
        try:
            return scenedetect.detect(path, det, show_progress=self.show_progress, start_in_scene=True)
        except Exception as e:
            raise VideoError(f"{self.name}: scene detection failed on video '{path}': {type(e).__name__}: "
                             f"{e}. The file is corrupt or not a video; re-encode or replace it", path) from e

    def split_video(self, path: str) -> list[str]:
        """The clip paths of ``path`` (``[path]`` when it holds one scene)."""
        path = check_video_path(path)
        with open_video(path, who=self.name):
            pass  # a clear error for a corrupt / truncated file before PySceneDetect sees it
        scenes = self.detect_scenes(path)
        if len(scenes) <= 1:
            return [path]
        base = transform_file_name(path, self.name, self.name_params(), out_dir=self.save_dir)
        fmt = f"%0{max(3, math.floor(math.log(len(scenes), 10)) + 1)}d"
        outs = [add_suffix(base, "_" + fmt % (i + 1)) for i in range(len(scenes))]
        if all(os.path.exists(o) for o in outs):
            return outs
        scenedetect = require("scenedetect", who=self.name)
        folder = os.path.dirname(base)
        os.makedirs(folder, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".tmp-scenes-", dir=folder)
        try:
            template = os.path.join(tmp, "clip_$SCENE_NUMBER.mp4")
            rc = scenedetect.split_video_ffmpeg(path, scenes, output_file_template=template,
                                                show_progress=self.show_progress,
                                                arg_override=self.ffmpeg_extra_args)
            written = [os.path.join(tmp, f"clip_{fmt % (i + 1)}.mp4") for i in range(len(scenes))]
            missing = [w for w in written if not os.path.isfile(w) or os.path.getsize(w) == 0]
            if rc != 0 or missing:
                raise VideoError(f"{self.name}: ffmpeg failed splitting video '{path}' into {len(scenes)} "
                                 f"scenes (exit {rc}); check ffmpeg_extra_args={self.ffmpeg_extra_args!r}", path)
            for w, o in zip(written, outs):
                os.replace(w, o)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return outs

    def _process_row(self, row: dict) -> dict:
        videos = row.get(self.video_key)
        if not videos:
            row[Fields.source_file] = []
            return row
        clips = {}
        for p in videos:
            if p not in clips:
                clips[p] = self.split_video(p)
        if row.get(self.text_key) is not None:
            vtok = special_token("video")
            counts = iter([len(clips[p]) for p in videos])
            row[self.text_key] = re.sub(re.escape(vtok), lambda m: vtok * next(counts, 1),
                                        row[self.text_key])
        row[Fields.source_file] = [p for p in videos for _ in clips[p]]
        out = [c for p in videos for c in clips[p]]
        if self.output_format == "bytes":
            data = []
            for c in out:
                with open(c, "rb") as f:
                    data.append(f.read())
            out = data
        row[self.save_field or self.video_key] = out
        return row

    def process_batched(self, samples):
        keys = list(samples)
        rows = [self._process_row(r) for r in iter_rows(samples)]
        for extra in (Fields.source_file, self.save_field or self.video_key):
            if extra not in keys:
                keys.append(extra)
        for r in rows:
            for k in keys:
                r.setdefault(k, None)
        return rows_to_batch(rows, keys=keys) if rows else {k: [] for k in keys}
