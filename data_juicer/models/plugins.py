"""Plug-in interface for models whose code no registry package carries ("model code not bundled").

Some Data-Juicer ops run models whose code lives only in a research repository (Video Depth
Anything, DeepCalib, DROID-Calib, MoGe, MegaSaM, VGGT, SAM 3D Body, WiLoR, HaWoR, TalkNet,
MMPose's whole-body models...). Data-Juicer clones those repositories at run time; this project
never fetches code. Instead each such op does everything around the model itself (finding the
weights, reading media, sampling frames, batching, post-processing, writing its tags) and calls
the model through a *predictor* that a user who has the code plugs in.

A plug-in is a **factory** registered for a *kind* (one per op family, see ``PLUGIN_KINDS``)::

    from data_juicer.models.plugins import register_plugin

    @register_plugin("video_depth")
    def make_depth(model_path, device, **options):
        net = VideoDepthAnything(...).load(model_path).to(device).eval()   # the user's code
        def predict(batch):            # batch: list of inputs, as PLUGIN_KINDS[kind].inputs says
            return [net.infer(x) for x in batch]   # one output per input, as .outputs says
        return predict

The factory is called once per worker process (per actor on Ray) with the local path of the
weights (resolved offline, as every model here) and the device (``cpu`` / ``cuda``); it returns
the predictor, a callable mapping a list of inputs to a list of outputs of the same length.

Plug-ins are found, in order: registered in this process with :func:`register_plugin`; in the
modules named by ``$DJ_MODEL_PLUGINS`` (comma-separated, imported on first use in every worker,
so they work in worker processes and Ray actors too); in the ``data_juicer.model_plugins``
entry-point group of installed packages (entry-point name = kind, value = the factory).
A missing plug-in is a :class:`PluginNotFoundError` naming the kind, the contract and these
three ways to provide one.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from data_juicer.models.loader import load_once

PLUGINS_ENV = "DJ_MODEL_PLUGINS"
ENTRY_POINT_GROUP = "data_juicer.model_plugins"

Predictor = Callable[[list], list]
Factory = Callable[..., Predictor]


@dataclass(frozen=True)
class PluginKind:
    """The contract of one kind of plug-in: what its predictor takes and returns (per item)."""

    kind: str
    model: str
    inputs: str
    outputs: str


PLUGIN_KINDS: dict[str, PluginKind] = {k.kind: k for k in (
    PluginKind("video_depth", "Video Depth Anything (DepthAnything/Video-Depth-Anything)",
               "{'frames': uint8 array (T, H, W, 3) RGB, 'fps': float, 'input_size': int (518), 'fp32': bool}",
               "{'depths': float array (T, H, W) (relative depth, or metres for a metric model), 'fps': float}"),
    PluginKind("camera_calibration_deepcalib", "DeepCalib (alexvbogdan/DeepCalib)",
               "uint8 array (299, 299, 3) RGB frame",
               "{'focal': float (normalised focal length), 'distortion': float (xi)}"),
    PluginKind("camera_calibration_droidcalib", "DROID-Calib (boschresearch/DroidCalib)",
               "{'frames': uint8 array (T, H, W, 3) RGB, 'intrinsics_guess': [fx, fy, cx, cy]}",
               "{'intrinsics': [fx, fy, cx, cy], 'poses': float array (T, 7)}"),
    PluginKind("camera_calibration_moge", "MoGe-2 (microsoft/MoGe)",
               "float array (3, H, W) RGB in [0, 1]",
               "{'points': (H, W, 3), 'depth': (H, W), 'mask': bool (H, W), 'intrinsics': (3, 3)}"),
    PluginKind("camera_pose_megasam", "MegaSaM (mega-sam/mega-sam)",
               "{'frames': uint8 array (T, H, W, 3) RGB, 'depths': float array (T, H, W), "
               "'intrinsics': (3, 3)}",
               "{'cam_c2w': float array (T, 4, 4), 'intrinsics': (3, 3), 'depths': (T, H, W)}"),
    PluginKind("vggt", "VGGT (facebookresearch/vggt)",
               "float array (S, 3, H, W) RGB in [0, 1], H and W multiples of 14",
               "{'extrinsic': (S, 3, 4), 'intrinsic': (S, 3, 3), 'depth': (S, H, W, 1), "
               "'depth_conf': (S, H, W), 'world_points': (S, H, W, 3), 'world_points_conf': (S, H, W)}"),
    PluginKind("sam_3d_body", "SAM 3D Body (facebookresearch/sam-3d-body)",
               "uint8 array (H, W, 3) RGB image",
               "list of per-person dicts: {'bbox': [x1, y1, x2, y2], 'pred_vertices': (V, 3), "
               "'pred_keypoints_3d': (K, 3), 'pred_keypoints_2d': (K, 2), 'pred_cam_t': (3,), "
               "'focal_length': float}"),
    PluginKind("hand_reconstruction", "WiLoR (rolpotamias/WiLoR)",
               "uint8 array (H, W, 3) RGB frame",
               "list of per-hand dicts: {'bbox': [x1, y1, x2, y2], 'is_right': bool, "
               "'vertices': (778, 3), 'keypoints_3d': (21, 3), 'cam_t': (3,), 'focal_length': float}"),
    PluginKind("hand_reconstruction_hawor", "HaWoR (ThunderVVV/HaWoR)",
               "{'frames': uint8 array (T, H, W, 3) RGB, 'focal_length': float}",
               "{'left': per-frame list of hand dicts or None, 'right': per-frame list of hand dicts or None}"),
    PluginKind("active_speaker", "TalkNet-ASD (TaoRuijie/TalkNet-ASD)",
               "{'faces': uint8 array (T, 112, 112) grey face crops, 'audio_mfcc': float array (4T, 13)}",
               "float array (T,) per-frame speaking scores"),
    PluginKind("human_tracks", "a face/body detector + tracker (Light-ASD's S3FD pipeline)",
               "{'frames': uint8 array (T, H, W, 3) RGB, 'fps': float}",
               "list of tracks: {'frames': [int], 'bboxes': [[x1, y1, x2, y2]]}"),
    PluginKind("mmpose", "an MMPose/MMDeploy pose model (mmpose + mmcv: mmcv has no wheel for this torch)",
               "uint8 array (H, W, 3) BGR image; the factory also gets deploy_cfg, model_cfg, model_files",
               "{'keypoints': (N, K, 2), 'keypoint_scores': (N, K), 'bboxes': (N, 4), 'bbox_scores': (N,), "
               "'keypoint_names': [K names]}"),
)}

_REGISTRY: dict[str, Factory] = {}
_LOCK = threading.RLock()
_ENV_LOADED: set[str] = set()


class PluginNotFoundError(LookupError):
    """No plug-in is registered for a kind whose model code is not bundled."""


def register_plugin(kind: str, factory: Factory | None = None):
    """Register ``factory`` for ``kind`` (also usable as a decorator). A later one replaces an earlier."""
    if kind not in PLUGIN_KINDS:
        raise ValueError(f"unknown plug-in kind {kind!r}; known kinds: {', '.join(sorted(PLUGIN_KINDS))}")

    def add(f: Factory) -> Factory:
        if not callable(f):
            raise TypeError(f"plug-in for {kind!r} must be callable(model_path, device, **options)")
        with _LOCK:
            _REGISTRY[kind] = f
        return f

    return add(factory) if factory is not None else add


def unregister_plugin(kind: str) -> None:
    """Forget the plug-in registered for ``kind`` in this process (tests)."""
    with _LOCK:
        _REGISTRY.pop(kind, None)
        _ENV_LOADED.clear()  # the $DJ_MODEL_PLUGINS modules register again at the next lookup


def _import_env_modules() -> list[str]:
    names = [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]
    for name in names:
        if name in _ENV_LOADED:
            continue
        try:
            if name in sys.modules:  # imported before (its registrations may be gone): run it again
                importlib.reload(sys.modules[name])
            else:
                importlib.import_module(name)
        except ImportError as e:
            raise PluginNotFoundError(f"${PLUGINS_ENV} names module '{name}', which cannot be imported ({e}); "
                                      "fix the module name or its PYTHONPATH") from e
        _ENV_LOADED.add(name)
    return names


def _entry_point(kind: str) -> Factory | None:
    try:
        eps = metadata.entry_points(group=ENTRY_POINT_GROUP)
    except TypeError:  # pragma: no cover - old importlib.metadata
        eps = metadata.entry_points().get(ENTRY_POINT_GROUP, [])
    for ep in eps:
        if ep.name == kind:
            return ep.load()
    return None


def find_plugin(kind: str, who: str = "") -> Factory:
    """The factory for ``kind``, or a PluginNotFoundError saying what is missing and how to plug it in."""
    if kind not in PLUGIN_KINDS:
        raise ValueError(f"unknown plug-in kind {kind!r}")
    with _LOCK:
        if kind in _REGISTRY:
            return _REGISTRY[kind]
    modules = _import_env_modules()
    with _LOCK:
        if kind in _REGISTRY:
            return _REGISTRY[kind]
    ep = _entry_point(kind)
    if ep is not None:
        return ep
    spec = PLUGIN_KINDS[kind]
    by = f"{who}: " if who else ""
    looked = (f"the plug-ins registered in this process ({', '.join(sorted(_REGISTRY)) or 'none'}), "
              f"the modules in ${PLUGINS_ENV} ({', '.join(modules) or 'unset'}), "
              f"the '{ENTRY_POINT_GROUP}' entry points of installed packages")
    raise PluginNotFoundError(
        f"{by}the model code of {spec.model} is not bundled (no registry package carries it), and no "
        f"plug-in of kind '{kind}' was found; looked at {looked}. Plug it in: write a factory "
        f"`f(model_path, device, **options) -> predict(list) -> list` where each input is {spec.inputs} "
        f"and each output is {spec.outputs}; register it with "
        f"`data_juicer.models.plugins.register_plugin('{kind}', f)` in a module named in ${PLUGINS_ENV}, "
        f"or as a '{ENTRY_POINT_GROUP}' entry point named '{kind}'.")


def check_plugin(kind: str, who: str = "") -> None:
    """At op construction: fail now when no plug-in for ``kind`` can be found."""
    find_plugin(kind, who)


def load_plugin(kind: str, model_path: str | None, device: str = "cpu", who: str = "",
                **options: Any) -> Predictor:
    """The predictor of the plug-in for ``kind`` on these weights and device, built once per process."""
    factory = find_plugin(kind, who)

    def build():
        predictor = factory(model_path, device, **options)
        if not callable(predictor):
            raise TypeError(f"{who + ': ' if who else ''}the '{kind}' plug-in returned {type(predictor).__name__}, "
                            "not a predict(list) -> list callable")
        return predictor

    key = ("plugin", kind, id(factory), model_path, device, json.dumps(options, sort_keys=True, default=repr))
    return load_once(key, build, owner=who or None)


def predict(kind: str, predictor: Predictor, inputs: list, who: str = "") -> list:
    """Run ``predictor`` on ``inputs``; check it kept one output per input."""
    if not inputs:
        return []
    outputs = list(predictor(list(inputs)))
    if len(outputs) != len(inputs):
        raise ValueError(f"{who + ': ' if who else ''}the '{kind}' plug-in returned {len(outputs)} outputs "
                         f"for {len(inputs)} inputs; it must return one per input")
    return outputs


def resolve_plugin_weights(name: str, who: str = "", path_param: str | None = None) -> str:
    """Local path of the weights ``name`` of a plug-in model: ``name`` itself when it exists, else
    ``<models dir>/<name>`` in each model folder; a FileNotFoundError naming every path looked at."""
    from data_juicer.models.loader import resolve_model_file

    if os.path.exists(os.path.expanduser(name)):
        return os.path.abspath(os.path.expanduser(name))
    return resolve_model_file(name, None, who, path_param, packaged=False)


# RAM++ for the tagging ops (data_juicer/models/tagging.py holds the pre/post-processing)
PLUGIN_KINDS.setdefault("ram", PluginKind(
    "ram", "Recognize Anything Plus, RAM++ (xinyu1205/recognize-anything)",
    "float32 array (3, 384, 384): the RGB image resized to 384x384 (bilinear), scaled to [0, 1] and normalised "
    "with ImageNet's mean and std (RAM's get_transform); the factory also gets image_size=384",
    "str: the image's English tags joined by ' | ' (RAM's generate_tag output)"))
