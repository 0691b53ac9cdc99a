import re

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# the tail starts at the first of these; \bibliography{ needs a "}" somewhere after it
_TAIL_START = re.compile(
    r"\\appendix|\\begin\{(?:references|REFERENCES|thebibliography)\}|\\bibliography\{.*\}", flags=re.DOTALL
)


def cut_tail(text: str) -> str:
    m = _TAIL_START.search(text)
    return text if m is None else text[: m.start()]


@OPERATORS.register_module("remove_bibliography_mapper")
class RemoveBibliographyMapper(Mapper):
    """Cuts LaTeX documents at the start of their bibliography or appendix: everything from the
    first ``\\appendix``, ``\\begin{references}``, ``\\begin{REFERENCES}``,
    ``\\begin{thebibliography}`` or ``\\bibliography{...}`` to the end of the text is removed."""

    writes_text_only = True  # rewrites only the text field

    def process_batched(self, samples):
        samples[self.text_key] = [cut_tail(t) if "\\" in t else t for t in samples[self.text_key]]
        return samples
