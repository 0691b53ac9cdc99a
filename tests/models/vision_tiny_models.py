"""Tiny, real Hugging Face vision / vision-language models for testing the model-backed media ops offline.

Nothing can be downloaded, so each builder makes a real architecture from a tiny config, fills
its weights from numpy's legacy ``RandomState`` (``tests.ops.hf_tiny_models._fill``: stable across
versions, so values written into tests stay valid), and saves model + processor with
``save_pretrained`` into ``folder``, the layout an op loads from (``DJ_MODELS_DIR/<name>``).
Tokenizers are built offline: CLIP's byte-level BPE from a tiny vocabulary (:func:`clip_tokenizer`),
BERT WordPiece from the packaged all-MiniLM-L6-v2 vocabulary.

Random weights test loading, batching, pre/post-processing and output shapes, not quality.
"""

from __future__ import annotations

import json
import os

from tests.ops.hf_tiny_models import _fill, _tokenizer

IMAGE_SIZE = 32
# merges of the tiny CLIP BPE vocabulary: a few whole words, the rest falls back to bytes
CLIP_MERGES = ["a t</w>", "c at</w>", "d o", "do g</w>", "t h", "th e</w>", "r e", "re d</w>", "o n</w>"]


def _bytes_to_unicode() -> list[str]:
    """GPT-2 / CLIP's printable stand-in for each byte, in byte order of their vocabulary."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def clip_tokenizer(work: str):
    """A CLIPTokenizer over 256 byte symbols (+ their word-final forms), ``CLIP_MERGES`` and the specials."""
    from transformers import CLIPTokenizer

    chars = _bytes_to_unicode()
    vocab: dict[str, int] = {}
    for c in chars:
        vocab[c] = len(vocab)
    for c in chars:
        vocab[c + "</w>"] = len(vocab)
    for m in CLIP_MERGES:
        vocab[m.replace(" ", "")] = len(vocab)
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    os.makedirs(work, exist_ok=True)
    vpath, mpath = os.path.join(work, "vocab.json"), os.path.join(work, "merges.txt")
    with open(vpath, "w") as f:
        json.dump(vocab, f)
    with open(mpath, "w") as f:
        f.write("#version: 0.2\n" + "\n".join(CLIP_MERGES) + "\n")
    return CLIPTokenizer(vpath, mpath)


def _clip_processor(folder: str):
    from transformers import CLIPImageProcessor, CLIPProcessor

    tok = clip_tokenizer(os.path.join(folder, ".tok"))
    ip = CLIPImageProcessor(size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return CLIPProcessor(image_processor=ip, tokenizer=tok)


def _vision_config(**kw):
    cfg = {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2, "num_attention_heads": 2,
           "image_size": IMAGE_SIZE, "patch_size": 8}
    cfg.update(kw)
    return cfg


def _save(model, processor, folder):
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return str(folder)


def tiny_clip(folder, seed: int = 0):
    """A CLIPModel (both towers) with its CLIPProcessor (tiny BPE tokenizer, 32x32 images)."""
    from transformers import CLIPConfig, CLIPModel

    proc = _clip_processor(folder)
    tok = proc.tokenizer
    cfg = CLIPConfig(
        text_config={"vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 16,
                     "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
                     "pad_token_id": tok.pad_token_id},
        vision_config=_vision_config(), projection_dim=16)
    model = _fill(CLIPModel(cfg), seed)
    return _save(model, proc, folder)


def tiny_aesthetics(folder, variant: str = "v2_linear", seed: int = 0):
    """A LAION aesthetics predictor (``data_juicer.models.vision.aesthetics_class``) with a CLIPProcessor.

    Name ``folder`` like the real ones (``...aesthetics-predictor-v2-...-linearMSE``): the op picks
    the variant from the name.
    """
    from transformers import CLIPVisionConfig

    from data_juicer.models.vision import aesthetics_class

    cls = aesthetics_class(variant)
    model = cls(CLIPVisionConfig(**_vision_config(), projection_dim=16))
    model.config.architectures = [cls.__name__]
    return _save(_fill(model, seed, std=0.1), _clip_processor(folder), folder)


def tiny_vit_classifier(folder, labels=("normal", "nsfw"), seed: int = 0):
    """A ViTForImageClassification over ``labels`` with its ViTImageProcessor (32x32)."""
    from transformers import ViTConfig, ViTForImageClassification, ViTImageProcessor

    cfg = ViTConfig(**_vision_config(), num_labels=len(labels), id2label=dict(enumerate(labels)),
                    label2id={lab: i for i, lab in enumerate(labels)})
    proc = ViTImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    return _save(_fill(ViTForImageClassification(cfg), seed), proc, folder)


def tiny_blip_itm(folder, seed: int = 0):
    """A BlipForImageTextRetrieval with its BlipProcessor (the MiniLM WordPiece tokenizer, 32x32 images)."""
    from transformers import BlipConfig, BlipForImageTextRetrieval, BlipImageProcessor, BlipProcessor

    tok = _tokenizer()
    cfg = BlipConfig(
        text_config={"vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 32, "encoder_hidden_size": 32,
                     "pad_token_id": tok.pad_token_id, "bos_token_id": tok.cls_token_id,
                     "sep_token_id": tok.sep_token_id},
        vision_config=_vision_config(), projection_dim=16, image_text_hidden_size=16)
    proc = BlipProcessor(image_processor=BlipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}),
                         tokenizer=tok)
    return _save(_fill(BlipForImageTextRetrieval(cfg), seed), proc, folder)


def tiny_blip_captioner(folder, seed: int = 0):
    """A BlipForConditionalGeneration (image captioning) with its BlipProcessor (MiniLM tokenizer)."""
    from transformers import BlipConfig, BlipForConditionalGeneration, BlipImageProcessor, BlipProcessor

    tok = _tokenizer()
    cfg = BlipConfig(
        text_config={"vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 160, "encoder_hidden_size": 32,
                     "pad_token_id": tok.pad_token_id, "bos_token_id": tok.cls_token_id,
                     "eos_token_id": tok.sep_token_id, "sep_token_id": tok.sep_token_id},
        vision_config=_vision_config(), projection_dim=16)
    proc = BlipProcessor(image_processor=BlipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}),
                         tokenizer=tok)
    model = _fill(BlipForConditionalGeneration(cfg), seed)
    model.generation_config.max_length = 20
    return _save(model, proc, folder)


LLAVA_TEMPLATE = ("{% for m in messages %}USER: {% for c in m['content'] %}{% if c['type'] == 'image' %}<image>"
                  "{% else %}{{ c['text'] }} {% endif %}{% endfor %}{% endfor %}"
                  "{% if add_generation_prompt %}ASSISTANT:{% endif %}")


def tiny_llava(folder, seed: int = 0):
    """A LlavaForConditionalGeneration (CLIP vision tower + tiny Llama) with its LlavaProcessor:
    the MiniLM tokenizer plus an ``<image>`` token and a USER/ASSISTANT chat template."""
    from transformers import CLIPImageProcessor, LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor

    tok = _tokenizer(bos_eos=True)
    tok.add_special_tokens({"additional_special_tokens": ["<image>"]})
    image_id = tok.convert_tokens_to_ids("<image>")
    cfg = LlavaConfig(
        vision_config={"model_type": "clip_vision_model", **_vision_config()},
        text_config={"model_type": "llama", "vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 37,
                     "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2,
                     "max_position_embeddings": 128, "bos_token_id": tok.cls_token_id,
                     "eos_token_id": tok.sep_token_id, "pad_token_id": tok.pad_token_id},
        image_token_index=image_id, vision_feature_select_strategy="default", vision_feature_layer=-1)
    ip = CLIPImageProcessor(size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    proc = LlavaProcessor(image_processor=ip, tokenizer=tok, patch_size=8, vision_feature_select_strategy="default",
                          chat_template=LLAVA_TEMPLATE, image_token="<image>", num_additional_image_tokens=1)
    model = _fill(LlavaForConditionalGeneration(cfg), seed)
    model.generation_config.pad_token_id = tok.pad_token_id
    return _save(model, proc, folder)


def tiny_ast(folder, labels=("Speech", "Music", "Sine wave"), seed: int = 0):
    """An ASTForAudioClassification over ``labels`` with its ASTFeatureExtractor (16 mel bins, 100 frames)."""
    from transformers import ASTConfig, ASTFeatureExtractor, ASTForAudioClassification

    cfg = ASTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                    num_mel_bins=16, max_length=100, num_labels=len(labels), id2label=dict(enumerate(labels)),
                    label2id={lab: i for i, lab in enumerate(labels)})
    fe = ASTFeatureExtractor(num_mel_bins=16, max_length=100)
    return _save(_fill(ASTForAudioClassification(cfg), seed), fe, folder)


def tiny_age_gender(folder, seed: int = 0):
    """audEERING's wav2vec2 age/gender architecture (``data_juicer.models.vision.age_gender_class``), tiny."""
    from transformers import Wav2Vec2Config, Wav2Vec2FeatureExtractor

    from data_juicer.models.vision import age_gender_class

    cls = age_gender_class()
    cfg = Wav2Vec2Config(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                         conv_dim=(32, 32), conv_kernel=(10, 3), conv_stride=(5, 2), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=2, feat_extract_norm="layer", do_stable_layer_norm=True)
    model = cls(cfg)
    model.config.architectures = ["AgeGenderModel"]
    fe = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, do_normalize=True, return_attention_mask=True)
    return _save(_fill(model, seed, std=0.1), fe, folder)


def write_images(folder, n: int, seed: int = 0, size=(40, 30)) -> list[str]:
    """``n`` small PNGs of seeded random colour blocks; their paths."""
    import numpy as np
    from PIL import Image

    os.makedirs(folder, exist_ok=True)
    rs = np.random.RandomState(seed)
    paths = []
    for k in range(n):
        base = rs.randint(0, 256, size=(3, 4, 3)).astype(np.uint8)
        arr = np.kron(base, np.ones((size[1] // 3 + 1, size[0] // 4 + 1, 1), dtype=np.uint8))[: size[1], : size[0]]
        p = os.path.join(folder, f"img{k}.png")
        Image.fromarray(arr).save(p)
        paths.append(p)
    return paths


# -- fixtures: import them into a test module (``from tests.models.vision_tiny_models import
# vision_models, models_env  # noqa: F401``) -------------------------------------------------
BUILDERS = {
    "openai/clip-vit-base-patch32": lambda f: tiny_clip(f),
    "shunk031/aesthetics-predictor-v2-sac-logos-ava1-l14-linearMSE": lambda f: tiny_aesthetics(f),
    "Falconsai/nsfw_image_detection": lambda f: tiny_vit_classifier(f),
    "amrul-hzz/watermark_detector": lambda f: tiny_vit_classifier(f, labels=("clean", "watermark"), seed=1),
    "Salesforce/blip-itm-base-coco": lambda f: tiny_blip_itm(f),
    "tiny/blip-image-captioning": lambda f: tiny_blip_captioner(f),
    "tiny/llava": lambda f: tiny_llava(f),
    "MIT/ast-finetuned-audioset-10-10-0.4593": lambda f: tiny_ast(f),
    "audeering/wav2vec2-large-robust-24-ft-age-gender": lambda f: tiny_age_gender(f),
}


class TinyModels:
    """A models folder (``DJ_MODELS_DIR``) whose tiny models are built on first request, under
    the Data-Juicer default names (``BUILDERS``)."""

    def __init__(self, root):
        self.root = str(root)

    def need(self, *names: str) -> str:
        for name in names:
            folder = os.path.join(self.root, name)
            if not os.path.exists(os.path.join(folder, "config.json")):
                BUILDERS[name](folder)
        return self.root


try:
    import pytest

    @pytest.fixture(scope="session")
    def vision_models(tmp_path_factory):
        return TinyModels(tmp_path_factory.mktemp("vision-models"))

    @pytest.fixture
    def models_env(vision_models, monkeypatch):
        """``need(*names)``: build those models and point ``DJ_MODELS_DIR`` at them."""
        from data_juicer.models.loader import clear_models

        def need(*names):
            monkeypatch.setenv("DJ_MODELS_DIR", vision_models.need(*names))
            return vision_models.root

        yield need
        clear_models()

    @pytest.fixture
    def no_models(tmp_path, monkeypatch):
        """An empty ``DJ_MODELS_DIR`` and Hugging Face cache: every model is missing."""
        empty = tmp_path / "no-models"
        empty.mkdir()
        monkeypatch.setenv("DJ_MODELS_DIR", str(empty))
        monkeypatch.setenv("DATA_JUICER_MODELS_CACHE", str(empty / "cache"))
        monkeypatch.setenv("HF_HUB_CACHE", str(empty / "hf"))
        import huggingface_hub.constants as c

        monkeypatch.setattr(c, "HF_HUB_CACHE", str(empty / "hf"))
        return str(empty)
except ImportError:  # used outside pytest (benchmarks)
    pass
