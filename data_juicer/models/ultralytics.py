"""Ultralytics models (YOLO detectors, FastSAM segmenters) for ops, offline, once per process.

A model is named as Data-Juicer names it (``yolo11n.pt``, ``FastSAM-x.pt``) or given as a path;
it is resolved by :func:`data_juicer.models.loader.resolve_model_file` (the path itself, then
``<models dir>/<file name>`` in each model folder), so nothing is ever downloaded: Ultralytics
would fetch a missing ``yolo11n.pt`` from GitHub, we fail at build time naming every path looked at.
"""

from __future__ import annotations

import os
from typing import Any

from data_juicer.models.loader import ensure_installed, load_once, resolve_model_file
from data_juicer.utils.lazy import require

_CLASSES = {"yolo": "YOLO", "fastsam": "FastSAM"}


def resolve_ultralytics_model(model_path: str, who: str = "", path_param: str = "model_path") -> str:
    """Local file of the Ultralytics weights ``model_path`` (a path, or a file name in the model folders)."""
    if os.path.isabs(os.path.expanduser(model_path)) or os.path.exists(model_path):
        return resolve_model_file(os.path.basename(model_path), model_path, who, path_param, what="Ultralytics model")
    return resolve_model_file(model_path, None, who, path_param, what="Ultralytics model", packaged=False)


def check_ultralytics_model(model_path: str, who: str = "", path_param: str = "model_path") -> str:
    """At op construction: the weights file; fails now if it or ``ultralytics`` is missing."""
    path = resolve_ultralytics_model(model_path, who, path_param)
    ensure_installed(("torch", "ultralytics"), who)
    return path


def load_ultralytics_model(model_path: str, kind: str = "yolo", device: str = "cpu", who: str = "") -> Any:
    """The ``ultralytics.YOLO`` / ``ultralytics.FastSAM`` model of these weights on ``device``."""
    path = resolve_ultralytics_model(model_path, who)
    # no update checks, no hub calls, no settings writes while a job runs
    os.environ.setdefault("YOLO_OFFLINE", "1")

    def build():
        ultralytics = require("ultralytics", who=who)
        try:
            model = getattr(ultralytics, _CLASSES[kind])(path)
        except Exception as e:  # ultralytics raises assorted errors for a bad checkpoint
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a valid Ultralytics {kind} checkpoint "
                             f"({type(e).__name__}: {e}); replace the file") from e
        return model.to(device)

    return load_once(("ultralytics", kind, path, device), build, owner=who or None)


def shape_groups(images: list) -> list[list[int]]:
    """Indexes of ``images`` grouped by size, in order of first appearance.

    Ultralytics letterboxes a batch of equally sized images to the smallest padded size (as it
    does for one image) but pads a mixed batch to a full square; batching by size keeps each
    image's result equal to the one Data-Juicer gets predicting it alone.
    """
    groups: dict[tuple, list[int]] = {}
    for i, img in enumerate(images):
        groups.setdefault(tuple(img.size), []).append(i)
    return list(groups.values())


def predict_boxes(model: Any, images: list, *, batch_size: int = 16, **kwargs: Any) -> list:
    """``model(images, **kwargs)`` batched by image size; one Ultralytics ``Results`` per image, in order."""
    out: list = [None] * len(images)
    for group in shape_groups(images):
        for start in range(0, len(group), batch_size):
            idx = group[start:start + batch_size]
            results = model([images[i] for i in idx], verbose=False, **kwargs)
            for i, res in zip(idx, results):
                out[i] = res
    return out
