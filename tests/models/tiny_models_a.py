"""Tiny, real models for the third round of model ops (OWL-ViT, video BLIP, NLTK's tagger).

As in :mod:`tests.models.vision_tiny_models`: real architectures from tiny configs, weights from
numpy's legacy ``RandomState`` (``_fill``), saved with ``save_pretrained`` in the folder layout
the ops load from. NLTK's English tagger is trained on a few sentences and saved as NLTK saves
it (``taggers/averaged_perceptron_tagger_eng/*.json``). Random weights test loading, batching,
pre/post-processing and output shapes, not quality.
"""

from __future__ import annotations

import json
import os

from tests.models.vision_tiny_models import IMAGE_SIZE, _save, _vision_config, clip_tokenizer
from tests.ops.hf_tiny_models import _fill, _tokenizer

# a tiny tagged corpus (Penn Treebank tags), enough for the tagger to learn DT / JJ / NN / VB
TAGGED = [
    [("a", "DT"), ("red", "JJ"), ("cat", "NN"), ("sits", "VBZ"), ("on", "IN"), ("the", "DT"), ("mat", "NN")],
    [("the", "DT"), ("big", "JJ"), ("dog", "NN"), ("runs", "VBZ"), ("in", "IN"), ("a", "DT"), ("park", "NN")],
    [("two", "CD"), ("small", "JJ"), ("birds", "NNS"), ("fly", "VBP"), ("over", "IN"), ("the", "DT"),
     ("green", "JJ"), ("field", "NN")],
    [("a", "DT"), ("man", "NN"), ("rides", "VBZ"), ("a", "DT"), ("blue", "JJ"), ("bike", "NN"), (".", ".")],
    [("the", "DT"), ("woman", "NN"), ("holds", "VBZ"), ("an", "DT"), ("old", "JJ"), ("book", "NN"), (".", ".")],
]


def tiny_pos_tagger(nltk_data: str) -> str:
    """NLTK's averaged perceptron tagger trained on ``TAGGED`` (seeded), saved as
    ``<nltk_data>/taggers/averaged_perceptron_tagger_eng/``; returns that folder."""
    import random

    from nltk.tag.perceptron import PerceptronTagger

    random.seed(0)
    tagger = PerceptronTagger(load=False)
    tagger.train([list(s) for s in TAGGED], nr_iter=5)
    folder = os.path.join(nltk_data, "taggers", "averaged_perceptron_tagger_eng")
    os.makedirs(folder, exist_ok=True)
    for attr, value in zip(("weights", "tagdict", "classes"), tagger.encode_json_obj()):
        with open(os.path.join(folder, f"averaged_perceptron_tagger_eng.{attr}.json"), "w") as f:
            json.dump(value, f)
    return folder


def tiny_owlvit(folder, seed: int = 0) -> str:
    """An OwlViTForObjectDetection (32x32 images, 8px patches: 16 boxes) with its OwlViTProcessor
    (the tiny CLIP BPE tokenizer, 16 tokens per query)."""
    from transformers import OwlViTConfig, OwlViTForObjectDetection, OwlViTImageProcessor, OwlViTProcessor

    tok = clip_tokenizer(os.path.join(folder, ".tok"))
    tok.model_max_length = 16
    cfg = OwlViTConfig(
        text_config={"vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 16,
                     "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
                     "pad_token_id": tok.pad_token_id},
        vision_config=_vision_config(), projection_dim=32)  # the class head needs text width == projection
    ip = OwlViTImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
                              crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    model = _fill(OwlViTForObjectDetection(cfg), seed, std=0.3)
    return _save(model, OwlViTProcessor(image_processor=ip, tokenizer=tok), folder)


def tiny_video_blip(folder, seed: int = 0) -> str:
    """A BLIP-2 OPT checkpoint (vision tower, Q-Former with 4 query tokens, tiny OPT), saved as
    ``Blip2ForConditionalGeneration``, with its Blip2Processor (MiniLM WordPiece + ``<image>``):
    the layout of ``kpyu/video-blip-opt-2.7b-ego4d``, which the op loads as a video BLIP."""
    from transformers import Blip2Config, Blip2ForConditionalGeneration, Blip2Processor, BlipImageProcessor

    tok = _tokenizer(bos_eos=True)
    tok.add_special_tokens({"additional_special_tokens": ["<image>"]})
    image_id = tok.convert_tokens_to_ids("<image>")
    cfg = Blip2Config(
        vision_config=_vision_config(),
        qformer_config={"vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 37,
                        "num_hidden_layers": 2, "num_attention_heads": 2, "encoder_hidden_size": 32,
                        "max_position_embeddings": 64},
        text_config={"model_type": "opt", "vocab_size": len(tok), "hidden_size": 32, "ffn_dim": 37,
                     "num_hidden_layers": 2, "num_attention_heads": 2, "max_position_embeddings": 256,
                     "word_embed_proj_dim": 32, "bos_token_id": tok.cls_token_id, "eos_token_id": tok.sep_token_id,
                     "pad_token_id": tok.pad_token_id},
        num_query_tokens=4, image_token_index=image_id)
    model = _fill(Blip2ForConditionalGeneration(cfg), seed)
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.bos_token_id = tok.cls_token_id
    model.generation_config.eos_token_id = tok.sep_token_id
    ip = BlipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    proc = Blip2Processor(image_processor=ip, tokenizer=tok, num_query_tokens=4)
    return _save(model, proc, folder)


def tiny_clip_long(folder, seed: int = 0) -> str:
    """A CLIPModel like ``vision_tiny_models.tiny_clip`` whose text tower takes 256 tokens (for
    embedding whole MLLM answers)."""
    from transformers import CLIPConfig, CLIPModel

    from tests.models.vision_tiny_models import _clip_processor

    proc = _clip_processor(folder)
    tok = proc.tokenizer
    cfg = CLIPConfig(
        text_config={"vocab_size": len(tok), "hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2,
                     "num_attention_heads": 2, "max_position_embeddings": 256,
                     "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id,
                     "pad_token_id": tok.pad_token_id},
        vision_config=_vision_config(), projection_dim=16)
    return _save(_fill(CLIPModel(cfg), seed), proc, folder)


# Qwen-Audio's code lives only in its model folder; this stand-in has the same interface
# (process_audio / audio_info), loaded the same way (trust_remote_code from the folder's auto_map)
_QWEN_TOKENIZER = '''
import re

from transformers import BertTokenizerFast


class TinyQwenAudioTokenizer(BertTokenizerFast):
    """Stand-in for Qwen-Audio's tokenizer: the audio of <audio>path</audio> becomes one [audio]
    token whose info (the file and its length) travels in audio_info, as Qwen-Audio's does."""

    def process_audio(self, query):
        import av

        path = re.search(r"<audio>(.*?)</audio>", query).group(1)
        with av.open(path) as c:
            seconds = float(c.duration or 0) / 1e6
        return {"audio_urls": [path], "seconds": [seconds]}

    def __call__(self, text, audio_info=None, **kwargs):
        if audio_info is not None:
            text = text.replace("<audio>" + audio_info["audio_urls"][0] + "</audio>", "[audio]")
        return super().__call__(text, **kwargs)

    def decode(self, ids, audio_info=None, **kwargs):
        out = super().decode(ids, **kwargs)
        if audio_info is not None:  # Qwen-Audio decodes the audio span back into its tagged path
            out = "<audio>" + audio_info["audio_urls"][0] + "</audio>" + out
        return out
'''
_QWEN_MODEL = '''
from transformers import GPT2LMHeadModel


class TinyQwenAudioLM(GPT2LMHeadModel):
    """Stand-in for Qwen-Audio's model: generate() takes audio_info (required, as Qwen-Audio's)."""

    def generate(self, *args, audio_info=None, **kwargs):
        if audio_info is None:
            raise ValueError("audio_info is required")
        kwargs.pop("token_type_ids", None)
        kwargs.setdefault("max_new_tokens", 3 + int(audio_info["seconds"][0]))
        return super().generate(*args, **kwargs)
'''


def tiny_qwen_audio(folder, seed: int = 0) -> str:
    """A model folder in Qwen-Audio's layout: its code beside the weights (``auto_map``), loaded
    with ``trust_remote_code``; a tiny GPT-2 under the stand-in classes above."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = _tokenizer()
    # Qwen-Audio's audio and task tokens are special tokens of its vocabulary (skipped when decoding)
    tok.add_special_tokens({"additional_special_tokens": ["[audio]", "<|startoftranscription|>", "<|unknown|>",
                                                         "<|caption|>", "<|notimestamps|>", "<|wo_itn|>"]})
    os.makedirs(folder, exist_ok=True)
    for name, code in (("tokenization_tiny_qwen_audio.py", _QWEN_TOKENIZER), ("modeling_tiny_qwen_audio.py", _QWEN_MODEL)):
        with open(os.path.join(folder, name), "w") as f:
            f.write(code)
    cfg = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=128,
                     bos_token_id=tok.cls_token_id, eos_token_id=tok.sep_token_id, pad_token_id=tok.pad_token_id)
    model = _fill(GPT2LMHeadModel(cfg), seed)
    model.config.auto_map = {"AutoModelForCausalLM": "modeling_tiny_qwen_audio.TinyQwenAudioLM",
                             "AutoTokenizer": [None, "tokenization_tiny_qwen_audio.TinyQwenAudioTokenizer"]}
    model.config.architectures = ["TinyQwenAudioLM"]
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.do_sample = False
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    path = os.path.join(folder, "tokenizer_config.json")
    with open(path) as f:
        tc = json.load(f)
    tc["auto_map"] = {"AutoTokenizer": [None, "tokenization_tiny_qwen_audio.TinyQwenAudioTokenizer"]}
    tc["tokenizer_class"] = "TinyQwenAudioTokenizer"
    with open(path, "w") as f:
        json.dump(tc, f)
    return str(folder)


BUILDERS = {
    "Qwen/Qwen-Audio": lambda f: tiny_qwen_audio(f),
    "tiny/clip-long": lambda f: tiny_clip_long(f),
    "google/owlvit-base-patch32": lambda f: tiny_owlvit(f),
    "kpyu/video-blip-opt-2.7b-ego4d": lambda f: tiny_video_blip(f),
}


class TinyModelsA:
    """A models folder (``DJ_MODELS_DIR``) built on first request: ``BUILDERS`` under their
    Data-Juicer default names, plus NLTK's tagger under ``nltk_data/``."""

    def __init__(self, root):
        self.root = str(root)

    def need(self, *names: str) -> str:
        for name in names:
            if name == "nltk_tagger":
                if not os.path.isdir(os.path.join(self.root, "nltk_data", "taggers")):
                    tiny_pos_tagger(os.path.join(self.root, "nltk_data"))
                continue
            folder = os.path.join(self.root, name)
            if not os.path.exists(os.path.join(folder, "config.json")):
                BUILDERS[name](folder)
        return self.root


try:
    import pytest

    @pytest.fixture(scope="session")
    def models_a(tmp_path_factory):
        return TinyModelsA(tmp_path_factory.mktemp("models-a"))

    @pytest.fixture
    def models_a_env(models_a, vision_models, monkeypatch):
        """``need(*names)``: build those models (ours, or those of ``vision_tiny_models``) in one
        folder each and point ``DJ_MODELS_DIR`` at both."""
        from data_juicer.models.loader import clear_models
        from tests.models.vision_tiny_models import BUILDERS as VISION

        def need(*names):
            mine = [n for n in names if n not in VISION]
            theirs = [n for n in names if n in VISION]
            models_a.need(*mine)
            vision_models.need(*theirs)
            monkeypatch.setenv("DJ_MODELS_DIR", os.pathsep.join([models_a.root, vision_models.root]))
            return models_a.root

        yield need
        clear_models()
except ImportError:  # used outside pytest
    pass
