import re
from collections.abc import Callable

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.lambda_string import parse_lambda
from data_juicer.ops.registry import OPERATORS

# the built-in splitter puts a line break after sentence-ending punctuation ("。", "!", six dots,
# two ellipses, ...) unless a closing quote follows, and after such punctuation plus closing
# quote; the rules apply in this order, each one to the output of the previous one. The last
# character class is kept as is, odd members ("{", "}", "6", "2") included.
_SPLIT_RULES = (
    re.compile(r"([.。！!？\?])([^’”])"),
    re.compile(r"(\.{6})([^’”])"),
    re.compile(r"(…{2})([^’”])"),
    re.compile(r"([.。!！？\?\.{6}\…{2}][’”])([^’”])"),
)
# a line without any of these has nothing for the rules to split
_SPLIT_TRIGGERS = re.compile(r"[.。！!？?…’”]")
# characters ignored when comparing sentences, with ignore_special_character
_SPECIAL = re.compile(r"[^a-zA-Z0-9\u4e00-\u9fa5\n\t ]")


def split_sentences(line: str) -> list[str]:
    """Sentences of one line; each keeps its leading whitespace, so joining them gives the line back."""
    if _SPLIT_TRIGGERS.search(line) is None:
        return [line]
    for rule in _SPLIT_RULES:
        line = rule.sub("\\1\n\\2", line)
    return line.split("\n")


class _SpaceSeparated:
    """A custom tokenizer's bare sentences, all but the first given a leading space to rejoin them."""

    def __init__(self, tokenize: Callable[[str], list[str]]):
        self.tokenize = tokenize

    def __call__(self, line: str) -> list[str]:
        return [s if i == 0 or s[:1].isspace() else " " + s for i, s in enumerate(self.tokenize(line))]


@OPERATORS.register_module("remove_repeat_sentences_mapper")
class RemoveRepeatSentencesMapper(Mapper):
    """Removes sentences already seen earlier in the same text. Lines are split into sentences
    (by default after ``.``, ``。``, ``!``, ``?`` and their full-width forms, ``......`` and
    ``……``); a sentence is compared once trimmed, optionally lower-cased and stripped of special
    characters. Sentences shorter than ``min_repeat_sentence_length`` (as compared) are always
    kept. Line breaks are kept; a line whose sentences all repeat becomes empty."""

    writes_text_only = True  # rewrites only the text field

    def __init__(
        self,
        lowercase: bool = False,
        ignore_special_character: bool = True,
        min_repeat_sentence_length: int = 2,
        tokenizer: Callable[[str], list[str]] | str | None = None,
        **kwargs,
    ):
        """
        :param lowercase: compare sentences case-insensitively (lower-cased)
        :param ignore_special_character: compare sentences without their special characters
            (everything but Chinese characters, ASCII letters and digits, spaces, tabs)
        :param min_repeat_sentence_length: sentences shorter than this, as compared, are never
            removed
        :param tokenizer: sentence splitter for one line: a callable returning a list of
            sentences, or a lambda as a string (e.g.
            ``"lambda text: __import__('nltk').sent_tokenize(text)"``); sentences after the
            first are rejoined with a space. None uses the built-in punctuation rules.
        """
        super().__init__(**kwargs)
        self.lowercase = lowercase
        self.ignore_special_character = ignore_special_character
        self.min_repeat_sentence_length = min_repeat_sentence_length
        self.tokenizer = tokenizer
        self._split = self._splitter()

    def _splitter(self) -> Callable[[str], list[str]]:
        if self.tokenizer is None:
            return split_sentences
        if callable(self.tokenizer):
            return _SpaceSeparated(self.tokenizer)
        if isinstance(self.tokenizer, str):
            return _SpaceSeparated(parse_lambda(self.tokenizer, who=self.name, param="tokenizer"))
        raise ValueError(f"{self.name}: `tokenizer` must be None, a callable or a lambda string, "
                         f"got {type(self.tokenizer).__name__}")

    # a tokenizer given as a string is compiled again after unpickling, so the op pickles
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_split"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._split = self._splitter()

    def _dedup(self, text: str) -> str:
        seen = set()
        min_len, lower, special = self.min_repeat_sentence_length, self.lowercase, self.ignore_special_character
        out_lines = []
        for line in text.split("\n"):
            kept = []
            if line:
                for sentence in self._split(line):
                    key = sentence.strip()
                    if lower:
                        key = key.lower()
                    if special:
                        key = _SPECIAL.sub("", key)
                    if len(key) < min_len:
                        kept.append(sentence)
                    elif key not in seen:
                        seen.add(key)
                        kept.append(sentence)
            out_lines.append("".join(kept))
        return "\n".join(out_lines)

    def process_batched(self, samples):
        samples[self.text_key] = [self._dedup(t) for t in samples[self.text_key]]
        return samples
