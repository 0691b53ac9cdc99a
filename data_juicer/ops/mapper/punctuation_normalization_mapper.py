from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# Unicode punctuation -> ASCII, the mapping Data-Juicer recipes expect (incl. its odd entries:
# full-width "１" -> '"', "—" -> " - ", "．" -> ". ")
PUNCTUATION_TO_ASCII = {
    "，": ",", "。": ".", "、": ",", "„": '"', "”": '"', "“": '"', "«": '"', "»": '"', "１": '"',
    "」": '"', "「": '"', "《": '"', "》": '"', "´": "'", "∶": ":", "：": ":", "？": "?", "！": "!",
    "（": "(", "）": ")", "；": ";", "–": "-", "—": " - ", "．": ". ", "～": "~", "’": "'", "…": "...",
    "━": "-", "〈": "<", "〉": ">", "【": "[", "】": "]", "％": "%", "►": "-",
}
_PAIRS = tuple(PUNCTUATION_TO_ASCII.items())


def normalize_punctuation(text: str) -> str:
    # one str.replace per key beats str.translate (a dict lookup per character); the order does
    # not matter because every replacement is ASCII and every key is not
    if text.isascii():
        return text
    for src, dst in _PAIRS:
        if src in text:
            text = text.replace(src, dst)
    return text


@OPERATORS.register_module("punctuation_normalization_mapper")
class PunctuationNormalizationMapper(Mapper):
    """Replaces full-width and other Unicode punctuation (，。、「」《》“”…–— and more) with ASCII
    equivalents."""

    writes_text_only = True  # rewrites only the text field

    def process_batched(self, samples):
        samples[self.text_key] = [normalize_punctuation(t) for t in samples[self.text_key]]
        return samples
