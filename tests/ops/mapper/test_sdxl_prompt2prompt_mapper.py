import os
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from data_juicer.ops.registry import OPERATORS
from tests.models.vision_tiny_models import no_models  # noqa: F401

NAME = "sdxl_prompt2prompt_mapper"
SDXL = "stabilityai/stable-diffusion-xl-base-1.0"


class WordTokenizer:
    """Start token 1, end token 2, one id per word (``tan`` two ids), padded to ``model_max_length``."""

    model_max_length = 8
    ids: ClassVar[dict] = {"a": 10, "red": 11, "cat": 12, "tan": [13, 14], "confetti": 15, "on": 16}

    def __call__(self, text, add_special_tokens=True, truncation=False, max_length=None):
        out = []
        for w in text.split(" "):
            v = self.ids.get(w, 99)
            out.extend(v if isinstance(v, list) else [v])
        return {"input_ids": [1] + out + [2] if add_special_tokens else out}


# -- building the op -------------------------------------------------------------------------------
def test_missing_model_names_every_path(no_models):
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME)(text_key_second="t2")
    assert f"{no_models}/{SDXL}" in str(e.value)
    with pytest.raises(FileNotFoundError) as e:
        OPERATORS.get(NAME).check_models({})
    assert f"{no_models}/{SDXL}" in str(e.value)


def test_a_folder_without_pipeline_index_is_refused(no_models, tmp_path):
    (tmp_path / "not-sdxl").mkdir()
    with pytest.raises(FileNotFoundError, match="no model_index.json"):
        OPERATORS.get(NAME)(hf_diffusion=str(tmp_path / "not-sdxl"), text_key_second="t2")


def test_params_are_checked_before_the_model(no_models):
    with pytest.raises(ValueError, match="set `text_key_second`"):
        OPERATORS.get(NAME)()
    with pytest.raises(ValueError, match=r"torch_dtype \[fp8\] is not supported"):
        OPERATORS.get(NAME)(torch_dtype="fp8", text_key_second="t2")
    with pytest.raises(ValueError, match="num_inference_steps must be a positive whole number, got 2.5"):
        OPERATORS.get(NAME)(num_inference_steps=2.5, text_key_second="t2")


def test_params_are_kept(no_models, tmp_path):
    sd = tmp_path / "sdxl"
    sd.mkdir()
    (sd / "model_index.json").write_text("{}")
    op = OPERATORS.get(NAME)(hf_diffusion=str(sd), text_key="cap1", text_key_second="cap2", num_inference_steps=3.0,
                             guidance_scale=2.0, output_dir=str(tmp_path / "o"))
    assert (op.text_key, op.text_key_second, op.num_inference_steps, op.guidance_scale) == ("cap1", "cap2", 3, 2.0)
    assert op.accelerator == "cuda" and op.output_dir == str(tmp_path / "o")
    assert OPERATORS.get(NAME)(hf_diffusion=str(sd), text_key_second="t2").text_key == "text"
    with pytest.raises(ValueError, match=r"caption field 'cap2' must be a non-empty string \(got missing\)"):
        op.process_single({"cap1": "a cat"})
    with pytest.raises(ValueError, match=r"caption field 'cap1' must be a non-empty string \(got NoneType None\)"):
        op.process_single({"cap1": None, "cap2": "a cat"})


# -- the attention control -------------------------------------------------------------------------
def test_token_alignment():
    from data_juicer.models.prompt2prompt import align_tokens, refinement_map

    # the tiny CLIP tokenizer's ids of "a red fox in snow" / "a blue fox in snow": "red" is one token,
    # "blue" four; a gap scores 0 and a mismatch -1, so the blue tokens align with nothing
    x = [521, 320, 519, 69, 78, 343, 72, 333, 82, 77, 78, 342, 522]
    y = [521, 320, 65, 75, 84, 324, 69, 78, 343, 72, 333, 82, 77, 78, 342, 522]
    assert align_tokens(x, y) == [0, 1, -1, -1, -1, -1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert align_tokens([1, 2, 3], [1, 5, 3]) == [0, -1, 2]
    assert align_tokens([1, 2, 3], [1, 3]) == [0, 2]
    assert align_tokens([], [4, 4]) == [-1, -1]
    index, keep = refinement_map([1, 2, 3], [1, 5, 3], 5)
    assert index.tolist() == [0, 0, 2, 3, 4] and keep.tolist() == [1, 0, 1, 1, 1]


def test_cross_attention_takes_the_first_prompts_maps_for_shared_tokens():
    import torch

    from data_juicer.models.prompt2prompt import P2PController

    ctl = P2PController(["a red cat", "a tan cat"], WordTokenizer(), 4, 64, 64, guided=True)
    # tokens of the second prompt: <s> a tan tan cat </s> pad pad; "tan" has no partner
    assert ctl.keep.tolist() == [1, 1, 0, 0, 1, 1, 1, 1]
    assert ctl.index.tolist() == [0, 1, 0, 0, 3, 4, 6, 7]
    heads, q, k = 1, 1, 8
    uncond = torch.full((2 * heads, q, k), 0.5)
    first = torch.arange(k, dtype=torch.float32).view(1, 1, k)
    second = torch.full((1, 1, k), -1.0)
    probs = torch.cat([uncond, first, second])
    out = ctl.edit(probs.clone(), is_cross=True)
    assert out[:3].tolist() == probs[:3].tolist()  # unconditioned half and the first prompt: untouched
    assert out[3, 0].tolist() == [0.0, 1.0, -1.0, -1.0, 3.0, 4.0, 6.0, 7.0]


def test_self_attention_is_replaced_early_in_small_layers():
    import torch

    from data_juicer.models.prompt2prompt import P2PController

    ctl = P2PController(["a red cat", "a tan cat"], WordTokenizer(), 5, 64, 64, guided=False)
    # 40% of 5 steps: steps 0 and 1; a 64 wide image: layers of at most ceil(64 / 32) ** 2 = 4 queries
    assert ctl.self_steps == (0, 2) and ctl.self_max_queries == 4
    assert [ctl.edits_self(4) for ctl.step in range(5)] == [True, True, False, False, False]
    ctl.step = 0
    assert not ctl.edits_self(16)
    probs = torch.stack([torch.eye(4), torch.ones(4, 4)])  # unguided: prompt 1, prompt 2 (one head)
    out = ctl.edit(probs.clone(), is_cross=False)
    assert out[1].tolist() == torch.eye(4).tolist()


def test_confetti_keeps_its_own_map_late():
    from data_juicer.models.prompt2prompt import P2PController, word_token_positions

    tok = WordTokenizer()
    assert word_token_positions("a tan confetti cat", "confetti", tok) == [4]
    ctl = P2PController(["a red cat", "a confetti cat"], tok, 4, 64, 64, guided=True)
    # replaced during int(0.8 * (4 + 1)) = 4 of the 5 step slots, then its own map
    assert ctl.word_alpha[:, 2].tolist() == [1, 1, 1, 1, 0]
    assert ctl.word_alpha[:, 1].tolist() == [1, 1, 1, 1, 1]


def test_processor_without_edits_is_plain_attention():
    import torch
    from diffusers.models.attention_processor import Attention, AttnProcessor

    from data_juicer.models.prompt2prompt import P2PAttnProcessor, P2PController

    torch.manual_seed(0)
    self_attn = Attention(query_dim=8, heads=2, dim_head=4).eval()
    attn = Attention(query_dim=8, cross_attention_dim=6, heads=2, dim_head=4).eval()
    x, ctx = torch.randn(4, 16, 8), torch.randn(4, 8, 6)
    ctx[3] = ctx[2]  # the same caption: the same text features, other image features
    tok = WordTokenizer()
    ctl = P2PController(["a cat", "a cat"], tok, 2, 64, 64, guided=True)
    ctl.step = 1  # past the self-attention replacement
    with torch.no_grad():
        for m in (self_attn, attn):
            m.set_processor(AttnProcessor())
        want_self, want_cross = self_attn(x), attn(x, encoder_hidden_states=ctx)
        for m in (self_attn, attn):
            m.set_processor(P2PAttnProcessor(ctl))
        got_self, got_cross = self_attn(x), attn(x, encoder_hidden_states=ctx)
    assert torch.allclose(got_self, want_self, atol=1e-6)
    # the same prompts: every token takes the first prompt's map, so the second prompt's
    # conditioned output becomes the first one's
    assert torch.allclose(got_cross[:3], want_cross[:3], atol=1e-6)
    assert torch.allclose(got_cross[3], want_cross[2], atol=1e-6)
    assert not torch.allclose(want_cross[3], want_cross[2], atol=1e-3)


# -- a tiny seeded SDXL pipeline -------------------------------------------------------------------
def tiny_sdxl(folder, seed: int = 0) -> str:
    """A StableDiffusionXLPipeline of tiny seeded parts (64x64 images), saved with save_pretrained."""
    import torch
    from diffusers import AutoencoderKL, EulerDiscreteScheduler, StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    from tests.models.tiny_other_models import fill_random
    from tests.models.vision_tiny_models import clip_tokenizer

    tok = clip_tokenizer(os.path.join(folder, ".tok"))
    tok.model_max_length = 16
    unet = UNet2DConditionModel(block_out_channels=(16, 32), layers_per_block=1, sample_size=8, in_channels=4,
                                out_channels=4, down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
                                up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"), cross_attention_dim=32,
                                attention_head_dim=(2, 4), use_linear_projection=True,
                                addition_embed_type="text_time", addition_time_embed_dim=8,
                                transformer_layers_per_block=(1, 1), projection_class_embeddings_input_dim=8 * 6 + 16,
                                norm_num_groups=8)
    vae = AutoencoderKL(block_out_channels=(8, 8, 16, 16), in_channels=3, out_channels=3, latent_channels=4,
                        down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4,
                        norm_num_groups=4, sample_size=64, layers_per_block=1)

    def text_config():
        return CLIPTextConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=37, num_hidden_layers=2,
                              num_attention_heads=2, max_position_embeddings=16, bos_token_id=tok.bos_token_id,
                              eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, projection_dim=16)

    unet = fill_random(unet, seed, std=0.05)
    with torch.no_grad():  # peaked attention maps (near uniform at this scale), so that editing them shows
        for name, param in unet.named_parameters():
            if ".to_q." in name or ".to_k." in name:
                param.mul_(20)
    sched = EulerDiscreteScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear",
                                   timestep_spacing="leading", steps_offset=1)
    pipe = StableDiffusionXLPipeline(
        vae=fill_random(vae, seed + 1, std=0.05), text_encoder=fill_random(CLIPTextModel(text_config()), seed + 2),
        text_encoder_2=fill_random(CLIPTextModelWithProjection(text_config()), seed + 3), tokenizer=tok,
        tokenizer_2=tok, unet=unet, scheduler=sched, add_watermarker=False)
    os.makedirs(folder, exist_ok=True)
    pipe.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def sdxl_models(tmp_path_factory):
    import torch

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("sdxl-models")
    tiny_sdxl(str(root / SDXL))
    return str(root)


@pytest.fixture
def sdxl_env(sdxl_models, monkeypatch):
    from data_juicer.models.loader import clear_models

    monkeypatch.setenv("DJ_MODELS_DIR", sdxl_models)
    yield sdxl_models
    clear_models()


def _arr(path):
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB")).astype(np.int64)


@pytest.mark.slow
def test_pair_from_two_captions(sdxl_env, tmp_path):
    out_dir = tmp_path / "gen"
    op = OPERATORS.get(NAME)(text_key_second="t2", num_inference_steps=2, output_dir=str(out_dir))
    s = op.process_single({"text": "a red cat", "t2": "a tan cat"})
    folder = out_dir / "__dj__produced_data__" / NAME
    assert s["image_path1"] == str(folder / "image_pair_cfd1f45b203fb4530e952a59aa5a3b56_1.jpg")
    assert s["image_path2"] == str(folder / "image_pair_cfd1f45b203fb4530e952a59aa5a3b56_2.jpg")
    assert sorted(os.listdir(folder)) == sorted(os.path.basename(s[k]) for k in ("image_path1", "image_path2"))
    a, b = _arr(s["image_path1"]), _arr(s["image_path2"])
    assert a.shape == b.shape == (64, 64, 3)
    assert (a[0, 0].tolist(), round(float(a.mean()), 4)) == ([111, 133, 121], 122.3385)
    assert (b[0, 0].tolist(), round(float(b.mean()), 4)) == ([114, 131, 121], 122.2333)
    assert np.abs(a - b).mean() > 0.5  # the captions differ, so do the images
    first = Path(s["image_path1"]).read_bytes(), Path(s["image_path2"]).read_bytes()
    # a rerun: the same names and the same bytes
    again = OPERATORS.get(NAME)(text_key_second="t2", num_inference_steps=2, output_dir=str(out_dir)).process_single(
        {"text": "a red cat", "t2": "a tan cat"})
    assert (again["image_path1"], again["image_path2"]) == (s["image_path1"], s["image_path2"])
    assert (Path(again["image_path1"]).read_bytes(), Path(again["image_path2"]).read_bytes()) == first
    # the same caption twice: the shared noise makes the same image twice
    same = op.process_single({"text": "a red cat", "t2": "a red cat"})
    assert same["image_path1"] != s["image_path1"]
    assert np.array_equal(_arr(same["image_path1"]), _arr(same["image_path2"]))


@pytest.mark.slow
def test_attention_control_changes_only_the_second_image(sdxl_env):
    import torch

    from data_juicer.models.diffusion import load_diffusion_pipeline
    from data_juicer.models.prompt2prompt import generate_pair

    pipe = load_diffusion_pipeline(SDXL, "text2image", pipeline_class="StableDiffusionXLPipeline")
    prompts = ["a red cat", "a tan cat"]
    a, b = generate_pair(pipe, prompts, num_inference_steps=2, guidance_scale=7.5,
                         generator=torch.Generator().manual_seed(1), output_type="latent")
    noise = torch.randn((1, 4, 8, 8), generator=torch.Generator().manual_seed(1))
    plain = pipe(prompts, num_inference_steps=2, guidance_scale=7.5, latents=noise.repeat(2, 1, 1, 1),
                 output_type="latent").images
    # the first image is the pipeline's own (but for float rounding: edited layers compute softmax
    # attention, the others scaled_dot_product_attention); the second one follows the first one's maps
    assert (a - plain[0]).abs().max().item() < 1e-4
    assert (b - plain[1]).abs().max().item() > 0.05
    # the pipeline's own attention processors are put back
    assert not any(type(p).__name__ == "P2PAttnProcessor" for p in pipe.unet.attn_processors.values())


@pytest.mark.slow
def test_end_to_end_a_missing_caption_goes_to_the_ledger(sdxl_env, tmp_path, make_recipe):
    import json

    from data_juicer.cli.process import main
    from tests.conftest import read_jsonl

    rows = [{"id": "ok", "text": "a red cat", "t2": "a tan cat"},
            {"id": "no-second", "text": "a red cat"},
            {"id": "empty", "text": "", "t2": "a tan cat"}]
    recipe = make_recipe(rows, [{NAME: {"text_key_second": "t2", "num_inference_steps": 2,
                                        "output_dir": str(tmp_path / "gen")}}])
    assert main(["--config", recipe]) == 0
    out = tmp_path / "out"
    res = read_jsonl(out / "result.jsonl")
    assert [r["id"] for r in res] == ["ok"]
    assert os.path.isfile(res[0]["image_path1"]) and os.path.isfile(res[0]["image_path2"])
    assert res[0]["image_path1"].startswith(str(tmp_path / "gen" / "__dj__produced_data__" / NAME))
    job = next(os.path.join(out, d) for d in os.listdir(out) if os.path.isdir(os.path.join(out, d)))
    errors = read_jsonl(os.path.join(job, "errors.jsonl"))
    assert [e["op"] for e in errors] == [NAME] * 2
    text = json.dumps(errors)
    assert "caption field 't2'" in text and "caption field 'text'" in text
