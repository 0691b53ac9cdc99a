"""DeepFace's age / gender / race models, found offline and built once per process.

DeepFace (``pip install deepface``) keeps its weights in ``<home>/.deepface/weights/`` where
``<home>`` is ``$DEEPFACE_HOME`` (default: the user's home folder) and downloads a missing file
on first use. Nothing is downloaded here: the weights are looked for, in order, under
``$DEEPFACE_HOME`` (or ``~``) and under each model folder of this project (``$DJ_MODELS_DIR``...,
see :mod:`data_juicer.models.loader`), i.e. ``<folder>/.deepface/weights/<file>``; the first
folder holding all the files an op needs is used, and DeepFace's own loader builds the models
from it (``DEEPFACE_HOME`` is pointed at that folder while they are built). A missing file is a
FileNotFoundError naming every path looked at and the files to put there.

The weights file names depend on DeepFace's backend engine (``$DEEPFACE_BACKEND_ENGINE``, else
TensorFlow when it is installed, as DeepFace decides): ``.h5`` Keras weights for TensorFlow
(what Data-Juicer runs), ``.pth`` for PyTorch, ``.onnx`` for onnxruntime.

``$DJ_DEEPFACE_MODULES`` (comma-separated module names) are imported in each worker before the
models are built, for code that changes how DeepFace builds them (the tests use it to give
DeepFace's loaders a tiny stand-in for the VGG-Face trunk); as a ``DJ_*`` variable it reaches the
Ray workers too.
"""

from __future__ import annotations

import importlib
import os
import threading
from typing import Any

from data_juicer.models.loader import load_once, model_dirs
from data_juicer.utils.lazy import require

DEEPFACE_HOME_ENV = "DEEPFACE_HOME"
SETUP_MODULES_ENV = "DJ_DEEPFACE_MODULES"
WEIGHTS_SUBDIR = os.path.join(".deepface", "weights")
# DeepFace's facial-attribute model name -> weights file stem
DEMOGRAPHY_MODELS = {"Age": "age_model_weights", "Gender": "gender_model_weights", "Race": "race_model_single_batch"}
_EXT = {"tensorflow": ".h5", "pytorch": ".pth", "onnx": ".onnx"}
RELEASES = "https://github.com/serengil/deepface_models/releases/download/v1.0/"

_LOCK = threading.RLock()
_BUILT_HOME: dict[str, str] = {}  # DeepFace model name -> the home its cached model was built from


def backend_engine() -> str:
    """The engine DeepFace will run on (it reads ``$DEEPFACE_BACKEND_ENGINE``; imports no framework)."""
    from deepface.commons import backend_utils

    return backend_utils.get_backend_engine()


def weight_files(models=tuple(DEMOGRAPHY_MODELS), engine: str | None = None) -> dict[str, str]:
    """DeepFace model name -> the weights file name its loader reads on ``engine``."""
    engine = engine or backend_engine()
    if engine not in _EXT:
        raise ValueError(f"DeepFace backend engine '{engine}' is not supported here; set "
                         f"DEEPFACE_BACKEND_ENGINE to one of {', '.join(_EXT)}")
    return {m: DEMOGRAPHY_MODELS[m] + _EXT[engine] for m in models}


def deepface_homes() -> list[str]:
    """Folders that may hold ``.deepface/weights/``: DeepFace's own home, then the model folders."""
    own = os.environ.get(DEEPFACE_HOME_ENV) or os.path.expanduser("~")
    homes = [os.path.abspath(os.path.expanduser(own)), *model_dirs()]
    return list(dict.fromkeys(homes))


def resolve_deepface_home(models=tuple(DEMOGRAPHY_MODELS), who: str = "", engine: str | None = None) -> str:
    """The first folder whose ``.deepface/weights/`` holds the weights of all ``models``, or a
    FileNotFoundError naming every path looked at and what to put there."""
    files = weight_files(models, engine)
    looked = []
    for home in deepface_homes():
        paths = [os.path.join(home, WEIGHTS_SUBDIR, f) for f in files.values()]
        if all(os.path.isfile(p) for p in paths):
            return home
        looked += [p for p in paths if not os.path.isfile(p)]
    by = f"{who}: " if who else ""
    names = ", ".join(files.values())
    raise FileNotFoundError(
        f"{by}DeepFace's weights were not found (models are never downloaded here); missing: "
        f"{'; '.join(looked)}. Put {names} (DeepFace's release files, {RELEASES}<name>) in "
        f"<folder>/{WEIGHTS_SUBDIR}/ where <folder> is $DEEPFACE_HOME (default ~) or one of the model "
        f"folders ($DJ_MODELS_DIR...), e.g. {os.path.join(deepface_homes()[0], WEIGHTS_SUBDIR)}.")


def _set_tf_threads(threads: int) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TensorFlow's C++ start-up chatter
    import tensorflow as tf

    try:  # only possible before TensorFlow's runtime starts; later calls keep the first setting
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(1)
    except RuntimeError:
        pass


def _build(home: str, models: tuple[str, ...], threads: int, who: str):
    require("deepface", who=who)
    for name in filter(None, (m.strip() for m in os.environ.get(SETUP_MODULES_ENV, "").split(","))):
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise ImportError(f"{who}: ${SETUP_MODULES_ENV} names module '{name}', which cannot be "
                              f"imported ({e}); fix the name or its PYTHONPATH") from e
    deepface_api = require("deepface.DeepFace", who=who, recipe_hint=False)
    from deepface.modules import modeling

    if backend_engine() == "tensorflow":
        _set_tf_threads(threads)
    with _LOCK:
        old = os.environ.get(DEEPFACE_HOME_ENV)
        os.environ[DEEPFACE_HOME_ENV] = home
        try:
            for m in models:
                cache = getattr(modeling, "cached_models", None) or {}
                if _BUILT_HOME.get(m) not in (None, home):  # DeepFace caches by name: rebuild from this home
                    cache.get("facial_attribute", {}).pop(m, None)
                modeling.build_model(task="facial_attribute", model_name=m)
                _BUILT_HOME[m] = home
        finally:
            if old is None:
                os.environ.pop(DEEPFACE_HOME_ENV, None)
            else:
                os.environ[DEEPFACE_HOME_ENV] = old
    return deepface_api


def load_deepface(home: str, models=tuple(DEMOGRAPHY_MODELS), threads: int = 1, who: str = "") -> Any:
    """``deepface.DeepFace`` with ``models`` built from ``<home>/.deepface/weights`` (once per process:
    DeepFace then serves them from its own model cache to ``DeepFace.analyze``)."""
    models = tuple(models)
    return load_once(("deepface", home, models), lambda: _build(home, models, threads, who), owner=who or None)
