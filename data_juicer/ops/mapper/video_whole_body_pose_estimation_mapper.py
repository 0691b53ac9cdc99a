import os

from pydantic import PositiveInt

from data_juicer.models.dwpose import DET_MODEL, POSE_MODEL, load_dwpose, resolve_onnx_model
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.vision_other import ASSETS_CACHE, device_for, num_rows, row_metas
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars, MetaKeys
from data_juicer.utils.lazy import require

_KEYS = ("body_keypoints", "foot_keypoints", "faces_keypoints", "hands_keypoints", "bbox_results_list")

# OpenPose's 18-joint limbs (1-based) and colours, as DWPose draws them
_LIMBS = [[2, 3], [2, 6], [3, 4], [4, 5], [6, 7], [7, 8], [2, 9], [9, 10], [10, 11], [2, 12], [12, 13],
          [13, 14], [2, 1], [1, 15], [15, 17], [1, 16], [16, 18]]
_COLORS = [[255, 0, 0], [255, 85, 0], [255, 170, 0], [255, 255, 0], [170, 255, 0], [85, 255, 0], [0, 255, 0],
           [0, 255, 85], [0, 255, 170], [0, 255, 255], [0, 170, 255], [0, 85, 255], [0, 0, 255], [85, 0, 255],
           [170, 0, 255], [255, 0, 255], [255, 0, 170], [255, 0, 85]]
_HAND_EDGES = [[0, 1], [1, 2], [2, 3], [3, 4], [0, 5], [5, 6], [6, 7], [7, 8], [0, 9], [9, 10], [10, 11],
               [11, 12], [0, 13], [13, 14], [14, 15], [15, 16], [0, 17], [17, 18], [18, 19], [19, 20]]


def draw_pose(res: dict, h: int, w: int):
    """An RGB canvas with the body limbs and joints, hand skeletons and face points of one frame
    (as DWPose's ``draw_pose``: joints scoring <= 0.3 and points at -1 are left out)."""
    import math

    import numpy as np

    cv2 = require("opencv-python-headless", who="video_whole_body_pose_estimation_mapper")
    canvas = np.zeros((h, w, 3), dtype=np.uint8)
    body, score = res["body"], res["body_score"]
    for i, (a, b) in enumerate(_LIMBS):
        for p in range(len(body)):
            if score[p][a - 1] <= 0.3 or score[p][b - 1] <= 0.3:
                continue
            ys = body[p, [a - 1, b - 1], 0] * float(w)
            xs = body[p, [a - 1, b - 1], 1] * float(h)
            length = ((xs[0] - xs[1]) ** 2 + (ys[0] - ys[1]) ** 2) ** 0.5
            angle = math.degrees(math.atan2(xs[0] - xs[1], ys[0] - ys[1]))
            poly = cv2.ellipse2Poly((int(np.mean(ys)), int(np.mean(xs))), (int(length / 2), 4), int(angle), 0, 360, 1)
            cv2.fillConvexPoly(canvas, poly, _COLORS[i])
    canvas = (canvas * 0.6).astype(np.uint8)
    for j in range(18):
        for p in range(len(body)):
            if score[p][j] > 0.3:
                cv2.circle(canvas, (int(body[p, j, 0] * w), int(body[p, j, 1] * h)), 4, _COLORS[j], thickness=-1)
    eps = 0.01
    for peaks in res["hands"]:
        for ie, (a, b) in enumerate(_HAND_EDGES):
            x1, y1 = int(peaks[a][0] * w), int(peaks[a][1] * h)
            x2, y2 = int(peaks[b][0] * w), int(peaks[b][1] * h)
            if x1 > eps and y1 > eps and x2 > eps and y2 > eps:
                hsv = np.uint8([[[int(180 * ie / len(_HAND_EDGES)), 255, 255]]])
                color = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)[0, 0].tolist()
                cv2.line(canvas, (x1, y1), (x2, y2), color, thickness=2)
        for x, y in peaks:
            if int(x * w) > eps and int(y * h) > eps:
                cv2.circle(canvas, (int(x * w), int(y * h)), 4, (0, 0, 255), thickness=-1)
    for lmks in res["faces"]:
        for x, y in lmks:
            if int(x * w) > eps and int(y * h) > eps:
                cv2.circle(canvas, (int(x * w), int(y * h)), 3, (255, 255, 255), thickness=-1)
    return canvas


@OPERATORS.register_module("video_whole_body_pose_estimation_mapper")
class VideoWholeBodyPoseEstimationMapper(Mapper):
    """2-D whole-body pose estimation with DWPose: ``frame_num`` frames are sampled uniformly from
    the sample's first video (per ``duration``-second segment when ``duration`` > 0), persons are
    detected with YOLOX and the body, foot, face and hand keypoints of each are estimated by the
    DWPose SimCC model (both ONNX models, run with onnxruntime; CUDA when ``accelerator: cuda``
    and onnxruntime has it).

    Writes ``__dj__meta__[tag_field_name]`` = ``{body_keypoints, foot_keypoints,
    faces_keypoints, hands_keypoints, bbox_results_list}``, one entry per frame: ``body`` (P, 18,
    2), ``foot`` (P, 6, 2), ``faces`` (P, 68, 2), ``hands`` (2P, 21, 2) keypoints as fractions of
    the frame's width/height (foot/face/hand points scoring <= 0.3 are -1; body points are kept
    as they are, as Data-Juicer does) and the person boxes (pixels, x1 y1 x2 y2). A frame with no
    detected person is estimated on the whole frame (one person), as DWPose does. Frames are
    decoded as Data-Juicer reads them (a JPEG round trip, BGR). The frames of a whole batch go
    through the detector together, and all their person crops through the pose model together
    when its batch dimension is dynamic. A sample already tagged keeps its tag.

    The models (``yolox_l.onnx``, ``dw-ll_ucoco_384.onnx``) are a path or a file name looked up in
    the model folders; nothing is downloaded. Differences from Data-Juicer: frames stay in memory
    (Data-Juicer writes them under ``frame_dir/<video name>/`` and lists that folder, which mixes
    in the frames of an earlier video with the same name and orders frame_10 before frame_2);
    a sample without videos gets empty lists (Data-Juicer returns an empty list for the row).
    """

    _accelerator = "cuda"
    modality = "video"
    requires = ("onnxruntime", "opencv-python-headless", "av", "pillow")
    uses_model = True
    uses = (InterVars.loaded_videos,)
    model_params = {"onnx_det_model": DET_MODEL, "onnx_pose_model": POSE_MODEL}

    def __init__(
        self,
        onnx_det_model: str = DET_MODEL,
        onnx_pose_model: str = POSE_MODEL,
        frame_num: PositiveInt = 3,
        duration: float = 0,
        tag_field_name: str = MetaKeys.pose_estimation_tags,
        frame_dir: str = ASSETS_CACHE,
        if_save_visualization: bool = False,
        save_visualization_dir: str = ASSETS_CACHE,
        **kwargs,
    ):
        """
        :param onnx_det_model: the YOLOX person detector (``yolox_l.onnx``): a path, or a file name
            in the model folders
        :param onnx_pose_model: the DWPose model (``dw-ll_ucoco_384.onnx``): a path, or a file name in
            the model folders
        :param frame_num: frames sampled uniformly from the video (per segment when ``duration`` > 0):
            1 the middle frame, 2 the first and last, more: evenly between them
        :param duration: segment length in seconds; 0 samples the whole video
        :param tag_field_name: meta field the keypoints go to
        :param frame_dir: accepted for compatibility (Data-Juicer's folder of the sampled frames;
            frames stay in memory here)
        :param if_save_visualization: also draw each frame's poses to
            ``<save_visualization_dir>/<video name>_pose_output/temp_frame_pose_<i>.jpg``
        :param save_visualization_dir: folder of the drawings
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "2GB")
        super().__init__(**kwargs)
        if frame_num < 1:
            raise ValueError(f"{self.name}: frame_num must be a positive integer, got {frame_num!r}")
        if duration < 0:
            raise ValueError(f"{self.name}: duration must be >= 0, got {duration!r}")
        self.onnx_det_model = onnx_det_model
        self.onnx_pose_model = onnx_pose_model
        self.frame_num = frame_num
        self.duration = duration
        self.tag_field_name = tag_field_name
        self.frame_dir = frame_dir
        self.if_save_visualization = if_save_visualization
        self.save_visualization_dir = save_visualization_dir
        self._det_path = resolve_onnx_model(onnx_det_model, self.name, "onnx_det_model")
        self._pose_path = resolve_onnx_model(onnx_pose_model, self.name, "onnx_pose_model")
        from data_juicer.models.loader import ensure_installed

        ensure_installed(("onnxruntime", "opencv-python-headless"), self.name)
        from data_juicer.ops.mapper.video_extract_frames_mapper import VideoExtractFramesMapper

        self._frames = VideoExtractFramesMapper(frame_sampling_method="uniform", output_format="bytes",
                                                frame_num=frame_num, duration=duration)

    def _bgr_frames(self, path):
        import numpy as np

        cv2 = require("opencv-python-headless", who=self.name)
        return [cv2.imdecode(np.frombuffer(b, np.uint8), cv2.IMREAD_COLOR) for b in self._frames._write(path)]

    def process_batched(self, samples):
        n = num_rows(samples)
        metas = row_metas(samples, n)
        col = samples.get(self.video_key)
        rows, frames = [], []  # rows: (row, video path, first frame, number of frames)
        for i in range(n):
            if self.tag_field_name in metas[i]:
                continue
            if col is None or not col[i]:
                metas[i][self.tag_field_name] = {k: [] for k in _KEYS}
                continue
            got = self._bgr_frames(col[i][0])
            rows.append((i, col[i][0], len(frames), len(got)))
            frames += got
        if not rows:
            return samples
        model = load_dwpose(self._det_path, self._pose_path, device_for(self), who=self.name)
        results = model(frames) if frames else []
        for i, path, start, count in rows:
            res = results[start:start + count]
            metas[i][self.tag_field_name] = {
                "body_keypoints": [r["body"].tolist() for r in res],
                "foot_keypoints": [r["foot"].tolist() for r in res],
                "faces_keypoints": [r["faces"].tolist() for r in res],
                "hands_keypoints": [r["hands"].tolist() for r in res],
                "bbox_results_list": [r["bbox"].tolist() for r in res],
            }
            if self.if_save_visualization:
                self._save_drawings(path, res, frames[start:start + count])
        return samples

    def _save_drawings(self, path, res, frames):
        from PIL import Image

        out = os.path.join(self.save_visualization_dir,
                           os.path.splitext(os.path.basename(path))[0] + "_pose_output")
        os.makedirs(out, exist_ok=True)
        for k, (r, f) in enumerate(zip(res, frames)):
            Image.fromarray(draw_pose(r, *f.shape[:2])).save(os.path.join(out, f"temp_frame_pose_{k}.jpg"))
