from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import Fields, MetaKeys
from data_juicer.utils.lazy import require


@OPERATORS.register_module("extract_tables_from_html_mapper")
class ExtractTablesFromHtmlMapper(Mapper):
    """Extracts the ``<table>`` elements of HTML text into ``__dj__meta__[tables_field_name]``.

    The text is parsed with BeautifulSoup's ``html.parser``. With ``retain_html_tags`` each
    table is stored as its HTML string. Otherwise each table becomes a list of rows, each row
    the list of its direct ``td``/``th`` cells' stripped text; rows without cells and tables
    without rows are left out, and rows holding a direct ``th`` cell (header rows) are left out
    when ``include_header`` is False. Text without tables gets an empty list. A sample whose
    meta already holds the field is left as it is. The text itself is not changed.

    :param tables_field_name: meta key that receives the tables
    :param retain_html_tags: store each table's raw HTML instead of its cell texts
    :param include_header: keep header rows (only when ``retain_html_tags`` is False)
    """

    requires = ("beautifulsoup4",)

    def __init__(
        self,
        tables_field_name: str = MetaKeys.html_tables,
        retain_html_tags: bool = False,
        include_header: bool = True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.tables_field_name = tables_field_name
        self.retain_html_tags = retain_html_tags
        self.include_header = include_header

    def _tables(self, bs4, html) -> list:
        if not isinstance(html, str) or "<table" not in html.lower():
            if not isinstance(html, str):
                raise TypeError(f"{self.name}: text must be a string, got {type(html).__name__}")
            return []
        tables = bs4.BeautifulSoup(html, "html.parser").find_all("table")
        if self.retain_html_tags:
            return [str(t) for t in tables]
        out = []
        for table in tables:
            rows = []
            for tr in table.find_all("tr"):
                cells = tr.find_all(["td", "th"], recursive=False)
                if not cells:
                    continue
                if not self.include_header and any(c.name == "th" for c in cells):
                    continue
                rows.append([c.get_text(strip=True) for c in cells])
            if rows:
                out.append(rows)
        return out

    def process_batched(self, samples):
        bs4 = None
        texts = samples[self.text_key]
        metas = samples.get(Fields.meta) or [None] * len(texts)
        new_metas = []
        for text, meta in zip(texts, metas):
            meta = dict(meta) if meta else {}
            if self.tables_field_name not in meta:
                if bs4 is None:
                    bs4 = require("beautifulsoup4", who=self.name)
                meta[self.tables_field_name] = self._tables(bs4, text)
            new_metas.append(meta)
        samples[Fields.meta] = new_metas
        return samples
