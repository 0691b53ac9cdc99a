import numpy as np

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.hand_video import as_array, empty_hand_result, recompute_actions, rotation
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys

OPEN_ANGLE, CLOSED_ANGLE = 0.15, 0.6  # mean finger-joint angle (rad) of an open hand and of a fist


def gripper_from_hand_pose(hand_pose) -> float:
    """Gripper state in [-1 (closed), 1 (open)] from the mean rotation angle of the 15 MANO finger
    joints (axis-angle ``(45,)`` / ``(15, 3)`` or rotation matrices ``(15, 3, 3)``); linear
    between 0.15 rad (open) and 0.6 rad (closed); 1 when there is no pose."""
    if hand_pose is None or len(hand_pose) == 0:
        return 1.0
    pose = np.asarray(hand_pose, dtype=np.float64)
    if pose.shape in ((45,), (15, 3)):
        angles = [np.linalg.norm(v) for v in pose.reshape(15, 3)]
    else:
        angles = np.arccos(np.clip((np.trace(pose, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
    avg = float(np.mean(angles))
    if avg <= OPEN_ANGLE:
        return 1.0
    if avg >= CLOSED_ANGLE:
        return -1.0
    return 1.0 - 2.0 * (avg - OPEN_ANGLE) / (CLOSED_ANGLE - OPEN_ANGLE)


def world_states(transl, global_orient, hand_pose, cams) -> np.ndarray:
    """The float32 ``(T, 8)`` world states of per-frame camera-space MANO hands (``cams``: each
    frame's 4x4 camera-to-world matrix): position ``R t_hand + t``, orientation ``R R_hand`` as
    ``xyz`` Euler angles, pad 0, gripper from the finger articulation."""
    rot = rotation()
    orients = [np.asarray(o, dtype=np.float64) for o in global_orient]
    axis_angle = [i for i, o in enumerate(orients) if o.shape == (3,)]
    if axis_angle:  # one batched conversion (the per-frame results are the same)
        for i, m in zip(axis_angle, rot.from_rotvec(np.stack([orients[i] for i in axis_angle])).as_matrix()):
            orients[i] = m
    pos = [c[:3, :3] @ np.asarray(t, dtype=np.float64) + c[:3, 3] for t, c in zip(transl, cams)]
    euler = rot.from_matrix(np.stack([c[:3, :3] @ o for c, o in zip(cams, orients)])).as_euler("xyz")
    states = np.zeros((len(pos), 8), dtype=np.float32)
    states[:, 0:3] = np.asarray(pos, dtype=np.float32)
    states[:, 3:6] = euler
    states[:, 7] = [gripper_from_hand_pose(p) for p in hand_pose]
    return states


@OPERATORS.register_module("video_hand_action_compute_mapper")
class VideoHandActionComputeMapper(Mapper):
    """Turns per-frame MANO hand reconstructions (camera space) and camera poses into world-space
    8-dim states ``[x, y, z, roll, pitch, yaw, pad, gripper]`` and 7-DoF actions ``[dx, dy, dz,
    droll, dpitch, dyaw, gripper]`` (LIBERO / StarVLA LeRobot layout), as Data-Juicer 1.6.1 does.

    Per video ``i``: ``hand_reconstruction_field[i][hand]`` holds ``frame_ids``, ``transl``,
    ``global_orient`` (3x3 or axis-angle), ``hand_pose`` and optionally ``joints_cam`` (21x3 per
    frame); ``camera_pose_field[i]['cam_c2w']`` the ``(N, 4, 4)`` camera-to-world matrices (inline
    or a ``.npy`` path). Position = ``R t_hand + t``, orientation ``R R_hand`` as ``xyz`` Euler
    angles, gripper from the finger articulation; frames beyond the camera poses are dropped.
    The output ``tag_field_name`` gets one dict per video, ``{hand: {states, actions,
    valid_frame_ids, hand_type, joints_cam, joints_world}}`` (empty lists for a hand with fewer
    than 2 frames). A sample that already has the field is left as it is.
    """

    modality = "video"
    requires = ("scipy",)

    def __init__(self, hand_reconstruction_field: str = MetaKeys.hand_reconstruction_hawor_tags,
                 camera_pose_field: str = MetaKeys.video_camera_pose_tags,
                 tag_field_name: str = MetaKeys.hand_action_tags, hand_type: str = "both", **kwargs):
        """
        :param hand_reconstruction_field: ``__dj__meta__`` field with one HaWoR hand
            reconstruction per video
        :param camera_pose_field: ``__dj__meta__`` field with one camera pose dict (``cam_c2w``)
            per video
        :param tag_field_name: ``__dj__meta__`` field the states and actions are written to
        :param hand_type: ``right``, ``left`` or ``both``
        """
        super().__init__(**kwargs)
        if hand_type not in ("right", "left", "both"):
            raise ValueError(f"{self.name}: hand_type must be 'right', 'left' or 'both', got {hand_type!r}")
        self.hand_reconstruction_field = hand_reconstruction_field
        self.camera_pose_field = camera_pose_field
        self.tag_field_name = tag_field_name
        self.hand_type = hand_type
        self.hand_types = ["right", "left"] if hand_type == "both" else [hand_type]

    def hand_actions(self, recon: dict, c2w: np.ndarray, hand_type: str) -> dict:
        hand = recon.get(hand_type) if isinstance(recon, dict) else None
        if not hand:
            return empty_hand_result(hand_type)
        fids = hand.get("frame_ids", [])
        if len(fids) < 2:
            return empty_hand_result(hand_type)
        transl, orient, pose = hand.get("transl", []), hand.get("global_orient", []), hand.get("hand_pose", [])
        keep = [i for i, f in enumerate(fids) if f < len(c2w)]
        if len(keep) < 2:
            return empty_hand_result(hand_type)
        states = world_states([transl[i] for i in keep], [orient[i] for i in keep], [pose[i] for i in keep],
                              [c2w[fids[i]] for i in keep])
        jc = hand.get("joints_cam")
        joints_cam = joints_world = None
        if jc is not None:
            jc = np.asarray(jc, dtype=np.float64)
            rows = [i for i in keep if i < len(jc)]
            joints_cam = [jc[i].tolist() for i in rows]
            joints_world = [((c2w[fids[i], :3, :3] @ jc[i].T).T + c2w[fids[i], :3, 3]).tolist() for i in rows]
        return {"states": states.tolist(), "actions": recompute_actions(states).tolist(),
                "valid_frame_ids": [fids[i] for i in keep], "hand_type": hand_type,
                "joints_cam": joints_cam, "joints_world": joints_world}

    def process_single(self, sample):
        meta = sample.get(Fields.meta)
        if not isinstance(meta, dict):
            meta = sample[Fields.meta] = {}
        if meta.get(self.tag_field_name) is not None:
            return sample
        recons = meta.get(self.hand_reconstruction_field) or []
        poses = meta.get(self.camera_pose_field) or []
        results = []
        for recon, pose in zip(recons, poses):
            raw = pose.get("cam_c2w") if isinstance(pose, dict) else None
            if raw is None:
                results.append({ht: empty_hand_result(ht) for ht in self.hand_types})
                continue
            c2w = as_array(raw, "cam_c2w")
            results.append({ht: self.hand_actions(recon, c2w, ht) for ht in self.hand_types})
        meta[self.tag_field_name] = results
        return sample
