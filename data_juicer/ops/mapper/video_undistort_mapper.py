import os
import shutil
import subprocess
import tempfile

import numpy as np

from data_juicer.media.files import transform_file_name
from data_juicer.media.video import VideoError, check_video_path
from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, InterVars, MetaKeys
from data_juicer.utils.lazy import require

INTER_BITS = 5  # OpenCV's fixed-point remap tables: 1/32 pixel
INTER_TAB_SIZE = 1 << INTER_BITS


def median_intrinsics(ks: np.ndarray) -> np.ndarray:
    """One 3x3 matrix from per-frame intrinsics ``(N, 3, 3)``: the median fx, fy, cx, cy."""
    k = np.eye(3)
    k[0, 0], k[1, 1] = np.median(ks[:, 0, 0]), np.median(ks[:, 1, 1])
    k[0, 2], k[1, 2] = np.median(ks[:, 0, 2]), np.median(ks[:, 1, 2])
    return k


def omnidir_rectify_maps(K, D, xi: float, R, P, size: tuple) -> tuple:
    """The fixed-point remap tables (``CV_16SC2`` map and ``CV_16UC1`` interpolation index) of
    OpenCV's ``cv2.omnidir.initUndistortRectifyMap(K, D, xi, R, P, size, CV_16SC2,
    RECTIFY_PERSPECTIVE)`` (Mei's unified camera model), computed with NumPy so that no
    opencv-contrib build is needed: each output pixel is lifted through ``(P R)^-1`` onto the
    unit sphere, projected with ``xi``, distorted with ``k1, k2, p1, p2`` and mapped by ``K``."""
    width, height = size
    K = np.asarray(K, dtype=np.float64)
    k1, k2, p1, p2 = (float(v) for v in np.asarray(D, dtype=np.float64).reshape(-1)[:4])
    ikr = np.linalg.pinv(np.asarray(P, dtype=np.float64) @ np.asarray(R, dtype=np.float64))
    rows = np.arange(height, dtype=np.float64)[:, None]
    # OpenCV walks each row by repeated addition; _walk repeats its rounding
    x = rows * ikr[0, 1] + ikr[0, 2] + _walk(ikr[0, 0], width)
    y = rows * ikr[1, 1] + ikr[1, 2] + _walk(ikr[1, 0], width)
    w = rows * ikr[2, 1] + ikr[2, 2] + _walk(ikr[2, 0], width)
    r = np.sqrt(x * x + y * y + w * w)
    xs, ys, zs = x / r, y / r, w / r
    xu, yu = xs / (zs + xi), ys / (zs + xi)
    r2 = xu * xu + yu * yu
    radial = 1 + k1 * r2 + k2 * r2 * r2
    xd = radial * xu + 2 * p1 * xu * yu + p2 * (r2 + 2 * xu * xu)
    yd = radial * yu + p1 * (r2 + 2 * yu * yu) + 2 * p2 * xu * yu
    u = K[0, 0] * xd + K[0, 1] * yd + K[0, 2]
    v = K[1, 1] * yd + K[1, 2]
    iu = np.clip(np.rint(u * INTER_TAB_SIZE), -2**31, 2**31 - 1).astype(np.int64)
    iv = np.clip(np.rint(v * INTER_TAB_SIZE), -2**31, 2**31 - 1).astype(np.int64)
    map1 = np.stack([iu >> INTER_BITS, iv >> INTER_BITS], axis=-1).astype(np.int16)
    map2 = ((iv & (INTER_TAB_SIZE - 1)) * INTER_TAB_SIZE + (iu & (INTER_TAB_SIZE - 1))).astype(np.uint16)
    return map1, map2


def _walk(step: float, n: int) -> np.ndarray:
    """``[0, step, step+step, ...]`` summed one by one, as OpenCV's ``_x += step`` loop."""
    out = np.empty(n)
    acc = 0.0
    for j in range(n):
        out[j] = acc
        acc += step
    return out[None, :]


@OPERATORS.register_module("video_undistort_mapper")
class VideoUndistortMapper(Mapper):
    """Undistorts each video with its camera's intrinsics ``K``, Mei-model ``xi`` and distortion
    coefficients ``(k1, k2, p1, p2)`` (OpenCV's omnidirectional model, perspective rectification,
    bicubic remap, black border) and writes the result as H.264 ``yuv420p`` MP4 at the source's
    frame rate and size, as Data-Juicer 1.6.1 does.

    The calibration of video ``i`` is ``__dj__meta__[camera_calibration_field][i]``, a dict with
    ``intrinsics`` (3x3, or per-frame ``(N, 3, 3)`` whose median fx, fy, cx, cy is used), ``xi``
    (a number or per-frame list, median used), optional ``dist_coeffs`` (default zeros),
    ``rectify_R`` (default identity) and ``new_intrinsics`` (default ``intrinsics``). The new
    paths go to the sample's ``undistorted_video_field`` (one per video); a sample that already
    has that field is left as it is.

    Differs from Data-Juicer on purpose: the remap tables are computed here (Data-Juicer
    pip-installs opencv-contrib at run time for ``cv2.omnidir``); new files are named
    ``<stem>__dj_hash_#<h>#.mp4`` from the source's content and the calibration (Data-Juicer
    writes ``<stem>.mp4``, so two videos with the same file name overwrite each other) and are
    written under a temporary name; ``xi = 0`` (a pinhole camera) is accepted; a sample without
    videos gets an empty list (Data-Juicer's op returns ``[]``, which fails its batch); a missing or unreadable video or a
    calibration without ``intrinsics``/``xi`` raises an error naming it (the sample goes to the
    error ledger).
    """

    modality = "video"
    uses = (InterVars.loaded_videos,)
    requires = ("opencv-python-headless",)

    def __init__(self, output_video_dir: str | None = None, undistorted_video_field: str = MetaKeys.undistorted_video,
                 camera_calibration_field: str = "camera_calibration", batch_size_each_video: int = 1000,
                 crf: int = 22, **kwargs):
        """
        :param output_video_dir: folder the undistorted videos are written to (required)
        :param undistorted_video_field: sample field that receives the list of new video paths
        :param camera_calibration_field: ``__dj__meta__`` field holding one calibration dict per
            video (``intrinsics``, ``xi``, optional ``dist_coeffs``, ``rectify_R``,
            ``new_intrinsics``)
        :param batch_size_each_video: frames encoded per MPEG-TS piece before the pieces are
            joined into the final MP4 (each piece starts with a key frame)
        :param crf: x264 constant rate factor of the output (lower is better quality)
        """
        super().__init__(**kwargs)
        if not output_video_dir:
            raise ValueError(f"{self.name}: output_video_dir must be set to the folder the undistorted videos "
                             f"are written to")
        if int(batch_size_each_video) < 1:
            raise ValueError(f"{self.name}: batch_size_each_video must be >= 1, got {batch_size_each_video}")
        self.output_video_dir = output_video_dir
        self.undistorted_video_field = undistorted_video_field
        self.camera_calibration_field = camera_calibration_field
        self.batch_size_each_video = int(batch_size_each_video)
        self.crf = crf

    # -- calibration -----------------------------------------------------------------------
    def calibration(self, sample: dict, idx: int, path: str) -> tuple:
        """``(K, D, xi, R, P)`` of video ``idx`` as Data-Juicer reads them (float32 inputs)."""
        calibs = (sample.get(Fields.meta) or {}).get(self.camera_calibration_field) or []
        where = f"{self.name}: video '{path}'"
        if idx >= len(calibs) or not isinstance(calibs[idx], dict):
            raise ValueError(f"{where} has no calibration: __dj__meta__.{self.camera_calibration_field}[{idx}] "
                             f"must be a dict with 'intrinsics' and 'xi'")
        cal = calibs[idx]
        for key in ("intrinsics", "xi"):
            if cal.get(key) is None or (np.size(cal[key]) == 0):
                raise ValueError(f"{where}: __dj__meta__.{self.camera_calibration_field}[{idx}] lacks '{key}' "
                                 f"(3x3 camera matrix and Mei-model xi are both required)")
        K = np.asarray(cal["intrinsics"], dtype=np.float32)
        if K.ndim == 3:
            K = median_intrinsics(K).astype(np.float32)
        if K.shape != (3, 3):
            raise ValueError(f"{where}: intrinsics must be 3x3 or (N, 3, 3), got shape {K.shape}")
        xi = np.asarray(cal["xi"], dtype=np.float32).reshape(-1)
        xi = float(np.median(xi)) if len(xi) > 1 else float(xi[0])
        D = np.asarray(cal.get("dist_coeffs") if cal.get("dist_coeffs") is not None else [0, 0, 0, 0],
                       dtype=np.float32)
        R = np.eye(3) if cal.get("rectify_R") is None else np.asarray(cal["rectify_R"], dtype=np.float32)
        P = K if cal.get("new_intrinsics") is None else np.asarray(cal["new_intrinsics"], dtype=np.float32)
        return K, D, xi, R, P

    # -- encoding --------------------------------------------------------------------------
    def _writer(self, out_path: str, width: int, height: int, fps: float):
        cmd = ["ffmpeg", "-nostdin", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "rgb24",
               "-r", str(fps), "-s", f"{width}x{height}", "-i", "pipe:0", "-b:v", "0", "-c:v", "libx264",
               "-crf", str(self.crf), "-movflags", "frag_keyframe+empty_moov", "-pix_fmt", "yuv420p",
               "-preset", "medium", "-r", str(fps), out_path, "-y"]
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    @staticmethod
    def _close(writer, path: str):
        _, err = writer.communicate()
        if writer.returncode != 0:
            raise VideoError(f"ffmpeg failed writing '{path}' (exit {writer.returncode}): "
                             f"{err.decode(errors='replace').strip()[-400:]}", path)

    def undistort(self, path: str, out_path: str, calib: tuple) -> str:
        """Write ``path`` undistorted to ``out_path`` (through a temporary folder)."""
        cv2 = require("opencv-python-headless", who=self.name)
        if shutil.which("ffmpeg") is None:
            raise VideoError("the 'ffmpeg' program is not on PATH; install it (apt-get install ffmpeg)")
        cap = cv2.VideoCapture(path)
        try:
            if not cap.isOpened():
                raise VideoError(f"{self.name}: cannot open video '{path}'; the file is corrupt, truncated or "
                                 f"not a video: re-encode or replace it", path)
            height = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
            width = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
            fps = cap.get(cv2.CAP_PROP_FPS)
            K, D, xi, R, P = calib
            map1, map2 = omnidir_rectify_maps(K, D, xi, R, P, (width, height))
            out_dir = os.path.dirname(os.path.abspath(out_path))
            os.makedirs(out_dir, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix=".undistort-", dir=out_dir) as tmp:
                pieces, writer, n = [], None, 0
                try:
                    while True:
                        ok, frame = cap.read()
                        if not ok:
                            break
                        if writer is None:
                            pieces.append(os.path.join(tmp, f"b{len(pieces):04d}.ts"))
                            writer = self._writer(pieces[-1], width, height, fps)
                        out = cv2.remap(frame, map1, map2, interpolation=cv2.INTER_CUBIC,
                                        borderMode=cv2.BORDER_CONSTANT)
                        writer.stdin.write(cv2.cvtColor(out, cv2.COLOR_BGR2RGB).tobytes())
                        n += 1
                        if n % self.batch_size_each_video == 0:
                            self._close(writer, pieces[-1])
                            writer = None
                finally:
                    if writer is not None:
                        self._close(writer, pieces[-1])
                if n == 0:
                    raise VideoError(f"{self.name}: no frame could be decoded from video '{path}'; the file is "
                                     f"corrupt or empty: re-encode or replace it", path)
                self._concat(tmp, pieces, out_path)
        finally:
            cap.release()
        return out_path

    @staticmethod
    def _concat(tmp: str, pieces: list, out_path: str):
        listing = os.path.join(tmp, "inputs.txt")
        with open(listing, "w") as f:
            f.writelines(f"file '{os.path.basename(p)}'\n" for p in pieces)
        joined = os.path.join(tmp, "joined.mp4")
        res = subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-f", "concat", "-safe", "0",
                              "-i", listing, "-c", "copy", "-movflags", "frag_keyframe+empty_moov", joined, "-y"],
                             capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise VideoError(f"ffmpeg failed joining the pieces of '{out_path}': {res.stderr.strip()[-400:]}",
                             out_path)
        os.replace(joined, out_path)

    def process_single(self, sample):
        if self.undistorted_video_field in sample and sample[self.undistorted_video_field] is not None:
            return sample
        paths = sample.get(self.video_key) or []
        outs = []
        for idx, path in enumerate(paths):
            path = check_video_path(path)
            calib = self.calibration(sample, idx, path)
            key = repr([np.asarray(c, dtype=np.float64).round(9).tolist() for c in calib])
            out = transform_file_name(path, self.name, {"calibration": key, "crf": self.crf,
                                                        "batch_size_each_video": self.batch_size_each_video},
                                      ext=".mp4", out_dir=self.output_video_dir)
            outs.append(out if os.path.exists(out) else self.undistort(path, out, calib))
        sample[self.undistorted_video_field] = outs
        return sample
