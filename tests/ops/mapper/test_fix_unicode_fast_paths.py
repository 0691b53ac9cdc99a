"""fix_unicode_mapper's per-line shortcuts (set-based step choice, str.replace fixers, the early
end of the rounds) give ftfy's own result."""

import random

import ftfy
import pytest

from data_juicer.ops.mapper import fix_unicode_mapper as m


def test_replace_fixers_equal_ftfy_translate():
    from ftfy import chardata, fixes

    config = ftfy.TextFixerConfig(explain=False, normalization="NFC")
    names = [n for n in m._tables()[1] if getattr(config, n)]
    fast = {n: f for n, (f, _) in zip(names, m._fixers(config)) if f.__name__ == "replace"}
    assert sorted(fast) == ["fix_character_width", "fix_latin_ligatures", "remove_control_chars"]
    tables = {"fix_character_width": chardata.WIDTH_MAP, "fix_latin_ligatures": chardata.LIGATURES,
              "remove_control_chars": chardata.CONTROL_CHARS}
    rng = random.Random(5)
    for name, table in tables.items():
        keys = [chr(k) for k in table] + list("ab ，中\u3000ｶﾞ")
        for _ in range(300):
            text = "".join(rng.choice(keys) for _ in range(rng.randint(0, 30)))
            assert fast[name](text, set(text)) == getattr(fixes, name)(text), (name, repr(text))
    # literal: full-width comma and ideographic space, ligature, controls
    assert fast["fix_character_width"]("中，文\u3000ａ", set("，\u3000ａ")) == "中,文 a"
    assert fast["fix_latin_ligatures"]("ﬁne ﬂow", set("ﬁﬂ")) == "fine flow"
    assert fast["remove_control_chars"]("a\x00b\x7fc", set("\x00\x7f")) == "abc"


def test_acting_chars_cover_guards_and_triggers():
    every = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c < 0xE000) + "\ud800"
    found = set(m._acting_chars()(every))
    assert m._badness_checks()[0] <= found
    for chars in m._tables()[1].values():
        assert set(chars) - {"\t", "\n"} <= found
    assert "\ud800" in found and "a" not in found and "и" not in found  # only guarding Cyrillic letters


def test_is_bad_owner_map_literals():
    assert m.is_bad("вЂ™") is True  # Windows-1251 mojibake of U+2019
    assert m.is_bad("обычный текст, вопрос") is False
    assert m.is_bad("Р°Р") is True  # three-character Windows-1251 sequence (Р ° Р)
    assert m.is_bad("СЂРёРІ") is False  # Ђ is not one of the middle characters that sequence needs
    assert m.is_bad("\u0085") is True  # a C1 control on its own
    assert m.is_bad("ÃƒÂ©") is True


@pytest.mark.parametrize("form", ["NFC", "NFKC", "NFD"])
def test_fix_line_equals_ftfy_on_cyrillic_cjk_and_mojibake_lines(form):
    config = ftfy.TextFixerConfig(explain=False, normalization=form)
    pieces = ["привет", " мир", "вЂ™", "СЂ", "Р", "В", "Г", "ў", "Ђ", "，", "（", "）", "：", "\u3000", "中文",
              "ｶﾞ", "“", "”", "‘", "’", "\r\n", "\r", "\x1b[31m", "\x1b", "\x00", "\x85", "&amp;", "&lt;", "&",
              "Ã©", "Ã", "©", "Â", "\u00a0", "ü", "ß", "œ", "°", "│", "é", "e\u0301", "ﬁ", "½", "ａ", " ", "x",
              "\ufffd", "ΒΓ", "€", "\u2028"]
    rng = random.Random({"NFC": 1, "NFKC": 2, "NFD": 3}[form])
    for _ in range(1000):
        line = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 16)))
        line = line.replace("\n", " ")
        for unescape in (True, False):
            cfg = config if unescape else config._replace(unescape_html=False)
            assert m._fix_line.__wrapped__(line, cfg, unescape) == ftfy.fix_text(line, cfg), (form, repr(line))


def test_round_two_shortcut_literals():
    config = ftfy.TextFixerConfig(explain=False, normalization="NFC")
    # after one round nothing ftfy acts on remains: the result of that round
    assert m._fix_line.__wrapped__("中，文（注）\r\n", config, True) == "中,文(注)\n"
    # mojibake whose repair leaves a curly quote: a second round uncurls it
    assert m._fix_line.__wrapped__("doesnâ€™t", config, True) == "doesn't"
    assert ftfy.fix_text("doesnâ€™t", config) == "doesn't"


def test_lines_without_acting_characters_are_not_fixed(monkeypatch):
    config = ftfy.TextFixerConfig(explain=False, normalization="NFC")
    seen = []
    real = m._fix_line
    monkeypatch.setattr(m, "_fix_line", lambda line, cfg, unescape: seen.append(line) or real(line, cfg, unescape))
    text = "übermäßig größer ñandú\nобычный текст\nΕλληνικά\nmojibake Ã©\n"
    assert m.fix_text_by_line(text, config, ftfy.fix_text) == ftfy.fix_text(text, config) == text.replace("Ã©", "é")
    assert seen == ["mojibake Ã©\n"]  # accented Latin, Cyrillic and Greek lines hold no guard or trigger character
