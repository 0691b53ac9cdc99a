"""Tiny models with seeded random weights for the diffusers ops (and other model ops of the second
round), saved in the layout each op loads from (``DJ_MODELS_DIR/<Data-Juicer's model name>``), so
the ops' real loading code runs.

- :func:`tiny_sd_img2img`: a Stable Diffusion pipeline (UNet2DConditionModel, AutoencoderKL,
  CLIPTextModel + the tiny CLIP BPE tokenizer of ``vision_tiny_models``, PNDM scheduler, no
  safety checker) saved with ``save_pretrained``, what ``AutoPipelineForImage2Image`` loads.
- :func:`tiny_t5_summarizer`: a T5 seq2seq model with the MiniLM WordPiece tokenizer.

Weights come from numpy's legacy ``RandomState`` (``tests.models.tiny_other_models.fill_random``:
stable across versions), so values written into tests stay valid. Random weights test loading,
batching, pre/post-processing and output shapes, not quality.
"""

from __future__ import annotations

import os

from tests.models.tiny_other_models import fill_random


def _sd_parts(folder: str, seed: int = 0, cross_dim: int = 32):
    from diffusers import AutoencoderKL, PNDMScheduler, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    from tests.models.vision_tiny_models import clip_tokenizer

    tok = clip_tokenizer(os.path.join(folder, ".tok"))
    tok.model_max_length = 16
    unet = UNet2DConditionModel(block_out_channels=(16, 32), layers_per_block=1, sample_size=16, in_channels=4,
                                out_channels=4, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
                                up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=cross_dim,
                                attention_head_dim=4, norm_num_groups=8)
    # four blocks: latents 1/8 of the image, as Stable Diffusion's (a 512 canvas is a 64x64 latent)
    vae = AutoencoderKL(block_out_channels=(8, 8, 16, 16), in_channels=3, out_channels=3, latent_channels=4,
                        down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
                        norm_num_groups=4, sample_size=32, layers_per_block=1)
    text = CLIPTextModel(CLIPTextConfig(vocab_size=len(tok), hidden_size=cross_dim, intermediate_size=37,
                                        num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=16,
                                        bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                                        pad_token_id=tok.pad_token_id))
    sched = PNDMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", skip_prk_steps=True)
    return (fill_random(unet, seed, std=0.05), fill_random(vae, seed + 1, std=0.05),
            fill_random(text, seed + 2, std=0.1), tok, sched)


def tiny_sd_img2img(folder, seed: int = 0) -> str:
    """A StableDiffusionImg2ImgPipeline of tiny seeded parts, saved in ``folder``."""
    from diffusers import StableDiffusionImg2ImgPipeline

    unet, vae, text, tok, sched = _sd_parts(str(folder), seed)
    pipe = StableDiffusionImg2ImgPipeline(vae=vae, text_encoder=text, tokenizer=tok, unet=unet, scheduler=sched,
                                          safety_checker=None, feature_extractor=None,
                                          requires_safety_checker=False)
    os.makedirs(folder, exist_ok=True)
    pipe.save_pretrained(folder)
    return str(folder)


def tiny_t5_summarizer(folder, seed: int = 0) -> str:
    """A T5ForConditionalGeneration with the MiniLM WordPiece tokenizer (what
    ``AutoModelForSeq2SeqLM`` / ``AutoTokenizer`` load), for the summarizing captioner."""
    from transformers import T5Config, T5ForConditionalGeneration

    from tests.ops.hf_tiny_models import _fill, _tokenizer

    tok = _tokenizer(bos_eos=True)
    cfg = T5Config(vocab_size=len(tok), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2,
                   num_heads=2, pad_token_id=tok.pad_token_id, eos_token_id=tok.sep_token_id,
                   decoder_start_token_id=tok.pad_token_id)
    model = _fill(T5ForConditionalGeneration(cfg), seed)
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


BUILDERS = {
    "CompVis/stable-diffusion-v1-4": tiny_sd_img2img,
    "mrm8488/flan-t5-large-finetuned-openai-summarize_from_feedback": tiny_t5_summarizer,
}


class TinyModels2:
    """A models folder (``DJ_MODELS_DIR``) whose tiny models are built on first request."""

    def __init__(self, root):
        self.root = str(root)

    def need(self, *names: str) -> str:
        for name in names:
            folder = os.path.join(self.root, name)
            if not os.path.exists(os.path.join(folder, "model_index.json")) and \
                    not os.path.exists(os.path.join(folder, "config.json")):
                BUILDERS[name](folder)
        return self.root


try:
    import pytest

    @pytest.fixture(scope="session")
    def models2(tmp_path_factory):
        return TinyModels2(tmp_path_factory.mktemp("models2"))

    @pytest.fixture
    def models2_env(models2, vision_models, monkeypatch):
        """``need(*names)``: build those models (ours or ``vision_tiny_models``'), point ``DJ_MODELS_DIR``
        at both folders."""
        from data_juicer.models.loader import clear_models
        from tests.models import vision_tiny_models as vt

        def need(*names):
            for n in names:
                (models2 if n in BUILDERS else vision_models).need(n)
            monkeypatch.setenv("DJ_MODELS_DIR", f"{models2.root}:{vision_models.root}")
            return models2.root

        yield need
        _ = vt
        clear_models()
except ImportError:  # used outside pytest
    pass
