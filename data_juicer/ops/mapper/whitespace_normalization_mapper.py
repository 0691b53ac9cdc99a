from data_juicer.ops.base import Mapper
from data_juicer.ops.common.special_characters import whitespace_to_space
from data_juicer.ops.registry import OPERATORS


@OPERATORS.register_module("whitespace_normalization_mapper")
class WhitespaceNormalizationMapper(Mapper):
    """Trims the text and maps every kind of Unicode whitespace (tabs, no-break and zero-width
    spaces, ideographic space...) to a plain space. Newlines are kept."""

    writes_text_only = True  # rewrites only the text field

    def process_batched(self, samples):
        samples[self.text_key] = [whitespace_to_space(t.strip()) for t in samples[self.text_key]]
        return samples
