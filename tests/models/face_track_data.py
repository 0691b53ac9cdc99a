"""A small lossless video and human-track pickles as video_human_tracks_extraction_mapper writes them
(``{"frame": [...], "xys_bbox": {"x": [...], "y": [...], "s": [...]}, ...}``), for the face
demographic op. Imports only numpy and OpenCV (Data-Juicer's reference run imports it too)."""

import os
import pickle

import numpy as np

W, H, FRAMES = 96, 72, 90


def write_video(path, frames: int = FRAMES) -> str:
    """FFV1 (lossless) AVI: a coloured disc moving over a gradient, its colour changing every frame."""
    import cv2

    rng = np.random.RandomState(7)
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"FFV1"), 25, (W, H))
    for i in range(frames):
        f = np.zeros((H, W, 3), np.uint8)
        f[:] = (40 + i * 2, 90, 220 - i * 2)
        cv2.circle(f, (20 + i // 2, 36), 14, ((i * 67) % 256, (i * 131 + 50) % 256, (255 - i * 29) % 256), -1)
        f[::9] = (rng.rand(len(range(0, H, 9)), W, 3) * 255).astype(np.uint8)
        out.write(f)
    out.release()
    return str(path)


def track(frames, x0=20.0, dx=0.5, y=36.5, s0=12.0, ds=0.05) -> dict:
    """A track pickle's content: face centre x, y and half size s per frame."""
    frames = list(frames)
    return {"frame": frames,
            "xys_bbox": {"x": [x0 + dx * f for f in frames], "y": [y] * len(frames),
                         "s": [s0 + ds * k for k in range(len(frames))]},
            "xy_bbox": [], "xy_human_bbox": {}}


def write_track(path, data: dict) -> dict:
    """Pickle ``data`` at ``path``; the meta entry pointing to it."""
    with open(path, "wb") as f:
        pickle.dump(data, f)
    return {"bbox_path": str(path)}


def make_case(folder) -> tuple[str, list]:
    """The video and its two tracks (20 frames from frame 5; the 80 frames from 10, > 75)."""
    folder = str(folder)
    os.makedirs(folder, exist_ok=True)
    video = write_video(os.path.join(folder, "clip.avi"))
    tracks = [write_track(os.path.join(folder, "clip_t0.pkl"), track(range(5, 25))),
              write_track(os.path.join(folder, "clip_t1.pkl"), track(range(10, 90), x0=15.0, dx=0.6, s0=10.0))]
    return video, tracks
