"""Diffusers pipelines for ops: found offline, loaded once per worker.

Data-Juicer loads its diffusion models with ``diffusers.AutoPipelineFor{Image2Image,Text2Image,
Inpainting}.from_pretrained`` (``torch_dtype`` from ``fp32`` / ``fp16`` / ``bf16``, ``revision``);
so does :func:`load_diffusion_pipeline`, from the local folder :func:`check_diffusion_model`
finds (a model folder with ``model_index.json``: ``DJ_MODELS_DIR/<org>/<name>``, the Hugging
Face cache...; see ``docs/models.md``). The pipeline runs on ``cuda`` when the op asks for it and
a GPU is there, else on the CPU. fp16 / bf16 weights on the CPU are loaded as float32 (half
precision convolutions are not supported there).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from data_juicer.models.loader import ensure_installed, load_once, resolve_hf_model
from data_juicer.utils.lazy import require

DIFFUSION_TYPES = ("image2image", "text2image", "inpainting")
DTYPES = ("fp32", "fp16", "bf16")
PIPELINE_DISTS = ("torch", "diffusers", "transformers")


def check_diffusion_model(name: str, who: str = "", dists: Sequence[str] = PIPELINE_DISTS) -> str:
    """At op construction: the local folder of pipeline ``name`` (fails now, naming every path
    looked at, if it or a package is missing, or if the folder holds no ``model_index.json``)."""
    ensure_installed(tuple(dists), who)
    folder = resolve_hf_model(name, who=who)
    if not os.path.isfile(os.path.join(folder, "model_index.json")):
        raise FileNotFoundError(f"{who + ': ' if who else ''}{folder} is not a diffusers pipeline folder "
                                f"(no model_index.json in it); save one with `pipeline.save_pretrained(folder)` "
                                f"or download the whole Hugging Face repository of {name}")
    return folder


def torch_dtype(name: str, device: str):
    """The torch dtype of Data-Juicer's ``torch_dtype`` option on ``device`` (float32 on the CPU)."""
    torch = require("torch")
    if name not in DTYPES:
        raise ValueError(f"torch_dtype must be one of {list(DTYPES)}, got {name!r}")
    if device == "cpu":
        return torch.float32
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def load_diffusion_pipeline(name: str, diffusion_type: str = "image2image", *, who: str = "", device: str = "cpu",
                            dtype: str = "fp32", revision: str = "main", trust_remote_code: bool = False,
                            pipeline_class: str | None = None) -> Any:
    """The diffusers pipeline of the local model ``name`` on ``device`` (cached per process).

    ``pipeline_class`` names a diffusers class to load with instead of the auto pipeline of
    ``diffusion_type`` (e.g. ``StableDiffusionXLPipeline``). Models are read from a local folder,
    so ``revision`` only keys the cache (the folder found is the revision used).
    """
    if diffusion_type not in DIFFUSION_TYPES:
        raise ValueError(f"Not support {diffusion_type} diffusion_type for diffusion model. "
                         f"Can only be one of {list(DIFFUSION_TYPES)}.")
    folder = check_diffusion_model(name, who=who)
    td = torch_dtype(dtype, device)

    def build():
        diffusers = require("diffusers", who=who)
        auto = {"image2image": "AutoPipelineForImage2Image", "text2image": "AutoPipelineForText2Image",
                "inpainting": "AutoPipelineForInpainting"}[diffusion_type]
        cls = getattr(diffusers, pipeline_class or auto)
        kw: dict = {"dtype": td, "local_files_only": True}
        if trust_remote_code:
            kw["trust_remote_code"] = True
        try:
            pipe = cls.from_pretrained(folder, **kw)
        except (OSError, ValueError, TypeError) as e:
            raise FileNotFoundError(f"{who + ': ' if who else ''}could not load the diffusers pipeline in {folder} "
                                    f"({e}); the folder must hold a pipeline saved with save_pretrained") from e
        pipe = pipe.to(device)
        pipe.set_progress_bar_config(disable=True)
        return pipe

    key = ("diffusers", folder, diffusion_type, pipeline_class, device, dtype, revision, trust_remote_code)
    return load_once(key, build, owner=who or None)


def seeded_generators(keys: Sequence[str], device: str = "cpu") -> list:
    """One ``torch.Generator`` per output, seeded from its key (e.g. its output path), so an
    image's noise does not depend on which other images share its batch, and a rerun draws the same."""
    import hashlib

    torch = require("torch")
    gens = []
    for k in keys:
        seed = int.from_bytes(hashlib.sha256(str(k).encode("utf-8")).digest()[:8], "little") & (2 ** 63 - 1)
        gens.append(torch.Generator(device=device).manual_seed(seed))
    return gens
