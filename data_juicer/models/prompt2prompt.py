"""Prompt-to-prompt attention control for diffusers' Stable Diffusion XL pipeline.

Two prompts are denoised together from the same starting noise; attention processors put on the
UNet make the second image follow the first one's layout (Hertz et al., "Prompt-to-Prompt Image
Editing with Cross Attention Control"), with the settings Data-Juicer's ``sdxl_prompt2prompt_mapper``
uses (its ``refine`` edit):

- cross-attention: the second prompt's tokens are aligned with the first's (a global alignment of
  the token ids: match +1, mismatch -1, gap 0); a token of the second prompt that has a partner in
  the first takes the partner's attention map of the first image, a token without one keeps its
  own. Tokens beyond the prompts (padding) take the first image's map of the same position. This
  holds at every step (``n_cross_replace`` ``default_`` 1.0), except for the word ``confetti`` of the
  second prompt, whose own map is used from 80% of the steps on (Data-Juicer's setting);
- self-attention: during the first 40% of the steps (``n_self_replace`` 0.4), in the layers with at
  most ``ceil(width / 32) ** 2`` queries, the second image takes the first one's self-attention map.

Edits apply to the text-conditioned half of a classifier-free-guided batch (to the whole batch
when guidance is off). Layers and steps that are not edited use ``scaled_dot_product_attention``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from data_juicer.utils.lazy import require

CROSS_REPLACE = 1.0  # fraction of steps the cross-attention maps are replaced (Data-Juicer's "default_")
WORD_CROSS_REPLACE = {"confetti": 0.8}  # per-word fractions (Data-Juicer's n_cross_replace)
SELF_REPLACE = 0.4  # fraction of the first steps the self-attention maps are replaced


def align_tokens(x: Sequence[int], y: Sequence[int]) -> list[int]:
    """For each token of ``y``, the index of its aligned token in ``x`` (-1: aligned with a gap).

    Needleman-Wunsch with match +1, mismatch -1, gap 0; among equal scores a gap in ``x`` is
    preferred, then a gap in ``y``, then a (mis)match, as in the prompt-to-prompt reference code.
    """
    n, m = len(x), len(y)
    score = [[0] * (m + 1) for _ in range(n + 1)]
    move = [[0] * (m + 1) for _ in range(n + 1)]  # 1: left (y only), 2: up (x only), 3: diagonal
    for j in range(1, m + 1):
        move[0][j] = 1
    for i in range(1, n + 1):
        move[i][0] = 2
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            left = score[i][j - 1]
            up = score[i - 1][j]
            diag = score[i - 1][j - 1] + (1 if x[i - 1] == y[j - 1] else -1)
            best = max(left, up, diag)
            score[i][j] = best
            move[i][j] = 1 if best == left else 2 if best == up else 3
    out = []
    i, j = n, m
    while i > 0 or j > 0:
        mv = move[i][j]
        if mv == 3:
            i, j = i - 1, j - 1
            out.append(i)
        elif mv == 1:
            j -= 1
            out.append(-1)
        else:
            i -= 1
    out.reverse()
    return out


def refinement_map(x_ids: Sequence[int], y_ids: Sequence[int], max_len: int):
    """``(index, keep)``: ``index[j]`` the position in the first prompt whose attention token ``j`` of
    the second takes, ``keep[j]`` 1 where it takes it, 0 where the token keeps its own (no partner)."""
    torch = require("torch")
    aligned = align_tokens(list(x_ids), list(y_ids))[:max_len]
    index = torch.arange(max_len, dtype=torch.int64)
    keep = torch.ones(max_len)
    for j, a in enumerate(aligned):
        index[j] = max(a, 0)
        keep[j] = 1.0 if a >= 0 else 0.0
    return index, keep


def word_token_positions(prompt: str, word: str, tokenizer) -> list[int]:
    """Positions (after the start token) of the tokens of every space-separated ``word`` in ``prompt``."""
    pos, out = 1, []
    for w in prompt.split(" "):
        n = len(tokenizer(w, add_special_tokens=False)["input_ids"]) if w else 0
        if w == word:
            out.extend(range(pos, pos + n))
        pos += n
    return out


class P2PController:
    """What the attention processors share: the token map, the step and the replacement schedule."""

    def __init__(self, prompts: Sequence[str], tokenizer, num_steps: int, width: int, height: int,
                 guided: bool, device="cpu"):
        torch = require("torch")
        if len(prompts) != 2:
            raise ValueError(f"prompt-to-prompt needs exactly 2 prompts, got {len(prompts)}")
        self.max_len = int(tokenizer.model_max_length)
        x = tokenizer(prompts[0], truncation=True, max_length=self.max_len)["input_ids"]
        y = tokenizer(prompts[1], truncation=True, max_length=self.max_len)["input_ids"]
        index, keep = refinement_map(x, y, self.max_len)
        self.index, self.keep = index.to(device), keep.to(device)
        self.num_steps = int(num_steps)
        # per step, per token of the second prompt: 1 where its attention map is replaced
        word_alpha = torch.zeros(self.num_steps + 1, self.max_len)
        word_alpha[: int(CROSS_REPLACE * (self.num_steps + 1))] = 1.0
        for word, frac in WORD_CROSS_REPLACE.items():
            where = [p for p in word_token_positions(prompts[1], word, tokenizer) if p < self.max_len]
            if where:
                end = int(frac * (self.num_steps + 1))
                word_alpha[:, where] = 0.0
                word_alpha[:end, where] = 1.0
        self.word_alpha = word_alpha.to(device)
        self.self_steps = (0, int(self.num_steps * SELF_REPLACE))
        self.self_max_queries = math.ceil(width / 32) ** 2
        self.guided = guided
        self.step = 0

    def on_step_end(self, pipe, i, t, callback_kwargs):
        self.step = i + 1
        return callback_kwargs

    def edits_self(self, queries: int) -> bool:
        return self.self_steps[0] <= self.step < self.self_steps[1] and queries <= self.self_max_queries

    def edit(self, probs, is_cross: bool):
        """``probs``: (batch * heads, queries, keys) attention of the whole batch; edited in place."""
        half = probs.shape[0] // 2 if self.guided else 0
        cond = probs[half:]
        heads = cond.shape[0] // 2
        a = cond.reshape(2, heads, *cond.shape[1:])
        base, other = a[0], a[1]
        if is_cross:
            k = other.shape[-1]
            index, keep = self.index[:k], self.keep[:k].to(probs.dtype)
            alpha = self.word_alpha[min(self.step, self.num_steps), :k].to(probs.dtype)
            refined = base[..., index] * keep + other * (1 - keep)
            new = refined * alpha + other * (1 - alpha)
        else:
            new = base
        probs[half:] = torch_stack(base, new).reshape(cond.shape)
        return probs


def torch_stack(a, b):
    torch = require("torch")
    return torch.stack([a, b])


class P2PAttnProcessor:
    """A diffusers attention processor that lets a :class:`P2PController` edit the attention maps."""

    def __init__(self, controller: P2PController):
        self.controller = controller

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, temb=None,
                 *args, **kwargs):
        torch = require("torch")
        F = torch.nn.functional
        residual = hidden_states
        if attn.spatial_norm is not None:
            hidden_states = attn.spatial_norm(hidden_states, temb)
        ndim = hidden_states.ndim
        if ndim == 4:
            b, c, h, w = hidden_states.shape
            hidden_states = hidden_states.view(b, c, h * w).transpose(1, 2)
        batch, seq, _ = hidden_states.shape if encoder_hidden_states is None else encoder_hidden_states.shape
        if attn.group_norm is not None:
            hidden_states = attn.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
        is_cross = encoder_hidden_states is not None
        query = attn.to_q(hidden_states)
        if encoder_hidden_states is None:
            encoder_hidden_states = hidden_states
        elif attn.norm_cross:
            encoder_hidden_states = attn.norm_encoder_hidden_states(encoder_hidden_states)
        key = attn.to_k(encoder_hidden_states)
        value = attn.to_v(encoder_hidden_states)
        queries = query.shape[1]
        ctl = self.controller
        if is_cross or ctl.edits_self(queries):
            attention_mask = attn.prepare_attention_mask(attention_mask, seq, batch)
            q, k, v = attn.head_to_batch_dim(query), attn.head_to_batch_dim(key), attn.head_to_batch_dim(value)
            probs = attn.get_attention_scores(q, k, attention_mask)
            probs = ctl.edit(probs, is_cross)
            hidden_states = attn.batch_to_head_dim(torch.bmm(probs, v))
        else:
            n_heads = attn.heads
            bsz = query.shape[0]
            q = query.view(bsz, -1, n_heads, query.shape[-1] // n_heads).transpose(1, 2)
            k = key.view(bsz, -1, n_heads, key.shape[-1] // n_heads).transpose(1, 2)
            v = value.view(bsz, -1, n_heads, value.shape[-1] // n_heads).transpose(1, 2)
            if attention_mask is not None:
                attention_mask = attn.prepare_attention_mask(attention_mask, seq, batch)
                attention_mask = attention_mask.view(bsz, n_heads, -1, attention_mask.shape[-1])
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask, scale=attn.scale)
            hidden_states = out.transpose(1, 2).reshape(bsz, -1, n_heads * (query.shape[-1] // n_heads))
        hidden_states = hidden_states.to(query.dtype)
        hidden_states = attn.to_out[0](hidden_states)
        hidden_states = attn.to_out[1](hidden_states)
        if ndim == 4:
            hidden_states = hidden_states.transpose(-1, -2).reshape(b, c, h, w)
        if attn.residual_connection:
            hidden_states = hidden_states + residual
        return hidden_states / attn.rescale_output_factor


def generate_pair(pipe: Any, prompts: Sequence[str], *, num_inference_steps: int, guidance_scale: float,
                  generator, height: int | None = None, width: int | None = None,
                  output_type: str = "pil") -> list:
    """The two images of ``prompts`` from ``pipe`` (a ``StableDiffusionXLPipeline``; PIL images, or what
    ``output_type`` asks the pipeline for), denoised from the same noise (drawn with ``generator``)
    under prompt-to-prompt attention control."""
    torch = require("torch")
    from diffusers.utils.torch_utils import randn_tensor

    height = height or pipe.unet.config.sample_size * pipe.vae_scale_factor
    width = width or pipe.unet.config.sample_size * pipe.vae_scale_factor
    guided = guidance_scale > 1 and pipe.unet.config.time_cond_proj_dim is None
    device = pipe._execution_device
    ctl = P2PController(prompts, pipe.tokenizer, num_inference_steps, width, height, guided, device=device)
    shape = (1, pipe.unet.config.in_channels, int(height) // pipe.vae_scale_factor,
             int(width) // pipe.vae_scale_factor)
    noise = randn_tensor(shape, generator=generator, device=torch.device(device), dtype=pipe.unet.dtype)
    latents = noise.repeat(2, 1, 1, 1)
    before = dict(pipe.unet.attn_processors)
    pipe.unet.set_attn_processor(P2PAttnProcessor(ctl))
    try:
        with torch.no_grad():
            out = pipe(list(prompts), height=height, width=width, num_inference_steps=int(num_inference_steps),
                       guidance_scale=guidance_scale, latents=latents, callback_on_step_end=ctl.on_step_end,
                       output_type=output_type)
    finally:
        pipe.unet.set_attn_processor(before)
    return list(out.images)
