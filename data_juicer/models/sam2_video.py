"""SAM2 video object tracking (Hugging Face ``transformers``' ``Sam2VideoModel``), offline, once per process.

A SAM2 model is named as Data-Juicer names it (``facebook/sam2.1-hiera-tiny``) or given as a
folder, and resolved by :func:`data_juicer.models.loader.resolve_hf_model` (a missing model
fails at op construction naming every place looked at). The folder is loaded as a
``Sam2VideoModel`` with its ``Sam2VideoProcessor`` (``local_files_only``: nothing is downloaded).

:func:`track_boxes` runs what Data-Juicer's ``video_object_segmenting_mapper`` runs on one video:
an inference session over all the frames, the boxes added on frame 0 (one object per box), the
frame-0 forward pass, then ``propagate_in_video_iterator`` with each frame's masks brought back
to the video size by the processor's ``post_process_masks``.
"""

from __future__ import annotations

from typing import Any

from data_juicer.models.loader import ensure_installed, load_once, resolve_hf_model
from data_juicer.utils.lazy import require

REQUIRES = ("torch", "transformers")
DTYPES = ("fp32", "fp16", "bf16")


def check_sam2(name: str, who: str = "") -> str:
    """At op construction: the local folder of SAM2 model ``name``; fails now when it or a package is missing."""
    ensure_installed(REQUIRES, who)
    return resolve_hf_model(name, who=who, path_param="sam2_hf_model")


def pick_dtype(torch_dtype: str, device: str):
    """The torch dtype to run in: ``torch_dtype`` on a GPU that supports it; on a GPU without
    bf16 support ``bf16`` becomes fp32; on the CPU always fp32 (half precision on the CPU is slow
    and loses accuracy; Data-Juicer would run the requested dtype there too)."""
    torch = require("torch")
    if torch_dtype not in DTYPES:
        raise ValueError(f"torch_dtype must be one of {', '.join(DTYPES)}, got {torch_dtype!r}")
    if not str(device).startswith("cuda"):
        return torch.float32
    if torch_dtype == "bf16":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    return torch.float16 if torch_dtype == "fp16" else torch.float32


def load_sam2(name: str, device: str = "cpu", dtype: Any = None, who: str = "") -> tuple[Any, Any]:
    """``(Sam2VideoModel, Sam2VideoProcessor)`` of model ``name`` on ``device`` in ``dtype``, in eval mode."""
    folder = resolve_hf_model(name, who=who, path_param="sam2_hf_model")

    def build():
        torch = require("torch", who=who)
        transformers = require("transformers", who=who)
        if not hasattr(transformers, "Sam2VideoModel"):
            raise ImportError(f"{who + ': ' if who else ''}transformers {transformers.__version__} has no "
                              "Sam2VideoModel; install transformers>=4.56")
        try:
            model = transformers.Sam2VideoModel.from_pretrained(folder, dtype=dtype or torch.float32,
                                                                local_files_only=True)
            processor = transformers.Sam2VideoProcessor.from_pretrained(folder, local_files_only=True)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{who + ': ' if who else ''}could not load a SAM2 video model from {folder} "
                             f"({type(e).__name__}: {e}); the folder must hold a Hugging Face "
                             "Sam2VideoModel (config.json, weights) and its processor") from e
        return model.to(device).eval(), processor

    return load_once(("sam2_video", folder, device, str(dtype)), build, owner=who or None)


def track_boxes(model: Any, processor: Any, frames: list, boxes: list[list[int]], device: str = "cpu",
                dtype: Any = None, binarize: bool = True) -> list[list[Any]]:
    """Masks of the objects boxed on frame 0, through the video.

    ``frames``: the video's RGB frames (H x W x 3 uint8 arrays); ``boxes``: one x1 y1 x2 y2 pixel
    box per object on the first frame. Returns, per propagated frame, one mask tensor per object
    (1 x H x W: booleans when ``binarize``, else the upscaled mask logits), on the CPU.
    """
    torch = require("torch")
    dtype = dtype or torch.float32
    with torch.inference_mode():
        session = processor.init_video_session(video=frames, inference_device=device, dtype=dtype)
        processor.add_inputs_to_inference_session(inference_session=session, frame_idx=0,
                                                  obj_ids=list(range(len(boxes))), input_boxes=[boxes])
        model(inference_session=session, frame_idx=0)
        size = [[session.video_height, session.video_width]]
        out = []
        for step in model.propagate_in_video_iterator(session):
            masks = processor.post_process_masks([step.pred_masks], original_sizes=size, binarize=binarize)[0]
            out.append([masks[i].cpu() for i in range(len(session.obj_ids))])
    return out
