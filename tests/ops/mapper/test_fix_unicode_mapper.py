"""Tests of fix_unicode_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("fix_unicode_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试,没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('âœ” No problems', '✔ No problems'),
        ('The Mona Lisa doesnÃ¢â‚¬â„¢t have eyebrows.', "The Mona Lisa doesn't have eyebrows."),
        ('ＬＯＵＤ\u3000ＮＯＩＳＥＳ', 'LOUD NOISES'),
        ('Broken text&hellip; it&#x2019;s ﬂubberiﬁc!', "Broken text… it's flubberific!"),
        ('é decomposed', 'é decomposed'),
        ('\x1b[36mcolor\x1b[0m', 'color'),
        ('a\r\nb\rc\u2028d', 'a\nb\nc\nd'),
        ('“quotes” ‘single’', '"quotes" \'single\''),
        ('<b>&amp;</b> then &amp;\nline2 &amp;', '<b>&amp;</b> then &amp;\nline2 &amp;'),
        ('&amp; alone', '& alone'),
        ('ﬁ ligature ½ ² ㎏', 'fi ligature ½ ² ㎏'),
        ('control\x00\x07\x7f chars', 'control chars'),
        ('café naïve', 'café naïve'),
        ('\ufeffBOM text', 'BOM text'),
        ('Ã©tÃ©', 'été'),
        ('l’été', "l'été"),
        ('ÐŸÑ€Ð¸Ð²ÐµÑ‚', 'Привет'),
        ('\x85c1', '…c1'),
        ('Hangul 가', 'Hangul 가'),
    ]),
    ({'normalization': 'nfkc'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试,没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('âœ” No problems', '✔ No problems'),
        ('The Mona Lisa doesnÃ¢â‚¬â„¢t have eyebrows.', "The Mona Lisa doesn't have eyebrows."),
        ('ＬＯＵＤ\u3000ＮＯＩＳＥＳ', 'LOUD NOISES'),
        ('Broken text&hellip; it&#x2019;s ﬂubberiﬁc!', "Broken text... it's flubberific!"),
        ('é decomposed', 'é decomposed'),
        ('\x1b[36mcolor\x1b[0m', 'color'),
        ('a\r\nb\rc\u2028d', 'a\nb\nc\nd'),
        ('“quotes” ‘single’', '"quotes" \'single\''),
        ('<b>&amp;</b> then &amp;\nline2 &amp;', '<b>&amp;</b> then &amp;\nline2 &amp;'),
        ('&amp; alone', '& alone'),
        ('ﬁ ligature ½ ² ㎏', 'fi ligature 1⁄2 2 kg'),
        ('control\x00\x07\x7f chars', 'control chars'),
        ('café naïve', 'café naïve'),
        ('\ufeffBOM text', 'BOM text'),
        ('Ã©tÃ©', 'été'),
        ('l’été', "l'été"),
        ('ÐŸÑ€Ð¸Ð²ÐµÑ‚', 'Привет'),
        ('\x85c1', '...c1'),
        ('Hangul 가', 'Hangul 가'),
    ]),
    ({'normalization': 'NFD'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试,没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('âœ” No problems', '✔ No problems'),
        ('The Mona Lisa doesnÃ¢â‚¬â„¢t have eyebrows.', "The Mona Lisa doesn't have eyebrows."),
        ('ＬＯＵＤ\u3000ＮＯＩＳＥＳ', 'LOUD NOISES'),
        ('Broken text&hellip; it&#x2019;s ﬂubberiﬁc!', "Broken text… it's flubberific!"),
        ('é decomposed', 'é decomposed'),
        ('\x1b[36mcolor\x1b[0m', 'color'),
        ('a\r\nb\rc\u2028d', 'a\nb\nc\nd'),
        ('“quotes” ‘single’', '"quotes" \'single\''),
        ('<b>&amp;</b> then &amp;\nline2 &amp;', '<b>&amp;</b> then &amp;\nline2 &amp;'),
        ('&amp; alone', '& alone'),
        ('ﬁ ligature ½ ² ㎏', 'fi ligature ½ ² ㎏'),
        ('control\x00\x07\x7f chars', 'control chars'),
        ('café naïve', 'café naïve'),
        ('\ufeffBOM text', 'BOM text'),
        ('Ã©tÃ©', 'été'),
        ('l’été', "l'été"),
        ('ÐŸÑ€Ð¸Ð²ÐµÑ‚', 'Привет'),
        ('\x85c1', '…c1'),
        ('Hangul 가', 'Hangul 가'),
    ]),
    ({'normalization': 'NFKD'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试,没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('âœ” No problems', '✔ No problems'),
        ('The Mona Lisa doesnÃ¢â‚¬â„¢t have eyebrows.', "The Mona Lisa doesn't have eyebrows."),
        ('ＬＯＵＤ\u3000ＮＯＩＳＥＳ', 'LOUD NOISES'),
        ('Broken text&hellip; it&#x2019;s ﬂubberiﬁc!', "Broken text... it's flubberific!"),
        ('é decomposed', 'é decomposed'),
        ('\x1b[36mcolor\x1b[0m', 'color'),
        ('a\r\nb\rc\u2028d', 'a\nb\nc\nd'),
        ('“quotes” ‘single’', '"quotes" \'single\''),
        ('<b>&amp;</b> then &amp;\nline2 &amp;', '<b>&amp;</b> then &amp;\nline2 &amp;'),
        ('&amp; alone', '& alone'),
        ('ﬁ ligature ½ ² ㎏', 'fi ligature 1⁄2 2 kg'),
        ('control\x00\x07\x7f chars', 'control chars'),
        ('café naïve', 'café naïve'),
        ('\ufeffBOM text', 'BOM text'),
        ('Ã©tÃ©', 'été'),
        ('l’été', "l'été"),
        ('ÐŸÑ€Ð¸Ð²ÐµÑ‚', 'Привет'),
        ('\x85c1', '...c1'),
        ('Hangul 가', 'Hangul 가'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_long_text_with_mojibake_lines():
    long = "clean line\n" * 5000
    assert _run([long + "Ã©tÃ©"]) == [long + "été"]


def test_normalization_is_checked_and_case_insensitive():
    with pytest.raises(ValueError, match="NFC, NFKC, NFD, NFKD"):
        OPERATORS.get("fix_unicode_mapper")(normalization="NFX")
    assert OPERATORS.get("fix_unicode_mapper")(normalization="").normalization == "NFC"
    assert OPERATORS.get("fix_unicode_mapper")(normalization="nfkd").normalization == "NFKD"


def test_declares_ftfy():
    assert OPERATORS.get("fix_unicode_mapper").requires == ("ftfy",)


def test_line_by_line_fast_path_equals_plain_ftfy():
    import random

    import ftfy

    from data_juicer.ops.mapper.fix_unicode_mapper import fix_text_by_line

    config = ftfy.TextFixerConfig(explain=False, normalization="NFC")
    pieces = ["&amp;", "&gt;", "<b>", "<", "\r\n", "\n", "é", "Ã©", "\x1b[31m", "ﬁ", "“q”", "ａ", "\x00", "\x85",
              "\u2028", " plain ascii ", "&lt;p&gt;", "\t", "xxxxx"]
    rng = random.Random(3)
    for _ in range(3000):
        s = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert fix_text_by_line(s, config, ftfy.fix_text) == ftfy.fix_text(s, config), repr(s)


def test_line_shortcuts_equal_ftfy_on_random_mixed_text():
    """fix_text_by_line skips ftfy steps that cannot change a line; the result must still be ftfy's."""
    import random

    import ftfy

    from data_juicer.ops.mapper.fix_unicode_mapper import fix_text_by_line

    pieces = list("ab &<>;\r\n\t\x1b\x0b\x85\u2028é–—“”‘’ÃÂ©®€ﬁＡ\u3000，。中文字ひらがなｶﾀｶﾅ한국어\u1100\u1161\u11a8"
                  "\u0301\u0308e\u00a0\ufffd😀\u200b\u2060\ufeffпривет\u0394αβ╔═\ud800") + [
        "&amp;", "&lt;", "&eacute;", "Ã©", "â€™", "Ã\u00a0", "\x1b[31m", "\r\n", "Ã¼ber", "ï¬\x81"]
    rng = random.Random(7)
    for form in ("NFC", "NFKC", "NFD"):
        config = ftfy.TextFixerConfig(explain=False, normalization=form)
        for _ in range(500):
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
            assert fix_text_by_line(text, config, ftfy.fix_text) == ftfy.fix_text(text, config), repr(text)


def test_guarded_is_bad_equals_ftfy_is_bad():
    """The split, guarded form of ftfy's mojibake test gives ftfy's own answer."""
    import random

    from ftfy import badness

    from data_juicer.ops.mapper import fix_unicode_mapper as m

    assert m._badness_checks() is not None  # the installed ftfy's BADNESS_RE is understood
    known = {"doesnÃ¢â‚¬â„¢t": True, "Ã©tÃ©": True, "ÐŸÑ€Ð¸Ð²ÐµÑ‚": True, "вЂ™": True, "café naïve": False,
             "Übermäßig größer": False, "привет мир": False, "l’été": False, "×²": True, "╔═╗": False}
    assert {t: m.is_bad(t) for t in known} == known
    pieces = list("aZ .,?!\n\t\u00a0\u00adÂÃÎÐØÙàâéÉäÄöüßœŒ°×²³µ¢£€™®©«»“”‘’‚„•–—…√≈ВГРСвЂўΒΓΞΟ€│╔═█▀¤¦¨ª") + [
        "Ã©", "â€™", "Ã\u00a0", "ГўВЂВ™s", "‚Ä¢", "√©"]
    rng = random.Random(11)
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert m.is_bad(text) == badness.is_bad(text), repr(text)
