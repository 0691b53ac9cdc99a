"""Batched scoring with loaded vision models: what the image and video ops compute per image.

Each function takes a list of inputs gathered over a whole batch of samples, runs the model in
chunks (:func:`data_juicer.models.vision.forward_chunks`) and returns one value per input, with
Data-Juicer's post-processing:

- :func:`class_probs`: softmax probability of class 1 of an image classifier (NSFW, watermark);
- :func:`aesthetics_scores`: the aesthetics predictor's output (divided by 10 for LAION's
  predictors, whose scale is 0-10);
- :func:`clip_image_embeds` / :func:`clip_text_embeds`: L2-normalised CLIP embeddings; the
  similarity Data-Juicer reports is ``logit_scale.exp() * cos / 100`` (:func:`clip_logit_scale`);
- :func:`blip_itm_probs`: BLIP's image-text matching probability of each (image, text) pair.

Images are pre-processed in the same calls Data-Juicer makes (the model's own processor), so a
value equals the one-sample-at-a-time value up to float rounding.
"""

from __future__ import annotations

from typing import Sequence

from data_juicer.models.vision import chunk_size, forward_chunks, to_model
from data_juicer.utils.lazy import require


def _image_processor(processor):
    return getattr(processor, "image_processor", None) or processor


def _tokenizer(processor):
    return getattr(processor, "tokenizer", None) or processor


def class_probs(model, processor, images: Sequence, label: int = 1) -> list[float]:
    """P(class ``label``) of each image (softmax over the classifier's logits)."""
    torch = require("torch")
    size = chunk_size(model.device.type)

    def step(chunk):
        inputs = to_model(processor(images=list(chunk), return_tensors="pt"), model)
        return torch.softmax(model(**inputs).logits.float(), dim=-1)[:, label]

    return forward_chunks(images, step, size)


def aesthetics_scores(model, processor, images: Sequence, divide_by_ten: bool) -> list[float]:
    """The aesthetics predictor's score of each image (its first logit), /10 when ``divide_by_ten``."""
    size = chunk_size(model.device.type)

    def step(chunk):
        inputs = to_model(_image_processor(processor)(images=list(chunk), return_tensors="pt"), model)
        logits = model(pixel_values=inputs["pixel_values"]).logits.float()[:, 0]
        return logits / 10.0 if divide_by_ten else logits

    return forward_chunks(images, step, size)


def _normalise(x):
    return x / x.norm(p=2, dim=-1, keepdim=True)


def _features(out):
    # transformers 5 returns a model output whose pooler_output is the projected embedding
    return out if hasattr(out, "norm") else out.pooler_output


def clip_image_embeds(model, processor, images: Sequence):
    """``(n, d)`` float32 tensor of L2-normalised CLIP image embeddings (on the CPU)."""
    torch = require("torch")
    size = chunk_size(model.device.type)
    out = []
    with torch.inference_mode():
        for i in range(0, len(images), size):
            px = to_model(_image_processor(processor)(images=list(images[i:i + size]), return_tensors="pt"), model)
            feats = _features(model.get_image_features(pixel_values=px["pixel_values"]))
            out.append(_normalise(feats.float()).cpu())
    return torch.cat(out) if out else torch.zeros((0, 0))


def clip_text_embeds(model, processor, texts: Sequence[str]):
    """``(n, d)`` float32 tensor of L2-normalised CLIP text embeddings (truncated to the model's
    maximum length, as Data-Juicer's processor call)."""
    torch = require("torch")
    tok = _tokenizer(processor)
    max_len = model.config.text_config.max_position_embeddings
    size = chunk_size(model.device.type)
    out = []
    with torch.inference_mode():
        for i in range(0, len(texts), size):
            enc = tok(list(texts[i:i + size]), return_tensors="pt", truncation=True, max_length=max_len,
                      padding=True)
            enc = to_model(enc, model)
            feats = _features(model.get_text_features(input_ids=enc["input_ids"],
                                                      attention_mask=enc.get("attention_mask")))
            out.append(_normalise(feats.float()).cpu())
    return torch.cat(out) if out else torch.zeros((0, 0))


def clip_logit_scale(model) -> float:
    """``exp(logit_scale)``: CLIP's similarity logits are ``cos * this``."""
    return float(model.logit_scale.detach().float().exp().cpu())


def blip_itm_probs(model, processor, pairs: Sequence[tuple]) -> list[float]:
    """P(match) of each ``(image, text)`` pair from BLIP's image-text matching head."""
    torch = require("torch")
    max_len = model.config.text_config.max_position_embeddings
    size = chunk_size(model.device.type)

    def step(chunk):
        imgs = [p[0] for p in chunk]
        texts = [p[1] for p in chunk]
        inputs = to_model(processor(text=texts, images=imgs, return_tensors="pt", truncation=True,
                                    max_length=max_len, padding=True), model)
        out = model(**inputs)
        return torch.softmax(out.itm_score.float(), dim=-1)[:, 1]

    return forward_chunks(pairs, step, size)
