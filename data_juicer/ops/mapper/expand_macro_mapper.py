import regex

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# \newcommand{\name}{value} or \newcommand*{\name}{value}, the value running to a "}" that ends a line
_NEWCOMMAND = regex.compile(r"\\\bnewcommand\b\*?\{(\\[a-zA-Z0-9]+?)\}\{(.*?)\}$", flags=regex.MULTILINE)
# \def\name{value}, same value rule
_DEF = regex.compile(r"\\def\s*(\\[a-zA-Z0-9]+?)\s*\{(.*?)\}$", flags=regex.MULTILINE)


def _macros(text: str) -> dict[str, str]:
    """Argument-less macro definitions, name -> value; a later definition wins, \\def over \\newcommand."""
    macros = {}
    if "\\newcommand" in text:
        macros.update(_NEWCOMMAND.findall(text))
    if "\\def" in text:
        macros.update(_DEF.findall(text))
    return macros


def expand_macros(text: str) -> str:
    for name, value in _macros(text).items():
        # a use is the name plus the next character, which must not continue the name and is
        # consumed (of "\x\x " only the first is expanded); definitions are expanded too, and
        # each macro is applied to the output of the previous one
        if name in text:
            text = regex.sub(regex.escape(name) + "([^a-zA-Z0-9])", value.replace("\\", "\\\\") + "\\1", text)
    return text


@OPERATORS.register_module("expand_macro_mapper")
class ExpandMacroMapper(Mapper):
    """Expands argument-less LaTeX macros (``\\newcommand{\\name}{value}``, ``\\newcommand*`` and
    ``\\def\\name{value}``, each on one line) everywhere in the document, definitions included.
    A use is only expanded when followed by a character that is not a letter or digit, so
    ``\\name`` at the very end of the text is left as is. Macros with arguments are not expanded."""

    writes_text_only = True  # rewrites only the text field

    def process_batched(self, samples):
        samples[self.text_key] = [expand_macros(t) if "\\" in t else t for t in samples[self.text_key]]
        return samples
