from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# Unicode punctuation -> ASCII, the mapping Data-Juicer recipes expect (incl. its odd entries:
# full-width "１" -> '"', "—" -> " - ", "．" -> ". ")
PUNCTUATION_TO_ASCII = str.maketrans({
    "，": ",", "。": ".", "、": ",", "„": '"', "”": '"', "“": '"', "«": '"', "»": '"', "１": '"',
    "」": '"', "「": '"', "《": '"', "》": '"', "´": "'", "∶": ":", "：": ":", "？": "?", "！": "!",
    "（": "(", "）": ")", "；": ";", "–": "-", "—": " - ", "．": ". ", "～": "~", "’": "'", "…": "...",
    "━": "-", "〈": "<", "〉": ">", "【": "[", "】": "]", "％": "%", "►": "-",
})


@OPERATORS.register_module("punctuation_normalization_mapper")
class PunctuationNormalizationMapper(Mapper):
    """Replaces full-width and other Unicode punctuation (，。、「」《》“”…–— and more) with ASCII
    equivalents."""

    def process_batched(self, samples):
        samples[self.text_key] = [t.translate(PUNCTUATION_TO_ASCII) for t in samples[self.text_key]]
        return samples
