"""A tiny causal LM with seeded random weights, saved as a normal Hugging Face model folder.

For tests and the local server: it loads in about a second and generates real (meaningless)
tokens through the same ``transformers`` code as a real model. Its tokenizer is character-level
with byte fallback (any text encodes), and has a ChatML chat template.
"""

from __future__ import annotations

import json
import os
import string

from data_juicer.utils.lazy import require

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ["<pad>", "<unk>", "<s>", "<|im_end|>", "<|im_start|>"]


def build_tiny_chat_model(folder: str, seed: int = 0, hidden: int = 64, layers: int = 2) -> str:
    """Write the tiny model to ``folder`` (once; reused when already there) and return the folder."""
    if os.path.exists(os.path.join(folder, "config.json")) and os.path.exists(os.path.join(folder, "tokenizer.json")):
        return folder
    torch = require("torch")
    transformers = require("transformers")
    tokenizers = require("tokenizers")
    os.makedirs(folder, exist_ok=True)
    chars = sorted(set(string.printable) - set("\x0b\x0c\r"))
    vocab = {t: i for i, t in enumerate(SPECIALS)}
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    for c in chars:
        vocab.setdefault(c, len(vocab))
    model = tokenizers.models.BPE(vocab=vocab, merges=[], unk_token="<unk>", byte_fallback=True)
    tk = tokenizers.Tokenizer(model)
    tk.decoder = tokenizers.decoders.Sequence([tokenizers.decoders.ByteFallback(), tokenizers.decoders.Fuse()])
    tk.add_special_tokens([tokenizers.AddedToken(s, special=True, normalized=False) for s in SPECIALS])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", unk_token="<unk>",
                                                bos_token="<s>", eos_token="<|im_end|>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(folder)
    cfg = transformers.LlamaConfig(vocab_size=len(fast), hidden_size=hidden, intermediate_size=hidden * 2,
                                   num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=8192, tie_word_embeddings=True,
                                   pad_token_id=fast.pad_token_id, bos_token_id=fast.bos_token_id,
                                   eos_token_id=fast.eos_token_id)
    torch.manual_seed(seed)
    lm = transformers.LlamaForCausalLM(cfg)
    lm.save_pretrained(folder)
    with open(os.path.join(folder, "dj_tiny.json"), "w") as f:
        json.dump({"seed": seed, "hidden": hidden, "layers": layers}, f)
    return folder


def load_engine(folder: str, device: str = "cpu", **kw):
    """An :class:`~data_juicer.models.llm.engine.HFEngine` over a model folder (tiny or real)."""
    transformers = require("transformers")
    from data_juicer.models.llm.engine import HFEngine

    tok = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    return HFEngine(model, tok, device=device, **kw)
