"""Hugging Face vision / vision-language / audio models for ops: found offline, loaded once per worker.

Built on :mod:`data_juicer.models.loader` (name -> local folder, the per-process cache that an
op releases when its pass is done). What this adds for the model-backed media ops:

- the model class is the one the folder was saved with (``config.architectures[0]``), or one
  of our own named architectures (``ARCHITECTURES``: the LAION aesthetics predictors that
  Data-Juicer loads through ``simple-aesthetics-predictor``);
- the device is ``cuda`` when the op asks for it (``accelerator: cuda``) and a GPU is there,
  else ``cpu``; on CUDA weights are half precision (``float16``, or ``$DJ_MODEL_DTYPE``:
  ``float32`` / ``bfloat16`` / ``float16``), on CPU ``float32``;
- :func:`forward_chunks` runs a model over many inputs in fixed-size chunks under
  ``torch.inference_mode`` (the ops gather the inputs of a whole batch of samples first).

Ops call :func:`check_vision_model` when they are built (a missing model or package fails
then, naming every path looked at) and :func:`load_vision_model` on first use in a worker.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from data_juicer.models.loader import ensure_installed, load_once, resolve_hf_model
from data_juicer.utils.lazy import require

DTYPE_ENV = "DJ_MODEL_DTYPE"
# inputs per forward pass (images or image-text pairs); a GPU takes bigger chunks
CPU_CHUNK = 32
GPU_CHUNK = 128


def check_vision_model(name: str, who: str = "", dists: Sequence[str] = ("torch", "transformers")) -> str:
    """At op construction: the local folder of model ``name``; fails now if it or a package is missing."""
    ensure_installed(tuple(dists), who)
    return resolve_hf_model(name, who=who)


def pick_device(accelerator: str | None) -> str:
    """``cuda`` when the op runs on the accelerator (``accelerator: cuda``) and a GPU is visible, else ``cpu``."""
    if str(accelerator or "cpu").startswith("cuda"):
        torch = require("torch")
        if torch.cuda.is_available():
            return "cuda"
    return "cpu"


def op_device(op) -> str:
    """The device an op's model runs on (see :func:`pick_device`)."""
    return pick_device(getattr(op, "accelerator", None))


def pick_dtype(device: str):
    """The weight dtype for ``device``: float32 on CPU; float16 on CUDA unless ``$DJ_MODEL_DTYPE`` says otherwise."""
    torch = require("torch")
    wanted = os.environ.get(DTYPE_ENV, "").strip().lower()
    if device == "cpu":
        return torch.float32
    if wanted in ("float32", "fp32"):
        return torch.float32
    if wanted in ("bfloat16", "bf16"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float16


def chunk_size(device: str) -> int:
    return GPU_CHUNK if device != "cpu" else CPU_CHUNK


# -- our own architectures (model code Data-Juicer takes from small packages) -----------------
_ARCH_CACHE: dict[str, Any] = {}


def aesthetics_class(variant: str):
    """The LAION aesthetics predictor head on CLIP's projected image embedding.

    ``variant`` is ``v1`` (one linear layer), ``v2_linear`` or ``v2_relu`` (an MLP 1024-128-64-16-1,
    with ReLUs in ``v2_relu``), with the module names of ``simple-aesthetics-predictor`` 0.1.2, so
    its saved model folders (``shunk031/aesthetics-predictor-*``) load unchanged. Written here
    because that package pins ``transformers<5``.
    """
    if variant in _ARCH_CACHE:
        return _ARCH_CACHE[variant]
    torch = require("torch")
    transformers = require("transformers")
    nn = torch.nn

    class _Aesthetics(transformers.CLIPVisionModelWithProjection):
        def __init__(self, config):
            super().__init__(config)
            d = config.projection_dim
            if variant == "v1":
                self.predictor = nn.Linear(d, 1)
            else:
                relu = variant == "v2_relu"
                sizes = [(d, 1024, 0.2), (1024, 128, 0.2), (128, 64, 0.1), (64, 16, None)]
                layers = []
                for a, b, p in sizes:
                    layers.append(nn.Linear(a, b))
                    if relu:
                        layers.append(nn.ReLU())
                    if p is not None:
                        layers.append(nn.Dropout(p))
                layers.append(nn.Linear(16, 1))
                self.layers = nn.Sequential(*layers)
            self.post_init()

        def forward(self, pixel_values=None, **kwargs):
            embeds = super().forward(pixel_values=pixel_values, return_dict=True).image_embeds
            embeds = embeds / embeds.norm(dim=-1, keepdim=True)
            head = self.predictor if variant == "v1" else self.layers
            return transformers.modeling_outputs.ImageClassifierOutputWithNoAttention(
                logits=head(embeds), hidden_states=embeds)

    names = {"v1": "AestheticsPredictorV1", "v2_linear": "AestheticsPredictorV2Linear",
             "v2_relu": "AestheticsPredictorV2ReLU"}
    _Aesthetics.__name__ = _Aesthetics.__qualname__ = names[variant]
    _ARCH_CACHE[variant] = _Aesthetics
    return _Aesthetics


def aesthetics_variant(name: str) -> str:
    """The predictor variant a model name/path stands for, as Data-Juicer picks it from the name."""
    if "v1" in name:
        return "v1"
    if "v2" in name and "linear" in name:
        return "v2_linear"
    if "v2" in name and "relu" in name:
        return "v2_relu"
    raise ValueError(f"aesthetics model '{name}' is not supported: its name must say v1, v2 + linear, "
                     "or v2 + relu (as shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE)")


def aesthetics_variant_of(name: str, folder: str) -> str:
    """The variant the model name says, else the one its folder's path says."""
    try:
        return aesthetics_variant(name)
    except ValueError:
        return aesthetics_variant(folder)


def _aesthetics_for(name: str, folder: str):
    return aesthetics_class(aesthetics_variant_of(name, folder))


def age_gender_class():
    """audEERING's wav2vec2 age/gender model (``audeering/wav2vec2-large-robust-24-ft-age-gender``):
    wav2vec2, mean-pooled, then an age head (1 value, 0-1 = 0-100 years) and a gender head
    (softmax over female, male, child), with the module names of its checkpoint."""
    if "age_gender" in _ARCH_CACHE:
        return _ARCH_CACHE["age_gender"]
    torch = require("torch")
    transformers = require("transformers")
    nn = torch.nn

    class ModelHead(nn.Module):
        def __init__(self, config, num_labels):
            super().__init__()
            self.dense = nn.Linear(config.hidden_size, config.hidden_size)
            self.dropout = nn.Dropout(config.final_dropout)
            self.out_proj = nn.Linear(config.hidden_size, num_labels)

        def forward(self, x):
            return self.out_proj(self.dropout(torch.tanh(self.dense(self.dropout(x)))))

    class AgeGenderModel(transformers.Wav2Vec2PreTrainedModel):
        def __init__(self, config):
            super().__init__(config)
            self.wav2vec2 = transformers.Wav2Vec2Model(config)
            self.age = ModelHead(config, 1)
            self.gender = ModelHead(config, 3)
            self.post_init()

        def forward(self, input_values, **kwargs):
            hidden = self.wav2vec2(input_values)[0].mean(dim=1)
            return hidden, self.age(hidden), torch.softmax(self.gender(hidden), dim=1)

    _ARCH_CACHE["age_gender"] = AgeGenderModel
    return AgeGenderModel


# architecture name -> f(model name, folder) -> model class
ARCHITECTURES: dict[str, Callable[[str, str], Any]] = {"aesthetics": _aesthetics_for,
                                                       "wav2vec2_age_gender": lambda name, folder: age_gender_class()}


# -- loading --------------------------------------------------------------------------------
def _model_class(transformers, config, fallback: str):
    auto_map = getattr(config, "auto_map", None)
    if auto_map:
        name = next((k for k in auto_map if k.startswith("AutoModel")), fallback)
        return getattr(transformers, name)
    for name in getattr(config, "architectures", None) or []:
        cls = getattr(transformers, name, None)
        if cls is not None:
            return cls
    return getattr(transformers, fallback)


# image processors: transformers 5 picks its torchvision-based ones when torchvision is installed; the PIL
# ones are what Data-Juicer 1.6.1 (transformers 4) runs for these checkpoints, give its values to ~1e-7 and
# cost a seventh of the CPU per image on CPU
_PIL_BACKEND = ("AutoProcessor", "AutoImageProcessor", "CLIPProcessor", "BlipProcessor", "Blip2Processor")


def _load_processor(cls, folder: str, kw: dict):
    if cls.__name__ in _PIL_BACKEND:
        try:
            return cls.from_pretrained(folder, backend="pil", **kw)
        except (TypeError, ValueError):  # a processor (or transformers release) without image backends
            pass
    return cls.from_pretrained(folder, **kw)


def load_vision_model(name: str, *, who: str = "", device: str = "cpu", arch: str | None = None,
                      trust_remote_code: bool = False, processor: str = "AutoProcessor",
                      fallback_class: str = "AutoModel", dtype: Any = None) -> tuple[Any, Any]:
    """``(model, processor)`` of the local Hugging Face model ``name``, in eval mode on ``device``.

    ``arch`` names one of ``ARCHITECTURES`` (else the folder's own class is used);
    ``processor`` is the transformers class loading the pre-processing (``AutoProcessor``,
    ``CLIPProcessor``, ``AutoImageProcessor``, ``AutoFeatureExtractor``...).
    """
    folder = resolve_hf_model(name, who=who)
    require("torch", who=who)
    dtype = dtype or pick_dtype(device)

    def build():
        transformers = require("transformers", who=who)
        kw = {"local_files_only": True, "trust_remote_code": trust_remote_code}
        try:
            if arch:
                cls = ARCHITECTURES[arch](name, folder)
            else:
                cls = _model_class(transformers, transformers.AutoConfig.from_pretrained(folder, **kw),
                                   fallback_class)
            model = cls.from_pretrained(folder, dtype=dtype, **kw)
            proc = _load_processor(getattr(transformers, processor), folder, kw)
        except (OSError, ValueError) as e:
            raise FileNotFoundError(f"{who + ': ' if who else ''}could not load the Hugging Face model in "
                                    f"{folder} ({e}); the folder must hold a saved model and its processor") from e
        model = model.to(device).eval()
        return model, proc

    key = ("hf_vision", folder, arch, processor, fallback_class, device, str(dtype), trust_remote_code)
    return load_once(key, build, owner=who or None)


def to_model(inputs, model):
    """Move a processor's output to the model's device; floating tensors also to its dtype."""
    torch = require("torch")
    out = {}
    for k, v in dict(inputs).items():
        if isinstance(v, torch.Tensor):
            v = v.to(model.device, dtype=model.dtype) if v.is_floating_point() else v.to(model.device)
        out[k] = v
    return out


def forward_chunks(items: Sequence, step: Callable[[Sequence], Any], size: int) -> list:
    """``step`` over ``items`` in chunks of ``size`` under ``torch.inference_mode``; results concatenated.

    ``step`` returns a tensor (first dim = chunk length) or a list per chunk; the result is a list
    of per-item values (tensors become Python floats / lists on the CPU, in float32).
    """
    torch = require("torch")
    out: list = []
    with torch.inference_mode():
        for i in range(0, len(items), size):
            res = step(items[i:i + size])
            if isinstance(res, torch.Tensor):
                res = res.detach().float().cpu().tolist()
            out.extend(res)
    return out
