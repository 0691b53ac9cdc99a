"""Inputs shared by the text filter tests, and tiny tokenizer models built on the fly.

The expected values in the tests were computed by running Data-Juicer 1.6.1 on ``TEXTS`` (and,
for the tokenized paths, with the models that ``train_sentencepiece`` / ``build_hf_tokenizer``
build: training is deterministic, so Data-Juicer saw byte-identical models).
"""

import hashlib
import io
import os

TEXTS = [
    "",
    "a",
    "Today is Sunday and it's a happy day!",
    "Hello,  world!! -- ... (test) [x] {y} 'quoted' \"double\"",
    "中文文本，测试一下。这是一个句子，一二三四五。上海是一个城市。",
    "I love 🐍 and 😀😀😀!!! 👍🏽 ❤️ ☀ ✨ 🇨🇳 ©®™",
    "x" * 3000 + "\nshort\n" + "y" * 50,
    "the cat sat on the mat " * 12,
    "abcabcabcabcabcabcabcabcabcabcabcabcabcabc",
    "line one\r\nline two\n\nline four\u2028sep\x0bvt\x1cfs\u0085nel\n",
    "\n\n\n",
    "   \t  \n ",
    "İstanbul ÇOK güzel ǅ ΣΑΣ straße ﬁne",
    "!!! ??? ... ### $$$ %%% ^^^",
    "123 456 7890 ½ ² Ⅻ ٣ ０１２",
    "<p>Hello <b>world</b></p>\n<div class=\"x\">text &amp; more</div>",
    "word\u3000word\xa0word\u2009word\u200bword",
    "e\u0301 cafe\u0301 na\u00efve 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠀀𠀁",
    "一一一 上上 士 ー ー ー 。。。",
    "Hello world! Tokenizers split words into pieces. " * 5 + "\n" + "unique tail words here now",
    "to be or not to be to be or not to be that is the question to be or not",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k",
    "Tab\tseparated\tvalues\tand  double  spaces   here\n\nnew para",
    "(((((hello))))) '''world''' ...foo... ---bar--- 🎉party🎉",
]

CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "a stitch in time saves nine, and the early bird catches the worm",
    "Data processing for large language models needs clean text.",
    "中文文本也需要处理，这是一个测试句子。",
    "Hello world! Tokenizers split words into pieces.",
] * 20

# md5 of the model Data-Juicer 1.6.1 was run with (sentencepiece 0.2.3)
SENTENCEPIECE_MD5 = "3070b927391f8d60548cd2dedb8f69f7"


def train_sentencepiece(path: str) -> str:
    """Train a tiny unigram sentencepiece model on CORPUS into ``path``; return its md5."""
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_writer=buf, vocab_size=80,
                                   model_type="unigram", num_threads=1, character_coverage=1.0, minloglevel=2)
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    return hashlib.md5(buf.getvalue()).hexdigest()


def build_hf_tokenizer(folder: str) -> None:
    """Save a tiny byte-level BPE Hugging Face tokenizer trained on CORPUS into ``folder``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False))
    os.makedirs(folder, exist_ok=True)
    PreTrainedTokenizerFast(tokenizer_object=tok).save_pretrained(folder)
