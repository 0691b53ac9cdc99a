import os

from pydantic import NonNegativeFloat

from data_juicer.media.files import atomic_write, transform_file_name
from data_juicer.media.video import VideoError, check_video_path, open_video
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.faces import DETECT_KWARGS, detect_faces, load_cascade, resolve_cascade
from data_juicer.ops.common.media import row_source_files
from data_juicer.ops.mapper.image_blur_mapper import make_blur
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars
from data_juicer.utils.lazy import require

# detectMultiScale arguments a recipe may give (Data-Juicer's _default_kwargs)
EXTRA_KWARGS = ("scaleFactor", "minNeighbors", "minSize", "maxSize")


@OPERATORS.register_module("video_face_blur_mapper")
class VideoFaceBlurMapper(Mapper):
    """Blurs the faces in every frame of each video (``mean``, ``box`` or ``gaussian`` kernel of
    ``radius`` over each face box the OpenCV Haar cascade ``cv_classifier`` finds; default
    OpenCV's ``haarcascade_frontalface_alt.xml`` with Data-Juicer's ``detectMultiScale``
    settings, overridable with ``scaleFactor``, ``minNeighbors``, ``minSize``, ``maxSize``) and
    re-encodes the video as Data-Juicer 1.6.1 does: same codec, frame rate (the stream's base
    rate), pixel format and size; frames without faces are re-encoded unchanged. A video in
    which no frame has a face is left as it is (no file written).

    New files go to ``save_dir`` (else ``$DJ_PRODUCED_DATA_DIR/video_face_blur_mapper``, else
    ``__dj__produced_data__`` beside the source), named from the source's content and the
    parameters (a rerun reuses them; Data-Juicer's names carry the process id and time) and
    written under a temporary name renamed on success. ``__dj__source_file__`` keeps the
    original paths. Differs from Data-Juicer on purpose: the audio track is copied into the new
    file (Data-Juicer adds an audio stream but never writes its packets), a video without faces
    leaves no stray output file, and a missing or corrupt video raises an error naming it (the
    sample goes to the error ledger).
    """

    modality = "video"
    uses = (InterVars.loaded_videos,)
    requires = ("opencv-python-headless", "pillow", "av")

    def __init__(self, cv_classifier: str = "", blur_type: str = "gaussian", radius: NonNegativeFloat = 2,
                 save_dir: str = None, **kwargs):
        """
        :param cv_classifier: path (or bundled file name) of the OpenCV Haar cascade; empty for
            ``haarcascade_frontalface_alt.xml``
        :param blur_type: blur kernel: ``mean``, ``box`` or ``gaussian``
        :param radius: radius of the blur kernel (>= 0)
        :param save_dir: folder the new videos are written to (default: beside the source, or
            ``$DJ_PRODUCED_DATA_DIR``)
        """
        extra = {k: kwargs.pop(k) for k in EXTRA_KWARGS if k in kwargs}
        super().__init__(**kwargs)
        self.blur = make_blur(blur_type, radius, self.name)
        self.cv_classifier = resolve_cascade(cv_classifier, self.name)
        load_cascade(self.cv_classifier, self.name)  # a bad file fails when the op is built
        self.blur_type, self.radius, self.save_dir = blur_type, radius, save_dir
        self.detect_kwargs = {**DETECT_KWARGS, "minSize": None, "maxSize": None, **extra}
        self.detect_kwargs = {k: v for k, v in self.detect_kwargs.items() if v is not None}
        self.params = {"cv_classifier": cv_classifier, "blur_type": blur_type, "radius": radius,
                       **{k: v for k, v in extra.items()}}

    def blur_image(self, image, cascade):
        """``(image with its faces blurred, number of faces)``."""
        dets = detect_faces(image, cascade, **self.detect_kwargs)
        if not dets:
            return image, 0
        for x, y, w, h in dets:
            box = (x, y, x + w, y + h)
            image.paste(image.crop(box).filter(self.blur), box)
        return image, len(dets)

    def blur_video(self, path: str, out_path: str, cascade) -> bool:
        """Write ``path`` with its faces blurred to ``out_path``; False (nothing written) when no
        frame has a face."""
        av = require("av", who=self.name)

        def blur_frame(frame):
            image, n = self.blur_image(frame.to_image(), cascade)
            return av.VideoFrame.from_image(image) if n else None

        return process_each_frame(path, out_path, blur_frame, who=self.name)

    def process_path(self, path: str, cascade) -> str:
        path = check_video_path(path)
        out = transform_file_name(path, self.name, self.params, out_dir=self.save_dir)
        if os.path.exists(out):
            return out
        return out if self.blur_video(path, out, cascade) else path

    def process_batched(self, samples):
        if self.video_key not in samples:
            return samples
        n = len(samples[self.video_key])
        sources = [None] * n
        cascade = None
        for i in range(n):
            paths = samples[self.video_key][i] or []
            sources[i] = row_source_files(samples, i, paths)
            if not paths:
                continue
            cascade = cascade or load_cascade(self.cv_classifier, self.name)
            done = {}
            for p in paths:
                if p not in done:
                    done[p] = self.process_path(p, cascade)
            samples[self.video_key][i] = [done[p] for p in paths]
        samples[Fields.source_file] = sources
        return samples


class _Unchanged(Exception):
    """No frame was changed: the temporary output is dropped."""


def process_each_frame(path: str, out_path: str, frame_func, who: str = "") -> bool:
    """Re-encode ``path`` into ``out_path`` with each frame replaced by ``frame_func(frame)``
    (a new ``av.VideoFrame``, or None to keep the frame), as Data-Juicer's
    ``process_each_frame``: the video stream's codec, base rate, pixel format and size; the
    audio packets are copied. Written under a temporary name renamed on success; returns False
    and writes nothing when ``frame_func`` changed no frame. Decoding errors raise
    ``VideoError`` naming ``path``."""
    av = require("av", who=who)
    try:
        with open_video(path, who=who) as src, atomic_write(out_path) as tmp:
            vin = src.streams.video[0]
            ain = list(src.streams.audio)
            changed = False
            dst = av.open(tmp, "w")
            try:
                aout = {s.index: dst.add_stream_from_template(s) for s in ain}
                vout = dst.add_stream(vin.codec_context.name, rate=vin.base_rate)
                vout.pix_fmt = vin.codec_context.pix_fmt
                vout.width, vout.height = vin.codec_context.width, vin.codec_context.height
                try:
                    for packet in src.demux(vin, *ain):
                        if packet.stream.index in aout:
                            if packet.dts is not None:
                                packet.stream = aout[packet.stream.index]
                                dst.mux(packet)
                            continue
                        for frame in packet.decode():
                            new = frame_func(frame)
                            if new is not None:
                                changed = True
                                new = new.reformat(format=vout.pix_fmt)
                                new.pts, new.time_base = frame.pts, frame.time_base
                                frame = new
                            dst.mux(vout.encode(frame))
                    dst.mux(vout.encode())
                except av.FFmpegError as e:
                    raise VideoError(f"{who}: cannot decode video '{path}': {e}. The file is corrupt or "
                                     f"truncated; re-encode or replace it", path) from e
            finally:
                dst.close()
            if not changed:
                raise _Unchanged
    except _Unchanged:
        return False
    return True
