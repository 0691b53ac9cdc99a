import importlib

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require

# list items become "*" bullet lines before the tags are dropped
_LIST_TAGS = (("<li>", "\n*"), ("</li>", ""), ("<ol>", "\n*"), ("</ol>", ""))


@OPERATORS.register_module("clean_html_mapper")
class CleanHtmlMapper(Mapper):
    """Converts HTML to plain text with selectolax's Lexbor parser: tags and comments are
    dropped, entities decoded, and each ``<li>`` / ``<ol>`` starts a new ``*`` bullet line.
    Values that are not strings are left as they are."""

    requires = ("selectolax",)

    def process_batched(self, samples):
        require("selectolax", who=self.name)
        parser_cls = importlib.import_module("selectolax.lexbor").LexborHTMLParser

        def to_text(html):
            if not isinstance(html, str):
                return html
            if "<" in html:
                for tag, repl in _LIST_TAGS:
                    html = html.replace(tag, repl)
            return parser_cls(html).text()

        samples[self.text_key] = [to_text(t) for t in samples[self.text_key]]
        return samples
