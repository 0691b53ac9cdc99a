import re

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.strip_characters import strip_special
from data_juicer.ops.common.text_words import sentencepiece_words, setup_word_tokenizer
from data_juicer.ops.registry import OPERATORS

DEFAULT_SUBSTRINGS = ("http", "www", ".com", "href", "//")
SP_SPACE = "\u2581"  # sentencepiece's word-boundary mark


@OPERATORS.register_module("remove_words_with_incorrect_substrings_mapper")
class RemoveWordsWithIncorrectSubstringsMapper(Mapper):
    """Deletes words that contain an unwanted substring (by default ``http``, ``www``, ``.com``,
    ``href`` and ``//``); a word is tested once the punctuation, digits, symbols and emoji at its
    ends are stripped.

    Without tokenization, words are the pieces between spaces inside each tab-separated cell of
    each line; the text is rebuilt from the kept words, so runs of spaces become one space and
    empty cells and lines are dropped. With tokenization, the words are the pieces of the
    ``<lang>.sp.model`` sentencepiece model; when any piece is removed the kept pieces are
    joined without separators (as Data-Juicer does), otherwise the text is left as it is."""

    writes_text_only = True  # rewrites only the text field

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        return ("sentencepiece",) if params.get("tokenization") else ()

    def __init__(self, lang: str = "en", tokenization: bool = False, substrings: list[str] | None = None,
                 **kwargs):
        """
        :param lang: language of the samples; names the sentencepiece model ``<lang>.sp.model``
        :param tokenization: split words with the sentencepiece model instead of on whitespace
        :param substrings: substrings that mark a word for deletion (default: ``http``, ``www``,
            ``.com``, ``href``, ``//``)
        """
        super().__init__(**kwargs)
        if substrings is None:
            substrings = list(DEFAULT_SUBSTRINGS)
        elif isinstance(substrings, str) or not all(isinstance(s, str) for s in substrings):
            raise ValueError(f"{self.name}: substrings must be a list of strings, got {substrings!r}")
        self.substrings = list(substrings)
        setup_word_tokenizer(self, lang, tokenization)
        # longest first, so the alternation cannot stop at a shorter prefix (only a match/no-match matters)
        alts = sorted(set(self.substrings), key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, alts))) if alts else None

    def _bad(self, word: str) -> bool:
        return self._pattern is not None and self._pattern.search(strip_special(word)) is not None

    def _clean_plain(self, text: str) -> str:
        # stripping only shortens a word, so a text without any substring keeps every word
        bad = self._bad if self._pattern is not None and self._pattern.search(text) else None
        lines = []
        for line in text.split("\n"):
            cells = []
            for cell in line.split("\t"):
                words = [w for w in cell.split(" ") if w and (bad is None or not bad(w))]
                if words:
                    cells.append(" ".join(words))
            if cells:
                lines.append("\t".join(cells))
        return "\n".join(lines)

    def _clean_pieces(self, text: str, pieces: list[str]) -> str:
        words = [w for w in (p.replace(SP_SPACE, "") for p in pieces) if not self._bad(w)]
        return text if len(words) == len(pieces) else "".join(words)

    def process_batched(self, samples):
        texts = samples[self.text_key]
        if self.tokenization:
            tokenize = sentencepiece_words(self)
            samples[self.text_key] = [self._clean_pieces(t, p) for t, p in zip(texts, tokenize(list(texts)))]
        else:
            samples[self.text_key] = [self._clean_plain(t) for t in texts]
        return samples
