"""Hugging Face ``transformers`` models for ops, loaded offline from a local folder, once per process.

A model is named as Data-Juicer names it (``Qwen/Qwen2.5-0.5B``) or given as a folder; the name
is resolved by :func:`data_juicer.models.loader.resolve_hf_model` (explicit folder, model
folders, local Hugging Face cache, a package that ships it). Loaded models are owned by the op
name given as ``who`` (``loader.release_models(who)`` frees them). Everything is loaded with ``local_files_only=True``: nothing is ever
downloaded. Ops call :func:`check_hf_model` at construction (fail early, clearly) and the
``load_*`` functions on first use inside each worker process.
"""

from __future__ import annotations

import json
from typing import Any

from data_juicer.models.loader import ensure_installed, load_once, resolve_hf_model
from data_juicer.utils.lazy import require

# model_params keys that configure where/how we load, not ``from_pretrained``
_DEVICE_KEYS = ("device",)


def check_hf_model(name: str, who: str = "", dists: tuple[str, ...] = ("torch", "transformers")) -> str:
    """At op construction: the local folder of model ``name``; fails now if it or a package is missing."""
    ensure_installed(dists, who)
    return resolve_hf_model(name, who=who)


def pick_device(accelerator: str | None, model_params: dict | None = None) -> str:
    """``cuda`` when the op asks for it (or ``model_params['device']`` says so) and a GPU is there, else ``cpu``."""
    wanted = (model_params or {}).get("device") or accelerator or "cpu"
    if str(wanted).startswith("cuda"):
        torch = require("torch")
        if torch.cuda.is_available():
            return str(wanted)
    return "cpu"


def _freeze(params: dict) -> str:
    return json.dumps(params, sort_keys=True, default=repr)


def _hf_kwargs(params: dict | None) -> dict:
    kw = {k: v for k, v in (params or {}).items() if k not in _DEVICE_KEYS}
    kw["local_files_only"] = True
    return kw


def _model_class(transformers, config, fallback: str):
    """The class a model folder was saved with (``architectures[0]``), as Data-Juicer picks it."""
    auto_map = getattr(config, "auto_map", None)
    if auto_map:
        name = next((k for k in auto_map if k.startswith("AutoModel")), fallback)
        return getattr(transformers, name)
    for name in getattr(config, "architectures", None) or []:
        cls = getattr(transformers, name, None)
        if cls is not None:
            return cls
    return getattr(transformers, fallback)


def _load_processor(transformers, folder: str, kw: dict, who: str):
    try:
        return transformers.AutoProcessor.from_pretrained(folder, **kw)
    except (OSError, ValueError, KeyError, TypeError):
        try:
            return transformers.AutoTokenizer.from_pretrained(folder, **kw)
        except (OSError, ValueError) as e:
            raise ValueError(f"{who + ': ' if who else ''}no tokenizer/processor could be loaded from {folder} "
                             f"({e}); the folder must hold a Hugging Face tokenizer") from e


def load_hf_model(name: str, *, who: str = "", device: str = "cpu", model_params: dict | None = None,
                  fallback_class: str = "AutoModel", with_processor: bool = True) -> tuple[Any, Any]:
    """``(model, processor)`` of the Hugging Face model ``name`` (a name or a local folder), in eval mode.

    The model class is the one the folder was saved with (``config.architectures[0]``), else
    ``fallback_class``; ``model_params`` go to ``from_pretrained`` (``device`` excepted).
    """
    folder = resolve_hf_model(name, who=who)
    kw = _hf_kwargs(model_params)

    def build():
        require("torch", who=who)
        transformers = require("transformers", who=who)
        try:
            config = transformers.AutoConfig.from_pretrained(folder, **kw)
            cls = _model_class(transformers, config, fallback_class)
            model = cls.from_pretrained(folder, **kw)
        except OSError as e:
            raise FileNotFoundError(f"{who + ': ' if who else ''}could not load a Hugging Face model from "
                                    f"{folder}: {e}") from e
        model = model.to(device).eval()
        processor = _load_processor(transformers, folder, kw, who) if with_processor else None
        return model, processor

    return load_once(("hf_model", folder, fallback_class, device, with_processor, _freeze(kw)), build,
                     owner=who or None)


def load_hf_pipeline(name: str, task: str, *, who: str = "", device: str = "cpu",
                     model_params: dict | None = None):
    """A ``transformers.pipeline`` for ``task`` around the local model ``name``."""
    folder = resolve_hf_model(name, who=who)
    kw = _hf_kwargs(model_params)

    def build():
        transformers = require("transformers", who=who)
        model, processor = load_hf_model(name, who=who, device=device, model_params=model_params)
        extra = {}
        if isinstance(processor, transformers.PreTrainedTokenizerBase):
            extra["tokenizer"] = processor
        elif getattr(processor, "tokenizer", None) is not None:
            extra["tokenizer"] = processor.tokenizer
        return transformers.pipeline(task=task, model=model, config=model.config, **extra)

    return load_once(("hf_pipeline", folder, task, device, _freeze(kw)), build, owner=who or None)
