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
    from ftfy import chardata

    enc = _encoding_chars()
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


@functools.lru_cache(maxsize=1)
def _acting_chars():
    """``findall`` of every character one of ftfy's checks or plain fixers looks for: the guards of
    ``_badness_checks`` and the fixers' trigger characters (surrogates included). A line's set of
    them is what ``_fix_line`` needs to pick its steps; a regex finds them faster than a set
    intersection, which makes a string of each character of the line (a Cyrillic line holds few
    of them, where nearly every letter is one ``_tables``'s settled patterns match)."""
    return _acting_patterns()[False].findall


@functools.lru_cache(maxsize=1)
def _acting_patterns():
    """``{unescape: pattern}`` matching a character of ``_acting_chars`` (and ``&`` while unescaping
    HTML). In a normalized text, a line without one is left as it is by every step of ftfy: no
    entity to unescape, no guard of ``BADNESS_RE`` (so no encoding repair), no fixer's trigger;
    ``fix_text_by_line`` looks for these lines only (a Cyrillic or accented Latin line that holds
    none of them needs no ``_fix_line`` call)."""
    chars = set().union(*_tables()[1].values())
    built = _badness_checks()
    if built is None:  # ftfy's own is_bad: any character it may read counts
        chars |= _encoding_chars()
    else:
        chars |= built[0]
    cls = "".join(re.escape(ch) for ch in sorted(chars) if ch not in "\t\n" and not " " <= ch <= "~")
    cls += "\ud800-\udfff"
    return {True: re.compile(f"[&{cls}]"), False: re.compile(f"[{cls}]")}


@functools.lru_cache(maxsize=1)
def _encoding_chars() -> frozenset:
    """U+FFFD and every character bytes 0x80-0xff decode to in one of ftfy's ``CHARMAP_ENCODINGS``."""
    import ftfy.bad_codecs  # noqa: F401  (registers the sloppy-windows-* codecs)
    from ftfy import chardata

    enc = set("\ufffd")
    high = bytes(range(0x80, 0x100))
    for name in chardata.CHARMAP_ENCODINGS:
        enc.update(high.decode(name, errors="ignore"))
    return frozenset(enc)


def _split_alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a ``re.VERBOSE`` pattern (comments dropped), as source."""
    parts, cur, i, depth, n = [], [], 0, 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            cur.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            cur.append(pattern[i:j + 1])
            i = j + 1
            continue
        if c == "#":
            j = pattern.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


@functools.lru_cache(maxsize=1)
def _badness_checks():
    """ftfy's ``is_bad`` (one search of its ~40-alternative ``BADNESS_RE``) split into guarded parts.

    Each alternative of the installed ftfy's ``BADNESS_RE`` has a character it cannot match
    without (a mandatory character class, its guard). Each alternative is searched alone (those
    with the same guard together), and only in a text that holds one of its guard characters. A
    text matches ``BADNESS_RE`` exactly when it matches one of its alternatives, so the result is
    ftfy's (checked against the parsed pattern at build time; None if the layout is not
    understood, and then ftfy's own ``is_bad`` is used). Returns ``(every guard character,
    ((guard, search), ...), {guard character: its searches})``."""
    import unicodedata as ud

    from ftfy import badness

    try:
        import re._constants as sc
        import re._parser as sp
    except ImportError:  # Python < 3.11
        import sre_constants as sc
        import sre_parse as sp
    bad_re = getattr(badness, "BADNESS_RE", None)
    if bad_re is None:
        return None
    flags = bad_re.flags
    try:
        parsed = list(sp.parse(bad_re.pattern, flags))
        if len(parsed) != 1 or parsed[0][0] != sc.BRANCH:
            return None
        branches = parsed[0][1][1]
        sources = _split_alternatives(bad_re.pattern)
        if len(sources) != len(branches) or any(
                str(list(sp.parse(src, flags))) != str(list(br)) for src, br in zip(sources, branches)):
            return None
    except Exception:  # noqa: BLE001 - an unexpected pattern: use ftfy's own is_bad
        return None

    def charset(item):
        op, av = item
        if op == sc.LITERAL:
            return {chr(av)}
        if op != sc.IN:
            return None
        out = set()
        for o, a in av:
            if o == sc.LITERAL:
                out.add(chr(a))
            elif o == sc.RANGE:
                out.update(chr(c) for c in range(a[0], a[1] + 1))
            else:  # NEGATE, CATEGORY: not a plain set
                return None
        return out

    def rank(chars):  # prefer a guard without ASCII, then with the fewest letters, then the smallest
        return (any(ord(c) < 128 for c in chars), sum(ud.category(c).startswith("L") for c in chars), len(chars))

    single = []
    for src, br in zip(sources, branches):
        sets = [cs for cs in (charset(it) for it in br) if cs]  # the branch's top-level, mandatory items
        if not sets:
            return None
        guard = min(sets, key=rank)
        if rank(guard)[0]:
            return None
        single.append((frozenset(guard), src))
    # one search per guard: an alternation of alternatives that start differently is searched far
    # slower than its parts (the regex engine can no longer skip to a possible first character)
    merged: dict[frozenset, list] = {}  # alternatives with the same guard share one search
    for guard, src in single:
        merged.setdefault(guard, []).append(src)
    checks = tuple((g, re.compile("|".join(srcs), flags).search) for g, srcs in merged.items())
    owners: dict[str, list] = {}  # guard character -> the searches it guards
    for guard, search in checks:
        for ch in guard:
            owners.setdefault(ch, []).append(search)
    return frozenset(owners), checks, {ch: tuple(v) for ch, v in owners.items()}


def _is_bad_given(text: str, present, built) -> bool:
    """``is_bad(text)`` where ``present`` is a set holding (at least) the guard characters in ``text``."""
    every, _, owners = built
    hits = every.intersection(present)
    if not hits:
        return False
    if len(hits) == 1:
        searches = owners[next(iter(hits))]
    else:
        searches = set()
        for ch in hits:
            searches.update(owners[ch])
    for search in searches:
        if search(text) is not None:
            return True
    return False


def is_bad(text: str) -> bool:
    """``ftfy.badness.is_bad(text)``: whether ftfy sees mojibake in ``text`` (same answer, less work)."""
    built = _badness_checks()
    if built is None:
        from ftfy import badness

        return badness.is_bad(text)
    return _is_bad_given(text, set(text), built)


def _replacer(table: dict, fixer):
    """``text.translate(table)`` (what ftfy's ``fix_character_width``, ``fix_latin_ligatures`` and
    ``remove_control_chars`` do) as one ``str.replace`` per table character the text holds, given
    those characters: far faster than ``translate``'s per-character lookup on a long non-ASCII
    line. Exact when no replacement holds a table character (then the order of the replacements
    does not matter); checked against ftfy's own fixer on every table character, else None."""
    keys = {chr(k): ("" if v is None else v if isinstance(v, str) else chr(v)) for k, v in table.items()}
    if any(ch in keys for v in keys.values() for ch in v):
        return None

    def replace(text: str, present) -> str:
        for ch in keys.keys() & present:
            text = text.replace(ch, keys[ch])
        return text

    probe = "a".join(keys) + "a"
    return replace if replace(probe, set(probe)) == fixer(probe) == probe.translate(table) else None


@functools.lru_cache(maxsize=8)
def _fixers(config) -> list:
    """``(fixer(text, present), trigger characters)`` of each plain ftfy fixer the config turns on, in ftfy's order."""
    from ftfy import FIXERS, chardata

    tables = {"fix_latin_ligatures": chardata.LIGATURES, "fix_character_width": chardata.WIDTH_MAP,
              "remove_control_chars": chardata.CONTROL_CHARS}
    out = []
    for name, chars in _tables()[1].items():
        if not getattr(config, name):
            continue
        fixer = FIXERS[name]
        fast = _replacer(tables[name], fixer) if name in tables else None
        if name == "fix_surrogates":
            chars = set(map(chr, range(0xD800, 0xE000)))
        out.append((fast or (lambda text, present, fixer=fixer: fixer(text)), frozenset(chars)))
    return out


@functools.lru_cache(maxsize=1)
def _ftfy_steps():
    """ftfy's HTML unescaping and encoding repair (looked up once, not imported on every line)."""
    from ftfy import FIXERS, fix_encoding

    return FIXERS["unescape_html"], fix_encoding


@functools.lru_cache(maxsize=65536)  # boilerplate lines (headers, footers, notices) repeat across documents
def _fix_line(line: str, config, unescape: bool) -> str:
    """One line through ftfy's ``fix_and_explain`` steps (explain off), skipping the steps that
    cannot change it.

    Each round runs, in ftfy's order: HTML unescaping (only with an ``&``), encoding repair
    (only when ftfy's own ``is_bad`` says the text looks like mojibake: otherwise ftfy leaves
    it), each plain fixer whose trigger characters are present, then the normalization; rounds
    repeat until nothing changes, as in ftfy. A round's output holding none of the characters
    any step looks for (``_acting_patterns``) is already normalized, so the next round would return
    it unchanged: it is the result.
    """
    unescape_html, fix_encoding = _ftfy_steps()
    looks_for = _acting_patterns()[unescape].search
    acting = _acting_chars()
    built = _badness_checks()
    fixers = _fixers(config)
    form = config.normalization
    text = line
    while True:
        before = text
        if unescape and "&" in text:
            text = unescape_html(text)
        present = set(acting(text))
        if config.fix_encoding and not text.isascii() and (
                _is_bad_given(text, present, built) if built is not None else is_bad(text)):
            text = fix_encoding(text)
            present = set(acting(text))
        for fixer, trigger in fixers:
            if not trigger.isdisjoint(present):
                fixed = fixer(text, present)
                if fixed != text:
                    text = fixed
                    present = set(acting(text))
        if form is not None:
            text = unicodedata.normalize(form, text)
        if text == before or looks_for(text) is None:
            return text


def fix_text_by_line(text: str, config, fix_text) -> str:
    """``ftfy.fix_text(text, config)``, doing only the work that can change something.

    ftfy fixes a text line by line, and once a line contains '<' it stops unescaping HTML
    entities for the rest of the text; this keeps both rules. In a normalized text a line with
    none of the characters ftfy's steps look for (``_acting_patterns``: most lines, ASCII, CJK,
    kana, Hangul, emoji, and Latin, Cyrillic, Greek text without mojibake guards) is kept
    as it is; the others go through ftfy's own fixers, each only when its trigger characters are
    present (``_fix_line``). The result is identical to ``ftfy.fix_text`` (checked on the
    benchmark corpus and by fuzzing in the tests).
    """
    form = config.normalization
    end = len(text)
    unescape0 = config.unescape_html is not False
    if form is None or text.isascii() or unicodedata.is_normalized(form, text):
        # Normalization never crosses a line break, so every line is normalized too: only the lines
        # holding a character ftfy acts on need work. Find them with one search over the text.
        search = _acting_patterns()[unescape0].search
        cut = end + 1  # lines starting at or after ``cut`` follow a '<': no HTML unescaping there
        if config.unescape_html == "auto":
            lt = text.find("<")
            if lt >= 0:
                cut = text.rfind("\n", 0, lt) + 1
            config_lt = config._replace(unescape_html=False)
        out, done, i = [], 0, 0
        while True:
            m = search(text, i)
            if m is None:
                break
            p = m.start()
            ls = text.rfind("\n", 0, p) + 1
            le = text.find("\n", p) + 1 or end
            i = le
            cfg, unescape = config, unescape0
            if ls >= cut:
                cfg, unescape = config_lt, False
            line = text[ls:le]
            if unescape0 and not unescape and _acting_patterns()[False].search(line) is None:
                continue  # only '&', which is left alone after a '<'
            fixed = fix_text(line, cfg) if len(line) > cfg.max_decode_length else _fix_line(line, cfg, unescape)
            if fixed != line:
                out.append(text[done:ls])
                out.append(fixed)
                done = le
        if not out:
            return text
        out.append(text[done:])
        return "".join(out)

    acting = _acting_patterns()

    def is_settled(line: str, unescape: bool) -> bool:
        return acting[unescape].search(line) is None and (
            form is None or line.isascii() or unicodedata.is_normalized(form, line))

    out, pos = [], 0
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

    writes_text_only = True  # rewrites only the text field

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
