import importlib

import regex

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require

# list items become "*" bullet lines before the tags are dropped
_LIST_TAGS = (("<li>", "\n*"), ("</li>", ""), ("<ol>", "\n*"), ("</ol>", ""))
_SURROGATE = regex.compile(r"[\ud800-\udfff]")
# what the HTML parser drops from the start of plain text (it only begins the body there)
_HTML_LEADING_SPACE = " \t\n\f"


def _is_plain(text: str) -> bool:
    """True when parsing cannot change the text except for leading whitespace: no tags or
    entities, no CR (normalised to LF), no NUL, no lone surrogates (dropped on encoding)."""
    return not ("<" in text or "&" in text or "\r" in text or "\0" in text
                or (not text.isascii() and _SURROGATE.search(text)))


@OPERATORS.register_module("clean_html_mapper")
class CleanHtmlMapper(Mapper):
    """Converts HTML to plain text with selectolax's Lexbor parser: tags and comments are
    dropped, entities decoded, and each ``<li>`` / ``<ol>`` starts a new ``*`` bullet line.
    Values that are not strings are left as they are."""

    writes_text_only = True  # rewrites only the text field

    requires = ("selectolax",)

    def process_batched(self, samples):
        require("selectolax", who=self.name)
        parser_cls = importlib.import_module("selectolax.lexbor").LexborHTMLParser

        def to_text(html):
            if not isinstance(html, str):
                return html
            if _is_plain(html):
                return html.lstrip(_HTML_LEADING_SPACE)
            for tag, repl in _LIST_TAGS:
                html = html.replace(tag, repl)
            return parser_cls(html).text()

        samples[self.text_key] = [to_text(t) for t in samples[self.text_key]]
        return samples
