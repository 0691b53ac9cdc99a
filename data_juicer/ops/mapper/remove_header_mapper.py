import regex

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# a sectioning command: \section{title}, \section*[short]{title}, ... (the title may span lines)
_HEADER = regex.compile(
    r"\\\b(?:chapter|part|section|subsection|subsubsection|paragraph|subparagraph)\b\*?(?:\[.*?\])?\{.*?\}",
    flags=regex.DOTALL,
)


@OPERATORS.register_module("remove_header_mapper")
class RemoveHeaderMapper(Mapper):
    """Removes the preamble of LaTeX documents: everything before the first sectioning command
    (``\\chapter``, ``\\part``, ``\\section``, ``\\subsection``, ``\\subsubsection``,
    ``\\paragraph``, ``\\subparagraph``, starred or with a short title). The command itself is kept.
    A text without any such command is emptied (the sample stays) when ``drop_no_head`` is set."""

    writes_text_only = True  # rewrites only the text field

    def __init__(self, drop_no_head: bool = True, **kwargs):
        """
        :param drop_no_head: replace texts that have no sectioning command by an empty string;
            when false they are kept unchanged
        """
        super().__init__(**kwargs)
        self.drop_no_head = drop_no_head

    def _strip_preamble(self, text: str) -> str:
        m = _HEADER.search(text) if "\\" in text else None
        if m is None:
            return "" if self.drop_no_head else text
        return text[m.start():]

    def process_batched(self, samples):
        samples[self.text_key] = [self._strip_preamble(t) for t in samples[self.text_key]]
        return samples
