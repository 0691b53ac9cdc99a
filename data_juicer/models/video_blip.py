"""Video BLIP: a BLIP-2 checkpoint that captions a whole clip (``kpyu/video-blip-*``).

Data-Juicer loads these checkpoints with its own model classes; this is our equivalent. The
weights are BLIP-2's (``Blip2ForConditionalGeneration`` names), so a saved BLIP-2 folder loads
unchanged. Only the vision tower differs: it takes ``pixel_values`` of shape
``(batch, channels, time, height, width)``, encodes every frame with BLIP-2's ViT and hands the
Q-Former the frames' patch features of each clip side by side (``(batch, time * patches,
hidden)``), so the query tokens attend over all frames at once and one caption describes the clip.

:func:`load_video_blip` finds the folder offline (see :mod:`data_juicer.models.loader`) and loads
it once per worker; the processor is the folder's BLIP-2 processor, with ``num_query_tokens``
taken from the model's config when the saved processor lacks it (as in the released video BLIP
checkpoints, which Data-Juicer fixes by passing 32), and the model's image token set to the
processor's (Data-Juicer hard-codes OPT's 50265, which is what the processor adds to OPT's vocabulary).
"""

from __future__ import annotations

from typing import Any

from data_juicer.models.vision import ARCHITECTURES, load_vision_model
from data_juicer.utils.lazy import require

_CLASSES: dict[str, Any] = {}


def video_blip_class():
    """The video BLIP model class (built on first use: transformers is imported lazily)."""
    if "model" in _CLASSES:
        return _CLASSES["model"]
    transformers = require("transformers")

    class VideoBlipVisionModel(transformers.Blip2VisionModel):
        """BLIP-2's ViT over every frame of ``(B, C, T, H, W)`` clips; features regrouped per clip."""

        def forward(self, pixel_values=None, output_attentions=None, output_hidden_states=None,
                    return_dict=None, interpolate_pos_encoding=False, **kwargs):
            if pixel_values is None:
                raise ValueError("video BLIP needs pixel_values of shape (batch, channels, time, height, width)")
            if pixel_values.dim() == 4:  # a batch of single images: clips of one frame
                pixel_values = pixel_values.unsqueeze(2)
            clips, frames = pixel_values.shape[0], pixel_values.shape[2]
            flat = pixel_values.transpose(1, 2).reshape(clips * frames, *pixel_values.shape[1:2],
                                                        *pixel_values.shape[3:])
            out = super().forward(pixel_values=flat, output_attentions=output_attentions,
                                  output_hidden_states=output_hidden_states, return_dict=True,
                                  interpolate_pos_encoding=interpolate_pos_encoding)

            def per_clip(t):  # (clips * frames, patches, hidden) -> (clips, frames * patches, hidden)
                return t.reshape(clips, frames * t.shape[1], t.shape[-1])

            hidden = tuple(per_clip(h) for h in out.hidden_states) if out.hidden_states is not None else None
            attn = (tuple(a.reshape(clips, frames, *a.shape[1:]) for a in out.attentions)
                    if out.attentions is not None else None)
            return transformers.modeling_outputs.BaseModelOutputWithPooling(
                last_hidden_state=per_clip(out.last_hidden_state),
                pooler_output=out.pooler_output.reshape(clips, frames, -1),
                hidden_states=hidden, attentions=attn)

    class VideoBlipForConditionalGeneration(transformers.Blip2ForConditionalGeneration):
        """BLIP-2 for conditional generation whose vision tower is :class:`VideoBlipVisionModel`."""

        def __init__(self, config):
            super().__init__(config)
            self.vision_model = VideoBlipVisionModel(config.vision_config)
            self.post_init()

    _CLASSES["model"] = VideoBlipForConditionalGeneration
    return VideoBlipForConditionalGeneration


ARCHITECTURES.setdefault("video_blip", lambda name, folder: video_blip_class())


def load_video_blip(name: str, *, who: str = "", device: str = "cpu", trust_remote_code: bool = False):
    """``(model, processor)`` of the video BLIP folder of ``name``, in eval mode on ``device``."""
    model, proc = load_vision_model(name, who=who, device=device, arch="video_blip",
                                    trust_remote_code=trust_remote_code, processor="AutoProcessor")
    if getattr(proc, "num_query_tokens", None) is None and hasattr(model.config, "num_query_tokens"):
        proc.num_query_tokens = model.config.num_query_tokens
    tok = getattr(proc, "tokenizer", None)
    image_token = getattr(proc, "image_token", None)
    if tok is not None and image_token is not None:
        token_id = tok.convert_tokens_to_ids(getattr(image_token, "content", image_token))
        if isinstance(token_id, int) and token_id != getattr(tok, "unk_token_id", None):
            model.config.image_token_index = token_id
            if hasattr(model.config, "image_token_id"):
                model.config.image_token_id = token_id
    return model, proc
