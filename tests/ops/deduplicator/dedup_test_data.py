"""Texts for the near-duplicate dedup tests (MinHash, SimHash), shared with the Data-Juicer runs
that gave the expected values."""

PARAGRAPH = (
    "Data processing for large language models starts with collecting raw text from many sources, "
    "then cleaning it, removing documents of low quality, and finally removing duplicates so that "
    "the model does not memorise repeated passages. Near duplicates are harder to find than exact "
    "copies because a few changed words or a new header make the bytes differ while the content "
    "stays the same for every practical purpose."
)

TEXTS = [
    "The quick brown fox jumps over the lazy dog near the river bank today",  # 0
    "The quick brown fox jumps over the lazy dog near the river bank today",  # 1 exact copy of 0
    "the QUICK brown fox jumps over the lazy dog near the river bank today",  # 2 case differs
    "The quick brown fox jumped over the lazy dog near the river bank today",  # 3 one word changed
    "A completely different sentence about machine learning and data processing pipelines",  # 4
    "A completely different sentence about machine learning and data processing pipelines!!!",  # 5
    "",  # 6
    "short text",  # 7
    "tiny",  # 8
    "数据处理是大模型训练中非常重要的一个环节，高质量的数据可以显著提升模型效果。",  # 9
    "数据处理是大模型训练中非常重要的一个环节，高质量的数据能够显著提升模型效果。",  # 10
    "今天天气很好，我们一起去公园散步吧。",  # 11
    "Emoji test 😀😀 with some words repeated here and there 🎉 end of line",  # 12
    "Emoji test 😀😀 with some words repeated here and there 🎉 end of line!",  # 13
    "line one\nline two\twith tab and  double  spaces in the middle of it all",  # 14
    "line one\nline two\twith tab and double spaces in the middle of it all",  # 15
    "Hello, world! This is: a test; of punctuation-based tokenization (really).",  # 16
    "Hello, world! This is: a test; of punctuation based tokenization (really)?",  # 17
    "Numbers 123 and 456 appear in this sentence with 789 other tokens around",  # 18
    "Numbers 321 and 654 appear in this sentence with 987 other tokens around",  # 19
    PARAGRAPH,  # 20
    PARAGRAPH.replace("many sources", "various sources").replace("harder", "much harder"),  # 21
    "Ünïcödé àccents, «quotes» — and dashes… in a sentence that is long enough to shingle",  # 22
    "Ünïcödé àccents, «quotes» — and dashes… in a sentence that is long enough to shingle.",  # 23
]

_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "be", "da", "fu", "go", "hi", "ja", "ze", "qu")


class _Lcg:
    """A tiny deterministic generator, so the corpus never depends on a library's random stream."""

    def __init__(self, seed: int):
        self.state = seed

    def below(self, n: int) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        return (self.state >> 33) % n


def generated_corpus(num_docs: int = 300, seed: int = 7) -> list[str]:
    """Documents of 20-80 words from a 400-word vocabulary, every 50th one 600 words long; about
    one in ten is an exact copy of an earlier document and one in five a near copy (1-4 words
    replaced, or one dropped)."""
    rng = _Lcg(seed)
    vocab = ["".join(_SYLLABLES[rng.below(len(_SYLLABLES))] for _ in range(2 + rng.below(3))) for _ in range(400)]
    docs: list[str] = []
    for i in range(num_docs):
        roll = rng.below(100)
        if i > 10 and roll < 10:
            docs.append(docs[rng.below(len(docs))])
        elif i > 10 and roll < 30:
            words = docs[rng.below(len(docs))].split(" ")
            if rng.below(4) == 0:
                del words[rng.below(len(words))]
            else:
                for _ in range(1 + rng.below(4)):
                    words[rng.below(len(words))] = vocab[rng.below(len(vocab))]
            docs.append(" ".join(words))
        else:
            size = 600 if i % 50 == 49 else 20 + rng.below(61)
            docs.append(" ".join(vocab[rng.below(len(vocab))] for _ in range(size)))
    return docs


def train_sentencepiece(path: str) -> str:
    """Train a tiny unigram sentencepiece model on TEXTS and a generated corpus into ``path``;
    return its md5."""
    import hashlib
    import io

    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXTS + generated_corpus(60)), model_writer=buf,
                                   vocab_size=250, model_type="unigram", num_threads=1, character_coverage=1.0,
                                   minloglevel=2)
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    return hashlib.md5(buf.getvalue()).hexdigest()
