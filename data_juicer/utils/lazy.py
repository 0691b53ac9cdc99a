"""Lazy, explicit imports of optional packages. Nothing is ever installed at run time."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

# pip distribution name -> importable module, where they differ
_DIST_TO_MODULE = {
    "opencv-python": "cv2",
    "opencv-python-headless": "cv2",
    "opencv-contrib-python": "cv2",
    "fasttext-wheel": "fasttext",
    "fasttext-predict": "fasttext",
    "kenlm": "kenlm",
    "ufal.kenlm": "kenlm",
    "pillow": "PIL",
    "scikit-learn": "sklearn",
    "scikit-image": "skimage",
    "beautifulsoup4": "bs4",
    "python-docx": "docx",
    "pyyaml": "yaml",
    "simhash-pybind": "simhash",
    "label-studio-sdk": "label_studio_sdk",
    "sentence-transformers": "sentence_transformers",
    "dlib-bin": "dlib",
    "clip-anytorch": "clip",
}


class MissingDependencyError(ImportError):
    """An optional package an op needs is not installed."""


def module_name(dist: str) -> str:
    base = dist.split("[")[0].split("=")[0].split("<")[0].split(">")[0].strip()
    return _DIST_TO_MODULE.get(base.lower(), base.replace("-", "_"))


def is_available(dist: str) -> bool:
    return importlib.util.find_spec(module_name(dist)) is not None


def require(dist: str, who: str = "", recipe_hint: bool = True) -> ModuleType:
    """Import the module of pip distribution ``dist`` or raise a clear MissingDependencyError."""
    mod = module_name(dist)
    try:
        return importlib.import_module(mod)
    except ImportError as e:
        by = f" (needed by {who})" if who else ""
        fix = f"pip install '{dist}'"
        if recipe_hint:
            fix += " or `dj-install --config <your recipe>`"
        raise MissingDependencyError(f"package '{dist}' is not installed{by}: {e}. Install it with {fix}.") from e
