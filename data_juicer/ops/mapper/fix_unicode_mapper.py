import functools
import re
import unicodedata
from typing import Optional

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.lazy import require

_FORMS = ("NFC", "NFKC", "NFD", "NFKD")


@functools.lru_cache(maxsize=1)
def _tables():
    """What each of ftfy's fixers can act on, read from the installed ftfy's own tables.

    Returns ``(settled_patterns, fixer_triggers)``. ``settled_patterns[unescape]`` matches any
    character some step of ftfy could act on: a character that bytes 0x80-0xff decode to in one
    of its ``CHARMAP_ENCODINGS`` (what mojibake is made of: Latin, Cyrillic, Greek, Mac and DOS
    code page letters, C1 controls), U+FFFD, ligatures, full-width forms, curly quotes, Unicode
    line breaks, control characters (CR and ESC included), surrogates, and ``&`` while HTML
    unescaping is on. ``fixer_triggers`` maps each plain fixer to the characters without which
    it returns its input unchanged.
    """
    import ftfy.bad_codecs  # noqa: F401  (registers the sloppy-windows-* codecs)
    from ftfy import chardata

    enc = set("\ufffd")
    high = bytes(range(0x80, 0x100))
    for name in chardata.CHARMAP_ENCODINGS:
        enc.update(high.decode(name, errors="ignore"))
    triggers = {
        "fix_c1_controls": {chr(c) for c in range(0x80, 0xA0)},
        "fix_latin_ligatures": {chr(k) for k in chardata.LIGATURES},
        "fix_character_width": {chr(k) for k in chardata.WIDTH_MAP},
        "uncurl_quotes": set("\u02bc\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f"),
        "fix_line_breaks": set("\r\u2028\u2029\u0085"),
        "fix_surrogates": set(),  # matched by the surrogate range below
        "remove_terminal_escapes": {"\x1b"},
        "remove_control_chars": {chr(k) for k in chardata.CONTROL_CHARS},
    }
    chars = set(enc).union(*triggers.values())
    cls = "".join(re.escape(ch) for ch in sorted(chars) if ch not in "\t\n" and not " " <= ch <= "~")
    cls += "\ud800-\udfff"
    settled = {True: re.compile(f"[&{cls}]"), False: re.compile(f"[{cls}]")}
    return settled, triggers


@functools.lru_cache(maxsize=8)
def _fixers(config) -> list:
    from ftfy import FIXERS

    return [(FIXERS[name], chars, name == "fix_surrogates") for name, chars in _tables()[1].items()
            if getattr(config, name)]


@functools.lru_cache(maxsize=16384)  # boilerplate lines (headers, footers, notices) repeat across documents
def _fix_line(line: str, config, unescape: bool) -> str:
    """One line through ftfy's ``fix_and_explain`` steps (explain off), skipping the steps that
    cannot change it.

    Each round runs, in ftfy's order: HTML unescaping (only with an ``&``), encoding repair
    (only when ftfy's own ``is_bad`` says the text looks like mojibake: otherwise ftfy leaves
    it), each plain fixer whose trigger characters are present, then the normalization; rounds
    repeat until nothing changes, as in ftfy.
    """
    from ftfy import FIXERS, badness, fix_encoding

    settled, triggers = _tables()
    pattern = settled[unescape]
    fixers = _fixers(config)
    form = config.normalization
    text = line
    while True:
        before = text
        if unescape and "&" in text:
            text = FIXERS["unescape_html"](text)
        if config.fix_encoding and not text.isascii() and badness.is_bad(text):
            text = fix_encoding(text)
        present = set(pattern.findall(text))
        for fixer, chars, surrogates in fixers:
            if (present & chars) or (surrogates and any("\ud800" <= ch <= "\udfff" for ch in present)):
                fixed = fixer(text)
                if fixed != text:
                    text = fixed
                    present = set(pattern.findall(text))
        if form is not None:
            text = unicodedata.normalize(form, text)
        if text == before:
            return text


def fix_text_by_line(text: str, config, fix_text) -> str:
    """``ftfy.fix_text(text, config)``, doing only the work that can change something.

    ftfy fixes a text line by line, and once a line contains '<' it stops unescaping HTML
    entities for the rest of the text; this keeps both rules. A line with none of the characters
    ftfy acts on (most lines: ASCII, CJK, kana, Hangul, emoji...) and already normalized is kept
    as it is; the others go through ftfy's own fixers, each only when its trigger characters are
    present (``_fix_line``). The result is identical to ``ftfy.fix_text`` (checked on the
    benchmark corpus and by fuzzing in the tests).
    """
    settled, _ = _tables()
    form = config.normalization

    def is_settled(line: str, unescape: bool) -> bool:
        return settled[unescape].search(line) is None and (
            form is None or line.isascii() or unicodedata.is_normalized(form, line))

    if is_settled(text, config.unescape_html is not False):
        return text
    out, pos, end = [], 0, len(text)
    while pos < end:
        stop = text.find("\n", pos) + 1 or end
        line = text[pos:stop]
        pos = stop
        if config.unescape_html == "auto" and "<" in line:
            config = config._replace(unescape_html=False)
        unescape = config.unescape_html is not False
        if is_settled(line, unescape):
            out.append(line)
        elif len(line) > config.max_decode_length:
            out.append(fix_text(line, config))
        else:
            out.append(_fix_line(line, config, unescape))
    return "".join(out)


@OPERATORS.register_module("fix_unicode_mapper")
class FixUnicodeMapper(Mapper):
    """Repairs broken Unicode with ftfy (mojibake, HTML entities in plain text, curly quotes,
    ligatures, full-width letters, terminal escapes, line breaks, control characters) and then
    applies a Unicode normalization form."""

    requires = ("ftfy",)

    def __init__(self, normalization: Optional[str] = None, **kwargs):
        """
        :param normalization: Unicode normalization form, one of NFC, NFKC, NFD, NFKD (any case);
            empty or None means NFC
        """
        super().__init__(**kwargs)
        form = normalization.upper() if normalization else "NFC"
        if form not in _FORMS:
            raise ValueError(f"{self.name}: normalization {normalization!r} is not supported; "
                             f"use one of {', '.join(_FORMS)}")
        self.normalization = form
        self._config = None

    def process_batched(self, samples):
        ftfy = require("ftfy", who=self.name)
        if self._config is None:
            self._config = ftfy.TextFixerConfig(explain=False, normalization=self.normalization)
        fix, config = ftfy.fix_text, self._config
        samples[self.text_key] = [fix_text_by_line(t, config, fix) for t in samples[self.text_key]]
        return samples
