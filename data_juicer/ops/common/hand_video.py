"""Shared math of the hand / ego-video ops (Data-Juicer's 3D hand-motion labelling pipeline).

Layouts the ops exchange through ``__dj__meta__`` (as Data-Juicer 1.6.1 writes them):

- a hand *state* is 8 numbers ``[x, y, z, roll, pitch, yaw, pad, gripper]`` (world frame,
  extrinsic ``xyz`` Euler angles in radians, ``pad`` always 0, gripper in [-1, 1]);
- an *action* is 7 numbers ``[dx, dy, dz, droll, dpitch, dyaw, gripper]``: the position change
  to the next state, the relative rotation ``R_next * R_prev^-1`` as Euler angles, and the next
  state's gripper (the last action is zeros with the last gripper);
- an array field (``cam_c2w``, intrinsics) is a nested list, an ``ndarray`` or the path of a
  ``.npy`` file.
"""

from __future__ import annotations

import os

import numpy as np

from data_juicer.utils.lazy import require

__all__ = [
    "as_array",
    "empty_hand_result",
    "euler_to_quat_continuous",
    "recompute_actions",
    "rotation",
    "savgol_columns",
    "savgol_window",
]


def as_array(value, what: str = "array") -> np.ndarray:
    """``value`` (nested list, ndarray or ``.npy`` path) as a float64 ndarray, as Data-Juicer's
    ``load_numpy``; a path that does not exist raises a clear error naming it."""
    if isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if not os.path.exists(path):
            raise FileNotFoundError(f"{what} file '{path}' does not exist; fix the path in the sample's meta "
                                    f"field or store the array inline")
        return np.asarray(np.load(path), dtype=np.float64)
    return np.asarray(value, dtype=np.float64)


def rotation():
    require("scipy", who="hand video ops")
    from scipy.spatial.transform import Rotation

    return Rotation


def recompute_actions(states) -> np.ndarray:
    """The ``(T, 7)`` float32 actions of ``(T, 8)`` states (layout in the module docstring)."""
    states = np.asarray(states, dtype=np.float64)
    n = len(states)
    actions = np.zeros((n, 7), dtype=np.float32)
    if n == 0:
        return actions
    if n > 1:
        rot = rotation()
        prev = rot.from_euler("xyz", states[:-1, 3:6])
        nxt = rot.from_euler("xyz", states[1:, 3:6])
        actions[:-1, 0:3] = states[1:, 0:3] - states[:-1, 0:3]
        actions[:-1, 3:6] = (nxt * prev.inv()).as_euler("xyz")
        actions[:-1, 6] = states[1:, 7]
    actions[-1, 6] = states[-1, 7]
    return actions


def savgol_window(n: int, window: int, polyorder: int):
    """The Savitzky-Golay window Data-Juicer uses for ``n`` samples (``min(window, n)``, made odd),
    or None when it is too short for ``polyorder`` (then the data stays as it is)."""
    win = min(window, n)
    if win % 2 == 0:
        win -= 1
    return None if win < polyorder + 2 else win


def savgol_columns(data, window: int, polyorder: int) -> np.ndarray:
    """Each column of ``data`` (along axis 0; trailing axes are columns) smoothed on its own
    with ``scipy.signal.savgol_filter`` (one column at a time, as Data-Juicer filters them)."""
    data = np.asarray(data, dtype=np.float64)
    win = savgol_window(len(data), window, polyorder)
    if win is None:
        return data.copy()
    require("scipy", who="hand video ops")
    from scipy.signal import savgol_filter

    if data.ndim == 1:
        return savgol_filter(data, win, polyorder)
    flat = data.reshape(len(data), -1)
    out = np.empty_like(flat)
    for d in range(flat.shape[1]):
        out[:, d] = savgol_filter(flat[:, d], win, polyorder)
    return out.reshape(data.shape)


def euler_to_quat_continuous(eulers) -> np.ndarray:
    """``(N, 4)`` quaternions (x, y, z, w) of ``xyz`` Euler angles, each flipped to the hemisphere
    of the one before so that a filter over them does not jump."""
    quats = rotation().from_euler("xyz", np.asarray(eulers, dtype=np.float64)).as_quat()
    for i in range(1, len(quats)):
        if np.dot(quats[i], quats[i - 1]) < 0:
            quats[i] = -quats[i]
    return quats


def empty_hand_result(hand_type: str) -> dict:
    """The result Data-Juicer writes for a hand without enough frames."""
    return {"states": [], "actions": [], "valid_frame_ids": [], "hand_type": hand_type,
            "joints_cam": [], "joints_world": []}
