"""DWPose whole-body pose estimation (a YOLOX person detector + a DWPose/RTMPose SimCC pose
model, both ONNX, run with onnxruntime), offline, once per process.

The pre- and post-processing follow Data-Juicer 1.6.1's ``ops/common/dwpose_func.py`` (itself
from the DWPose repository) step by step: the detector's 640x640 letterbox (pad 114), YOLOX grid
decoding, class-aware NMS (0.45) at score 0.1 then persons above 0.3; the pose model's
top-down affine crop (bbox padding 1.25, fixed aspect ratio, ImageNet mean/std on the BGR
pixels), SimCC arg-max decoding (split ratio 2) and the OpenPose re-ordering with a neck joint.
Written for this project; the only difference is that the crops of all persons (and the
frames of a video) go through a model in one call when its batch dimension is dynamic.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from data_juicer.models.loader import load_once, resolve_model_file
from data_juicer.utils.lazy import require

DET_MODEL = "yolox_l.onnx"
POSE_MODEL = "dw-ll_ucoco_384.onnx"
DET_INPUT = (640, 640)


def resolve_onnx_model(model: str, who: str = "", path_param: str = "") -> str:
    """Local file of ONNX model ``model``: the path itself when it exists (or is absolute),
    else its file name in the model folders; a FileNotFoundError names every path looked at."""
    if os.path.isabs(os.path.expanduser(model)) or os.path.exists(model):
        return resolve_model_file(os.path.basename(model), model, who, path_param, what="ONNX model")
    return resolve_model_file(model, None, who, path_param, what="ONNX model", packaged=False)


def _session(path: str, device: str, who: str):
    ort = require("onnxruntime", who=who)
    providers = ["CPUExecutionProvider"]
    if device.startswith("cuda") and "CUDAExecutionProvider" in ort.get_available_providers():
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"]
    try:
        return ort.InferenceSession(path, providers=providers)
    except Exception as e:  # onnxruntime raises its own exception types for a bad graph
        raise ValueError(f"{who + ': ' if who else ''}{path} is not a loadable ONNX model "
                         f"({type(e).__name__}: {e}); replace the file") from e


def load_dwpose(det_path: str, pose_path: str, device: str = "cpu", who: str = "") -> "DWPose":
    return load_once(("dwpose", det_path, pose_path, device),
                     lambda: DWPose(_session(det_path, device, who), _session(pose_path, device, who)),
                     owner=who or None)


def _dynamic_batch(session) -> bool:
    dim = session.get_inputs()[0].shape[0]
    return not isinstance(dim, int) or dim <= 0


def _run(session, batch: np.ndarray) -> list[np.ndarray]:
    """The session's outputs for ``batch`` (N, C, H, W), in one call when the batch dimension is
    dynamic, else one item at a time (outputs concatenated)."""
    name = session.get_inputs()[0].name
    if _dynamic_batch(session) or len(batch) == 1:
        return session.run(None, {name: batch})
    outs = [session.run(None, {name: batch[i:i + 1]}) for i in range(len(batch))]
    return [np.concatenate([o[k] for o in outs], 0) for k in range(len(outs[0]))]


# -- detector ----------------------------------------------------------------------------
def letterbox(img: np.ndarray, size=DET_INPUT) -> tuple[np.ndarray, float]:
    cv2 = require("opencv-python-headless", who="dwpose")
    r = min(size[0] / img.shape[0], size[1] / img.shape[1])
    h, w = int(img.shape[0] * r), int(img.shape[1] * r)
    out = np.full((size[0], size[1], 3), 114, dtype=np.uint8)
    out[:h, :w] = cv2.resize(img, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.uint8)
    return np.ascontiguousarray(out.transpose(2, 0, 1), dtype=np.float32), r


def decode_yolox(out: np.ndarray, size=DET_INPUT) -> np.ndarray:
    """(A, 5 + C) raw YOLOX outputs of one image -> the same rows with boxes in input pixels."""
    grids, strides = [], []
    for s in (8, 16, 32):
        xv, yv = np.meshgrid(np.arange(size[1] // s), np.arange(size[0] // s))
        grids.append(np.stack((xv, yv), 2).reshape(-1, 2))
        strides.append(np.full((grids[-1].shape[0], 1), s))
    grid, stride = np.concatenate(grids), np.concatenate(strides)
    out = out.copy()
    out[:, :2] = (out[:, :2] + grid) * stride
    out[:, 2:4] = np.exp(out[:, 2:4]) * stride
    return out


def nms(boxes: np.ndarray, scores: np.ndarray, thr: float) -> list[int]:
    x1, y1, x2, y2 = boxes.T
    areas = (x2 - x1 + 1) * (y2 - y1 + 1)
    order = scores.argsort()[::-1]
    keep = []
    while order.size:
        i = order[0]
        keep.append(i)
        w = np.maximum(0.0, np.minimum(x2[i], x2[order[1:]]) - np.maximum(x1[i], x1[order[1:]]) + 1)
        h = np.maximum(0.0, np.minimum(y2[i], y2[order[1:]]) - np.maximum(y1[i], y1[order[1:]]) + 1)
        inter = w * h
        ovr = inter / (areas[i] + areas[order[1:]] - inter)
        order = order[np.where(ovr <= thr)[0] + 1]
    return keep


def person_boxes(raw: np.ndarray, ratio: float, nms_thr: float = 0.45, score_thr: float = 0.1,
                 keep_thr: float = 0.3) -> np.ndarray:
    """Person boxes (x1, y1, x2, y2 in image pixels) from one image's raw YOLOX output: per-class
    NMS over scores above ``score_thr``, then the class-0 detections scoring above ``keep_thr``."""
    pred = decode_yolox(raw)
    cxcywh, scores = pred[:, :4], pred[:, 4:5] * pred[:, 5:]
    boxes = np.stack([cxcywh[:, 0] - cxcywh[:, 2] / 2, cxcywh[:, 1] - cxcywh[:, 3] / 2,
                      cxcywh[:, 0] + cxcywh[:, 2] / 2, cxcywh[:, 1] + cxcywh[:, 3] / 2], 1) / ratio
    dets = []
    for c in range(scores.shape[1]):
        mask = scores[:, c] > score_thr
        if not mask.any():
            continue
        b, s = boxes[mask], scores[mask, c]
        keep = nms(b, s, nms_thr)
        dets += [(b[k], s[k], c) for k in keep]
    found = [b for b, s, c in dets if s > keep_thr and c == 0]
    return np.array(found) if found else np.array([])


# -- pose model --------------------------------------------------------------------------
def _warp_matrix(center: np.ndarray, scale: np.ndarray, out_w: int, out_h: int) -> np.ndarray:
    cv2 = require("opencv-python-headless", who="dwpose")

    def third(a, b):
        d = a - b
        return b + np.r_[-d[1], d[0]]

    src = np.zeros((3, 2), dtype=np.float32)
    dst = np.zeros((3, 2), dtype=np.float32)
    src[0] = center
    src[1] = center + np.array([0.0, scale[0] * -0.5])
    src[2] = third(src[0], src[1])
    dst[0] = [out_w * 0.5, out_h * 0.5]
    dst[1] = dst[0] + np.array([0.0, out_w * -0.5])
    dst[2] = third(dst[0], dst[1])
    return cv2.getAffineTransform(src, dst)


MEAN = np.array([123.675, 116.28, 103.53])
STD = np.array([58.395, 57.12, 57.375])


def pose_crop(img: np.ndarray, box, in_w: int, in_h: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The normalised (H, W, 3) crop of ``box`` for the pose model, its center and scale."""
    cv2 = require("opencv-python-headless", who="dwpose")
    x0, y0, x1, y1 = box
    center = np.array([x0 + x1, y0 + y1]) * 0.5
    scale = np.array([x1 - x0, y1 - y0]) * 1.25
    aspect = in_w / in_h
    w, h = scale
    scale = np.array([w, w / aspect]) if w > h * aspect else np.array([h * aspect, h])
    crop = cv2.warpAffine(img, _warp_matrix(center, scale, in_w, in_h), (int(in_w), int(in_h)),
                          flags=cv2.INTER_LINEAR)
    return (crop - MEAN) / STD, center, scale


def simcc_decode(simcc_x: np.ndarray, simcc_y: np.ndarray, ratio: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """(N, K, 2) arg-max locations (divided by ``ratio``; -1 where the score is <= 0) and (N, K) scores."""
    n, k, _ = simcc_x.shape
    sx, sy = simcc_x.reshape(n * k, -1), simcc_y.reshape(n * k, -1)
    locs = np.stack((np.argmax(sx, 1), np.argmax(sy, 1)), -1).astype(np.float32)
    vals = np.minimum(np.amax(sx, 1), np.amax(sy, 1))
    locs[vals <= 0.0] = -1
    return locs.reshape(n, k, 2) / ratio, vals.reshape(n, k)


_MMPOSE_IDX = [17, 6, 8, 10, 7, 9, 12, 14, 16, 13, 15, 2, 1, 4, 3]
_OPENPOSE_IDX = [1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17]


class DWPose:
    """The two sessions and the whole pipeline over BGR uint8 images."""

    def __init__(self, det, pose):
        self.det = det
        self.pose = pose

    def detect(self, images: list[np.ndarray]) -> list[np.ndarray]:
        if not images:
            return []
        inputs = [letterbox(img) for img in images]
        raw = _run(self.det, np.stack([x for x, _ in inputs]))[0]
        return [person_boxes(raw[i], r) for i, (_, r) in enumerate(inputs)]

    def keypoints(self, images: list[np.ndarray], boxes: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per image: (P, 134, 2) keypoints in pixels and (P, 134) scores, OpenPose order with the
        neck at 1 (a whole-image box when no person was detected, as DWPose does)."""
        in_h, in_w = self.pose.get_inputs()[0].shape[2:]
        crops, owners = [], []
        for i, (img, bb) in enumerate(zip(images, boxes)):
            for box in (bb if len(bb) else [[0, 0, img.shape[1], img.shape[0]]]):
                crop, center, scale = pose_crop(img, box, in_w, in_h)
                crops.append((crop.transpose(2, 0, 1), center, scale))
                owners.append(i)
        if not crops:
            return []
        batch = np.stack([c for c, _, _ in crops]).astype(np.float32)
        simcc_x, simcc_y = _run(self.pose, batch)[:2]
        locs, scores = simcc_decode(simcc_x, simcc_y)
        centers = np.stack([c for _, c, _ in crops])[:, None]
        scales = np.stack([s for _, _, s in crops])[:, None]
        kpts = locs / np.array([in_w, in_h]) * scales + centers - scales / 2
        out = []
        for i in range(len(images)):
            sel = [k for k, o in enumerate(owners) if o == i]
            info = np.concatenate((kpts[sel], scores[sel][..., None]), -1)
            neck = info[:, [5, 6]].mean(1)
            neck[:, 2:4] = np.logical_and(info[:, 5, 2:4] > 0.3, info[:, 6, 2:4] > 0.3).astype(int)
            info = np.insert(info, 17, neck, axis=1)
            info[:, _OPENPOSE_IDX] = info[:, _MMPOSE_IDX]
            out.append((info[..., :2], info[..., 2]))
        return out

    def __call__(self, images: list[np.ndarray]) -> list[dict[str, Any]]:
        """Per BGR image: ``body`` (P, 18, 2), ``foot`` (P, 6, 2), ``faces`` (P, 68, 2) and
        ``hands`` (2P, 21, 2) keypoints as fractions of the width/height (-1 where the score is
        <= 0.3, except ``body``, kept as it is, as Data-Juicer does), ``bbox`` the person boxes
        (pixels), and ``body_score`` (P, 18) for drawing."""
        boxes = self.detect(images)
        res = []
        for img, bb, (cand, subset) in zip(images, boxes, self.keypoints(images, boxes)):
            h, w = img.shape[:2]
            cand = cand.copy()
            cand[..., 0] /= float(w)
            cand[..., 1] /= float(h)
            body = cand[:, :18].copy()
            cand[subset < 0.3] = -1
            res.append({"body": body, "foot": cand[:, 18:24], "faces": cand[:, 24:92],
                        "hands": np.vstack([cand[:, 92:113], cand[:, 113:]]), "bbox": bb,
                        "body_score": subset[:, :18]})
        return res
