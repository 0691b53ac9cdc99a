"""Opening videos, reading their metadata and sampling frames, as Data-Juicer 1.6.1 does.

Every container opened here is closed before the call returns (``open_video`` is a context
manager; Data-Juicer leaks PyAV containers and OpenCV captures). Nothing holding a file
descriptor is put in a sample's ``__dj__context__``: ops of a fused pass share the *results*
(``video_info`` dicts, decoded frames) through it, keyed by path, so a video is probed and its
frames decoded once per sample.

Frame sampling follows Data-Juicer's functions of ``utils/mm_utils.py`` exactly (same frame
timestamps / indices), but decodes each needed frame once, seeking only across key-frame
groups, instead of re-decoding the video per group and per op:

- ``extract_frames_uniformly`` = ``extract_video_frames_uniformly``
- ``extract_key_frames`` = ``extract_key_frames``
- ``extract_frames_by_second`` ~ ``extract_video_frames_uniformly_by_seconds`` /
  ``extract_key_frames_by_seconds`` (see its docstring for the one difference)

Cuts and rescales shell out to the ``ffmpeg`` binary with the command lines Data-Juicer uses,
so the written files have the same streams, durations and frame counts.
"""

from __future__ import annotations

import bisect
import os
import shlex
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from fractions import Fraction
from typing import Iterator, Optional, Sequence

from data_juicer.media.errors import MediaError
from data_juicer.utils.constant import Fields, InterVars
from data_juicer.utils.lazy import require

__all__ = [
    "VideoError", "open_video", "video_info", "frame_table", "extract_frames_uniformly",
    "uniform_frame_pts", "extract_key_frames", "key_frame_seconds", "extract_frames_by_second",
    "decode_frames_at", "decode_frames_by_index", "iter_frames", "cut_video", "cut_video_reencode",
    "ffmpeg_filter", "run_ffmpeg", "check_video_path",
    "load_row_video_infos", "load_row_video_frames", "row_context",
]


class VideoError(MediaError):
    """A video that cannot be opened or decoded (corrupt, truncated, no video stream)."""

    def __init__(self, message: str, path: str = ""):
        self.kind, self.path = "video", path
        ValueError.__init__(self, message)


def _av(who: str = ""):
    return require("av", who=who)


def check_video_path(path) -> str:
    """``path`` as a string, or a clear error when it is not an existing file."""
    if not isinstance(path, (str, os.PathLike)):
        raise VideoError(f"video path must be a string, got {type(path).__name__} ({path!r})")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"video '{path}' does not exist: fix the path in the sample's video field "
                                f"(relative paths are resolved against the dataset file's folder)")
    if os.path.isdir(path):
        raise VideoError(f"video '{path}' is a directory, not a video file")
    return path


@contextmanager
def open_video(path, who: str = "") -> Iterator:
    """A PyAV input container for ``path``, always closed on exit.

    Raises ``FileNotFoundError`` for a missing path and ``VideoError`` (naming the path) for a
    file PyAV cannot open or that has no video stream.
    """
    av = _av(who)
    path = check_video_path(path)
    try:
        container = av.open(path, "r")
    except av.FFmpegError as e:
        raise VideoError(f"cannot open video '{path}': {e}. The file is corrupt, truncated or not a "
                         f"video; re-encode or replace it (ffmpeg -i <in> <out>.mp4)") from e
    try:
        if not container.streams.video:
            raise VideoError(f"video '{path}' has no video stream")
        yield container
    finally:
        container.close()


def _decode_error(path, e) -> VideoError:
    return VideoError(f"cannot decode video '{path}': {type(e).__name__}: {e}. The file is corrupt or "
                      f"truncated; re-encode or replace it")


def _ffprobe_float(x: float) -> float:
    # ffprobe prints durations with "%f"; Data-Juicer parses that text
    return float(f"{x:f}")


def video_info(path, container=None) -> dict:
    """``dict(duration, width, height, fps, frames, has_audio)`` of the first video stream.

    As Data-Juicer computes them: ``duration`` (seconds) as its ffmpeg backend reads it from
    ffprobe (the stream's duration, else the container's, printed to 6 decimals); ``width`` /
    ``height`` of the stream's codec context (rotation metadata ignored, as Data-Juicer);
    ``fps`` the average frame rate (0.0 when unknown); ``frames`` the frame count the container
    declares (None when it declares none, e.g. Matroska/WebM).
    """
    if container is None:
        with open_video(path) as c:
            return _info(c)
    return _info(container)


def _info(container) -> dict:
    stream = container.streams.video[0]
    if stream.duration is not None:
        duration = _ffprobe_float(float(stream.duration * stream.time_base))
    elif container.duration is not None:
        duration = _ffprobe_float(container.duration / 1_000_000)
    else:
        duration = 0.0
    rate = stream.average_rate
    return dict(
        duration=duration,
        width=int(stream.codec_context.width),
        height=int(stream.codec_context.height),
        fps=float(rate) if rate else 0.0,
        frames=int(stream.frames) or None,
        has_audio=bool(container.streams.audio),
    )


# -- frame tables: presentation timestamps and key-frame flags, without decoding ---------------

def frame_table(container, path="") -> tuple[list[int], list[int]]:
    """(sorted pts of every frame of the first video stream, sorted pts of its key frames).

    Read from the demuxed packets (no decoding); leaves the container rewound to the start.
    """
    av = _av()
    stream = container.streams.video[0]
    pts, keys = [], []
    try:
        container.seek(0, stream=stream, backward=True, any_frame=False)
        for packet in container.demux(stream):
            if packet.pts is None or packet.size == 0:
                continue
            pts.append(packet.pts)
            if packet.is_keyframe:
                keys.append(packet.pts)
        container.seek(0, stream=stream, backward=True, any_frame=False)
    except av.FFmpegError as e:
        raise _decode_error(path, e) from e
    pts.sort()
    keys.sort()
    return pts, keys


def _stream_duration(container) -> Fraction:
    stream = container.streams.video[0]
    if stream.duration is not None:
        return stream.duration * stream.time_base
    if container.duration is not None:  # Matroska/WebM: Data-Juicer fails here; we use the container's
        return Fraction(container.duration, 1_000_000)
    return Fraction(0)


def uniform_frame_pts(container, frame_num: int, path="") -> list[int]:
    """The pts of the frames Data-Juicer's ``extract_video_frames_uniformly`` returns, in order.

    Timestamps ``duration/2`` (``frame_num`` 1) or ``i * duration/(frame_num-1)``; each picks the
    first frame at or after it, one frame per timestamp, searched from the key frame group it
    falls in; a group whose timestamps run past the last frame adds the last frame once. So
    the result can hold fewer than ``frame_num`` frames, or a frame twice, exactly as there.
    ``frame_num`` is capped at the declared frame count (the counted one when none is declared).
    """
    stream = container.streams.video[0]
    pts, keys = frame_table(container, path)
    if not pts:
        return []
    total = int(stream.frames) or len(pts)
    frame_num = min(int(frame_num), total)
    if frame_num <= 0:
        return []
    duration = _stream_duration(container)
    if frame_num == 1:
        seconds = [duration / 2]
    else:
        step = duration / (frame_num - 1)
        seconds = [step * i for i in range(frame_num)]
    tb = stream.time_base
    key_secs = sorted(float(k * tb) for k in keys)
    if 0.0 not in key_secs:
        key_secs = [0.0] + key_secs
    # group the timestamps by the key-frame interval they fall in (as Data-Juicer)
    if len(key_secs) == 1:
        groups = [seconds]
    else:
        groups, idx, gid, cur = [], 0, 0, []
        upper = key_secs[1]
        while idx < len(seconds):
            if seconds[idx] < upper:
                cur.append(seconds[idx])
                idx += 1
            else:
                groups.append(cur)
                gid += 1
                cur = []
                if gid >= len(key_secs) - 1:
                    break
                upper = key_secs[gid + 1]
        if cur:
            groups.append(cur)
        if idx < len(seconds):
            groups.append(seconds[idx:])
    out: list[int] = []
    for group in groups:
        if not group:
            continue
        # decoding from the group's key frame: frames before the first timestamp never match
        targets = [s / tb for s in group]
        j = bisect.bisect_left(pts, targets[0])
        t = 0
        while j < len(pts) and t < len(targets):
            if pts[j] >= targets[t]:
                out.append(pts[j])
                t += 1
            j += 1
        if t < len(targets):
            out.append(pts[-1])
    return out


def _to_pil(frame):
    return frame.to_image()


def decode_frames_at(container, wanted_pts: Sequence[int], convert=_to_pil, path="") -> dict:
    """``{pts: convert(frame)}`` for the distinct ``wanted_pts``, each frame decoded once.

    Decodes forward, seeking to a later key frame only when the next wanted frame lies beyond
    the next key frame.
    """
    av = _av()
    stream = container.streams.video[0]
    targets = sorted(set(int(p) for p in wanted_pts))
    if not targets:
        return {}
    _, keys = frame_table(container, path)
    out: dict = {}
    ti = 0
    try:
        while ti < len(targets):
            k = bisect.bisect_right(keys, targets[ti]) - 1
            start = keys[k] if k >= 0 else None
            if start is not None and start > 0:
                container.seek(start, stream=stream, backward=True, any_frame=False)
            else:
                container.seek(0, stream=stream, backward=True, any_frame=False)
            next_key = keys[k + 1] if k + 1 < len(keys) else None
            restart = False
            for frame in container.decode(stream):
                if frame.pts is None:
                    continue
                while ti < len(targets) and frame.pts > targets[ti]:
                    ti += 1  # a wanted pts with no frame (should not happen); skip it
                if ti < len(targets) and frame.pts == targets[ti]:
                    out[frame.pts] = convert(frame)
                    ti += 1
                if ti >= len(targets):
                    break
                # jump ahead when the next target is past the next key frame and far from here
                if next_key is not None and frame.pts >= next_key:
                    k2 = bisect.bisect_right(keys, targets[ti]) - 1
                    if keys[k2] > frame.pts:
                        restart = True
                        break
                    next_key = keys[k2 + 1] if k2 + 1 < len(keys) else None
            if not restart:
                break
    except av.FFmpegError as e:
        raise _decode_error(path, e) from e
    return out


def iter_frames(container, path="") -> Iterator:
    """Every decoded frame of the first video stream, from the start, in presentation order."""
    av = _av()
    stream = container.streams.video[0]
    try:
        container.seek(0, stream=stream, backward=True, any_frame=False)
        for frame in container.decode(stream):
            if frame.pts is not None:
                yield frame
    except av.FFmpegError as e:
        raise _decode_error(path, e) from e


def _decode_wanted_pts(container, wanted: set, convert, path="") -> Optional[dict]:
    """``{pts: convert(frame)}`` for the frames whose pts are in ``wanted``, in one forward pass
    that asks the decoder to skip every frame no other frame refers to (``skip_frame=NONREF``)
    unless it is wanted: such frames are never needed to decode a wanted one, so the wanted
    frames come out bit-identical, with less decoding. None when a wanted frame did not come
    out (the caller then decodes everything)."""
    av = _av()
    stream = container.streams.video[0]
    cc = stream.codec_context
    saved = cc.skip_frame
    out: dict = {}
    try:
        container.seek(0, stream=stream, backward=True, any_frame=False)
        for packet in container.demux(stream):
            cc.skip_frame = "NONREF" if packet.pts is not None and packet.pts not in wanted else "DEFAULT"
            for frame in packet.decode():
                if frame.pts in wanted and frame.pts not in out:
                    out[frame.pts] = convert(frame)
            if len(out) == len(wanted):
                break
    except av.FFmpegError as e:
        raise _decode_error(path, e) from e
    finally:
        cc.skip_frame = saved
    return out if len(out) == len(wanted) else None


def decode_frames_by_index(container, indices: Sequence[int], convert=_to_pil, path="",
                           skip_unneeded: bool = False) -> list:
    """``convert(frame)`` for the frames at positions ``indices`` of the decoded sequence
    (presentation order; repeats allowed), in the order of ``indices``; positions past the end
    are left out. With ``skip_unneeded`` the frames are found by pts through the frame table
    and the decoder skips the non-reference frames that are not wanted (same frames out, less
    decoding); it falls back to decoding every frame when the table does not account for them."""
    want = sorted(set(indices))
    if not want:
        return []
    if skip_unneeded:
        pts, _ = frame_table(container, path)
        if len(set(pts)) == len(pts):
            by_pos = {i: pts[i] for i in want if i < len(pts)}
            got = _decode_wanted_pts(container, set(by_pos.values()), convert, path) if by_pos else {}
            if got is not None:
                return [got[by_pos[i]] for i in indices if i in by_pos]
    got: dict = {}
    wi = 0
    for i, frame in enumerate(iter_frames(container, path)):
        if i == want[wi]:
            got[i] = convert(frame)
            wi += 1
            if wi >= len(want):
                break
    return [got[i] for i in indices if i in got]


def extract_frames_uniformly(path_or_container, frame_num: int, convert=_to_pil) -> list:
    """``frame_num`` frames spread over the video, as Data-Juicer's
    ``extract_video_frames_uniformly`` picks them (see ``uniform_frame_pts``); PIL RGB images
    by default (Data-Juicer's ``frame.to_image()``)."""
    if isinstance(path_or_container, (str, os.PathLike)):
        with open_video(path_or_container) as c:
            return extract_frames_uniformly(c, frame_num, convert)
    c, path = path_or_container, getattr(path_or_container, "name", "")
    wanted = uniform_frame_pts(c, frame_num, path)
    frames = decode_frames_at(c, wanted, convert, path)
    return [frames[p] for p in wanted if p in frames]


def extract_key_frames(path_or_container, convert=_to_pil) -> list:
    """Every key frame (decoded with ``skip_frame=NONKEY``, as Data-Juicer's
    ``extract_key_frames``), or the first frame when the decoder yields none."""
    if isinstance(path_or_container, (str, os.PathLike)):
        with open_video(path_or_container) as c:
            return extract_key_frames(c, convert)
    av = _av()
    c, path = path_or_container, getattr(path_or_container, "name", "")
    stream = c.streams.video[0]
    out = []
    saved = stream.codec_context.skip_frame
    try:
        stream.codec_context.skip_frame = "NONKEY"
        c.seek(0)
        for frame in c.decode(stream):
            out.append(convert(frame))
        stream.codec_context.skip_frame = saved
        if not out:
            c.seek(0)
            for frame in c.decode(stream):
                out.append(convert(frame))
                break
    except av.FFmpegError as e:
        raise _decode_error(path, e) from e
    return out


def key_frame_seconds(path_or_container) -> list[float]:
    """Sorted times (s) of the key frames (Data-Juicer's ``get_key_frame_seconds``)."""
    return sorted(extract_key_frames(path_or_container, convert=lambda f: float(f.pts * f.time_base)))


def extract_frames_by_second(path_or_container, duration: float = 1, frame_num: Optional[int] = None,
                             convert=_to_pil) -> list:
    """Frames of each ``duration``-second segment, as Data-Juicer's ``*_by_seconds`` functions.

    Segments are ``[t_{i-1}, t_i]`` for ``t = arange(0, video_duration, duration)`` (so the
    trailing part after the last full segment start is skipped, as there). With ``frame_num``
    the segment's frames are sampled uniformly (first, last, evenly between); without it the
    segment's first frame is taken (a segment Data-Juicer re-encodes holds one key frame, its
    first). Difference: Data-Juicer re-encodes each segment to an in-memory MP4 and decodes
    that, so its pixels carry a second lossy encode; here the original frames are returned.
    """
    if isinstance(path_or_container, (str, os.PathLike)):
        with open_video(path_or_container) as c:
            return extract_frames_by_second(c, duration, frame_num, convert)
    import numpy as np

    c, path = path_or_container, getattr(path_or_container, "name", "")
    stream = c.streams.video[0]
    tb = stream.time_base
    pts, _ = frame_table(c, path)
    total = float(_stream_duration(c))
    stamps = np.arange(0, total, duration).tolist()
    wanted: list[int] = []
    for i in range(1, len(stamps)):
        lo, hi = stamps[i - 1], stamps[i]
        seg = [p for p in pts if lo <= float(p * tb) <= hi]
        if not seg:
            continue
        if not frame_num:
            wanted.append(seg[0])
            continue
        n = min(frame_num, len(seg))
        if n == 1:
            idxs = [len(seg) // 2]
        else:
            idxs = [round(k * (len(seg) - 1) / (n - 1)) for k in range(n)]
        wanted.extend(seg[k] for k in idxs)
    frames = decode_frames_at(c, wanted, convert, path)
    return [frames[p] for p in wanted if p in frames]


# -- ffmpeg ------------------------------------------------------------------------------------

def run_ffmpeg(args: Sequence[str], out_path: str, what: str = "ffmpeg") -> str:
    """Run ``ffmpeg <args> <tmp>`` and rename the temporary output to ``out_path`` when it
    succeeds (so an interrupted run never leaves a half-written file under the final name).
    Raises ``VideoError`` with ffmpeg's last stderr lines when it fails."""
    exe = shutil.which("ffmpeg")
    if exe is None:
        raise VideoError("the 'ffmpeg' program is not on PATH; install it (apt-get install ffmpeg)")
    out_dir = os.path.dirname(os.path.abspath(out_path))
    os.makedirs(out_dir, exist_ok=True)
    ext = os.path.splitext(out_path)[1]
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=ext, dir=out_dir)
    os.close(fd)
    try:
        res = subprocess.run([exe, "-nostdin", "-y", *args, tmp], capture_output=True, text=True)
        if res.returncode != 0 or os.path.getsize(tmp) == 0:
            tail = "\n".join(res.stderr.strip().splitlines()[-5:])
            raise VideoError(f"{what} failed writing '{out_path}' (exit {res.returncode}): {tail}")
        os.replace(tmp, out_path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return out_path


def cut_video(path, out_path: str, start_s: float, end_s: Optional[float] = None, extra_args: str = "") -> str:
    """Copy ``[start_s, end_s)`` of ``path`` into the MP4 ``out_path`` without re-encoding.

    The command is Data-Juicer's ffmpeg-backend ``extract_clip``: ``ffmpeg -y -ss <start> -i
    <path> [-t <end-start>] -c copy -f mp4 <extra args> <out>`` (stream copy, so a clip starts
    at the key frame at or before ``start_s``), hence the same clips, durations and frame
    counts.
    """
    path = check_video_path(path)
    args = ["-ss", str(start_s), "-i", path]
    if end_s is not None:
        args += ["-t", str(end_s - start_s)]
    args += ["-c", "copy", "-f", "mp4", *shlex.split(extra_args or "")]
    return run_ffmpeg(args, out_path, what=f"cutting [{start_s}, {end_s}] s of '{path}'")


def cut_video_reencode(path, out_path: str, start_s: float, end_s: Optional[float] = None) -> str:
    """Re-encode ``[start_s, end_s]`` of ``path`` into ``out_path`` with PyAV, as Data-Juicer's
    ``av`` backend (``cut_video_by_seconds``) does: same codec, frame rate, size and pixel
    format; the frames with ``start <= t <= end`` (both ends included), shifted to start at 0;
    the first audio stream's packets in that span copied. The output is written under a
    temporary name and renamed when complete."""
    av = _av()
    out_dir = os.path.dirname(os.path.abspath(out_path))
    os.makedirs(out_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.splitext(out_path)[1] or ".mp4", dir=out_dir)
    os.close(fd)
    try:
        with open_video(path) as src:
            vin = src.streams.video[0]
            ain = src.streams.audio[0] if src.streams.audio else None
            out = av.open(tmp, "w", format="mp4")
            try:
                vout = out.add_stream(vin.codec_context.name, rate=vin.base_rate)
                vout.width, vout.height = vin.codec_context.width, vin.codec_context.height
                vout.pix_fmt = vin.codec_context.pix_fmt
                aout = out.add_stream_from_template(ain) if ain is not None else None
                v_start = int(start_s / vin.time_base)
                v_end = end_s / vin.time_base if end_s else vin.duration
                src.seek(v_start, stream=vin, any_frame=False, backward=True)
                if ain is not None:
                    a_start = int(start_s / ain.time_base)
                    a_end = end_s / ain.time_base if end_s else ain.duration
                streams = (vin, ain) if ain is not None else (vin,)
                done = False
                for packet in src.demux(*streams):
                    if packet.stream.type == "video":
                        for frame in packet.decode():
                            if frame.pts is None or frame.pts < v_start:
                                continue
                            if v_end is not None and frame.pts > v_end:
                                done = True  # decoder output is in pts order: nothing later is inside
                                break
                            frame.pts -= v_start
                            for p in vout.encode(frame):
                                out.mux(p)
                    elif packet.pts is not None and packet.dts is not None:
                        if a_start <= packet.pts and (a_end is None or packet.pts <= a_end):
                            packet.pts -= a_start
                            packet.dts -= a_start
                            packet.stream = aout
                            out.mux(packet)
                    if done:
                        break
                for p in vout.encode():
                    out.mux(p)
            finally:
                out.close()
        os.replace(tmp, out_path)
    except av.FFmpegError as e:
        raise _decode_error(path, e) from e
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    return out_path


def _filter_arg(value) -> str:
    # ffmpeg-python's escaping of filter option values
    return str(value).replace("\\", "\\\\").replace("'", "\\'").replace("=", "\\=").replace(":", "\\:")


def ffmpeg_filter(path, out_path: str, filter_name: str, filter_kwargs: Optional[dict] = None,
                  global_args: Sequence[str] = ()) -> str:
    """Write ``path`` through one ffmpeg video filter into ``out_path``, with the command
    ffmpeg-python builds for Data-Juicer's ``ffmpeg.input(p).filter(name, **kw).output(out)``:
    ``ffmpeg -i p -filter_complex "[0]name=k=v:...[s0]" -map "[s0]" out`` (only the filtered
    video stream is mapped, so audio is dropped, as there; the encoder is ffmpeg's default
    for the extension)."""
    path = check_video_path(path)
    opts = ":".join(f"{k}={_filter_arg(v)}" for k, v in sorted((filter_kwargs or {}).items()))
    graph = f"[0]{filter_name}{'=' + opts if opts else ''}[s0]"
    return run_ffmpeg(["-i", path, "-filter_complex", graph, "-map", "[s0]", *global_args], out_path,
                      what=f"ffmpeg filter '{filter_name}' on '{path}'")


# -- per-row helpers for ops (sharing through __dj__context__) ---------------------------------

def row_context(samples: dict, row: int) -> Optional[dict]:
    """The ``__dj__context__`` dict of row ``row`` (created when the column exists but holds
    None), or None when the batch has no context column."""
    col = samples.get(Fields.context)
    if col is None:
        return None
    if col[row] is None:
        col[row] = {}
    return col[row]


def _row_paths(op, samples: dict, row: int) -> list:
    col = samples.get(op.video_key)
    paths = col[row] if col is not None else None
    return list(paths) if paths else []


def load_row_video_infos(op, samples: dict, row: int, context: Optional[dict] = None) -> dict:
    """``{path: video_info(path)}`` for the distinct videos of a row, in order; reuses and
    fills the row's context so the ops of a fused pass probe each video once."""
    if context is None:
        context = row_context(samples, row)
    out: dict = {}
    for path in _row_paths(op, samples, row):
        if path in out:
            continue
        key = f"{InterVars.loaded_videos}:info:{path}"
        if context is not None and key in context:
            out[path] = context[key]
            continue
        out[path] = video_info(path)
        if context is not None:
            context[key] = out[path]
    return out


def load_row_video_frames(op, samples: dict, row: int, frame_sampling_method: str, frame_num: int = 3,
                          context: Optional[dict] = None) -> dict:
    """``{path: [PIL.Image]}``: the sampled frames of each distinct video of a row.

    ``frame_sampling_method`` is ``all_keyframes`` (``extract_key_frames``) or ``uniform``
    (``extract_frames_uniformly`` with ``frame_num``), as Data-Juicer's frame-based video ops
    sample. Frames are kept in the row's context (``__dj__sampled_frames`` keys), so every op of
    a fused pass that samples the same way decodes them once.
    """
    if frame_sampling_method not in ("all_keyframes", "uniform"):
        raise ValueError(f"frame_sampling_method must be 'all_keyframes' or 'uniform', got "
                         f"{frame_sampling_method!r}")
    if context is None:
        context = row_context(samples, row)
    out: dict = {}
    for path in _row_paths(op, samples, row):
        if path in out:
            continue
        key = f"{InterVars.sampled_frames}:{frame_sampling_method}:" \
              f"{frame_num if frame_sampling_method == 'uniform' else ''}:{path}"
        if context is not None and key in context:
            out[path] = context[key]
            continue
        with open_video(path) as c:
            if frame_sampling_method == "uniform":
                frames = extract_frames_uniformly(c, frame_num)
            else:
                frames = extract_key_frames(c)
        out[path] = frames
        if context is not None:
            context[key] = frames
    return out
