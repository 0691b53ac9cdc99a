"""Offline model loading for ops: name -> local path -> model, loaded once per process.

Nothing is downloaded. A model is found, in order, at the path the op was given explicitly,
else under the models folder (``$DJ_MODELS_DIR``, else Data-Juicer's
``$DATA_JUICER_MODELS_CACHE``, else ``~/.cache/data_juicer/models``) by the file or folder name
Data-Juicer uses for it (``en.sp.model``, ``EleutherAI/pythia-6.9b-deduped``...). Hugging Face
models may also come from the local Hugging Face cache. A missing model is a FileNotFoundError
that names every place looked at and how to provide the model.

Ops keep only names and paths (they are pickled to workers); each worker process loads a model
on first use and keeps it in a module-level cache.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from data_juicer.utils.lazy import MissingDependencyError, is_available, module_name, require

MODELS_DIR_ENV = "DJ_MODELS_DIR"
DJ_MODELS_DIR_ENV = "DATA_JUICER_MODELS_CACHE"
DEFAULT_MODELS_DIR = os.path.join("~", ".cache", "data_juicer", "models")

_MODELS: dict[tuple, Any] = {}
_LOCK = threading.Lock()


def models_dir() -> str:
    """The folder searched for models by name (read from the environment at each call)."""
    folder = os.environ.get(MODELS_DIR_ENV) or os.environ.get(DJ_MODELS_DIR_ENV) or DEFAULT_MODELS_DIR
    return os.path.abspath(os.path.expanduser(folder))


def model_key(kind: str, **params: Any) -> str:
    """A stable name for one model configuration, e.g. ``sentencepiece(lang='en')``.

    Fused ops that tokenize with the same model share their word lists in ``__dj__context__``
    under keys built from it (Data-Juicer builds them from its model key the same way).
    """
    return f"{kind}({', '.join(f'{k}={v!r}' for k, v in params.items())})"


def ensure_installed(dists: tuple[str, ...], who: str) -> None:
    """Raise MissingDependencyError if any pip distribution in ``dists`` is not importable."""
    missing = [d for d in dists if not is_available(d)]
    if missing:
        pkgs = " ".join(f"'{d}'" for d in missing)
        raise MissingDependencyError(
            f"operator '{who}' needs {', '.join(missing)} (import {', '.join(module_name(d) for d in missing)}) "
            f"for the options given, which is not installed. Install it with `pip install {pkgs}` "
            f"or `dj-install --config <your recipe>`."
        )


def _not_found(what: str, name: str, looked: list[str], who: str, path_param: str | None,
               extra: str = "") -> FileNotFoundError:
    by = f" (needed by {who})" if who else ""
    places = "; ".join(looked)
    how = [f"put it at {os.path.join(models_dir(), name)}",
           f"or set {MODELS_DIR_ENV} to a folder holding '{name}'"]
    if path_param:
        how.append(f"or give its path with the `{path_param}` parameter")
    return FileNotFoundError(f"{what} '{name}'{by} was not found; looked at: {places}. "
                             f"Models are never downloaded: {', '.join(how)}{extra}.")


def resolve_model_file(name: str, path: str | None = None, who: str = "",
                       path_param: str | None = None, what: str = "model file") -> str:
    """Local path of model file/folder ``name``: ``path`` if given, else ``<models_dir>/<name>``."""
    if path:
        full = os.path.abspath(os.path.expanduser(path))
        if os.path.exists(full):
            return full
        by = f"{who}: " if who else ""
        param = f" (parameter `{path_param}`)" if path_param else ""
        raise FileNotFoundError(f"{by}{what} path {full}{param} does not exist; fix the path in the recipe.")
    full = os.path.join(models_dir(), name)
    if os.path.exists(full):
        return full
    raise _not_found(what, name, [full], who, path_param)


def resolve_hf_model(name: str, path: str | None = None, who: str = "", path_param: str | None = None) -> str:
    """Local folder of Hugging Face model ``name``: ``path``, ``<models_dir>/<name>``, or the local HF cache."""
    if path or os.path.isdir(name):
        return resolve_model_file(name, path or name, who, path_param, what="Hugging Face model")
    full = os.path.join(models_dir(), name)
    if os.path.isdir(full):
        return full
    looked = [full]
    if is_available("huggingface-hub"):
        from huggingface_hub import constants, snapshot_download

        try:
            return snapshot_download(repo_id=name, local_files_only=True)
        except (OSError, ValueError):  # not in the cache, or not a valid repo id: report below
            looked.append(f"the Hugging Face cache ({constants.HF_HUB_CACHE})")
    raise _not_found("Hugging Face model", name, looked, who, path_param,
                     extra=f", or fetch it into the Hugging Face cache (`hf download {name}`) "
                           "on a machine with network access")


def load_once(key: tuple, factory: Callable[[], Any]) -> Any:
    """Return the model cached under ``key`` in this process, building it with ``factory`` once."""
    model = _MODELS.get(key)
    if model is None:
        with _LOCK:
            model = _MODELS.get(key)
            if model is None:
                model = _MODELS[key] = factory()
    return model


def clear_models() -> None:
    """Forget every loaded model in this process (tests, or to free memory)."""
    with _LOCK:
        _MODELS.clear()


def sentencepiece_name(lang: str) -> str:
    """File name of Data-Juicer's sentencepiece model for language ``lang``."""
    return f"{lang}.sp.model"


def load_sentencepiece(lang: str, path: str | None = None, who: str = ""):
    """The ``sentencepiece.SentencePieceProcessor`` for ``lang`` (or the model file at ``path``)."""
    full = resolve_model_file(sentencepiece_name(lang), path, who, what="sentencepiece model")

    def build():
        spm = require("sentencepiece", who=who)
        proc = spm.SentencePieceProcessor()
        try:
            proc.Load(full)
        except (OSError, RuntimeError) as e:
            raise ValueError(f"{who + ': ' if who else ''}{full} is not a valid sentencepiece model ({e}); "
                             "replace the file") from e
        return proc

    return load_once(("sentencepiece", full), build)


def check_sentencepiece(lang: str, path: str | None = None, who: str = "") -> str:
    """At op construction: fail now if sentencepiece or the model for ``lang`` is missing.

    Returns the model key that names this tokenizer in ``__dj__context__`` keys.
    """
    ensure_installed(("sentencepiece",), who)
    resolve_model_file(sentencepiece_name(lang), path, who, what="sentencepiece model")
    return model_key("sentencepiece", lang=lang)


def sentencepiece_tokenizer(lang: str, path: str | None = None,
                            who: str = "") -> Callable[[list[str]], list[list[str]]]:
    """A function mapping a list of texts to their sentencepiece pieces (one batched call)."""
    proc = load_sentencepiece(lang, path, who)
    # one thread: ops already run in parallel worker processes
    return lambda texts: proc.encode(texts, out_type=str, num_threads=1)


def load_hf_tokenizer(name: str, path: str | None = None, who: str = ""):
    """The Hugging Face tokenizer of model ``name`` (or of the folder at ``path``), loaded offline."""
    folder = resolve_hf_model(name, path, who)

    def build():
        transformers = require("transformers", who=who)
        return transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)

    return load_once(("hf_tokenizer", folder), build)
