"""TokenGatedSub must give exactly the plain regex substitution for the built-in patterns."""

import random

import pytest

from data_juicer.ops.common.regex_patterns import TokenGatedSub, compile_pattern
from data_juicer.ops.mapper import clean_ip_mapper, clean_links_mapper

PIECES = ["http://a.b/c", "https://x.org/p(q)r", "(see www.ex.com)", "WWW3.foo.bar", "ftp:x", "mailto:me",
          "a.de/", "x.y.com/z?q=1&r=2.", "192.168.0.1", "1234.5.6.78", "256.1.1.1", "fe80:0:0:0:0:0:0:1",
          "2001:db8:85a3:0:0:8a2e:370:7334:ff", "v1.2.3", "re:", "note: a", "12:30", "/usr/bin", ":", "/",
          "www", "w", ".", "é", "中文", "\u3000", "\xa0", "\u2028", " ", "\n", "\t", "\r\n", "(", ")", "«", "»",
          "\u0660.\u0661", "ab", "Ⅻ", "K", "ſ", "x.co/", "https://", "://", "a:1", "(http://a.b/(c)d)"]


@pytest.mark.parametrize("pattern, gate", [
    (clean_links_mapper.DEFAULT_LINK_PATTERN, clean_links_mapper._LINK_GATE),
    (clean_ip_mapper._FAST_IP_PATTERN, clean_ip_mapper._IP_GATE),
], ids=["links", "ip"])
def test_equal_to_plain_sub(pattern, gate):
    regex = compile_pattern(pattern, "t")
    gated = TokenGatedSub(regex, gate)
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        for repl in ("", "<X>"):
            assert gated(repl, text) == regex.sub(repl, text), repr(text)


def test_leaves_text_without_gate_untouched():
    regex = compile_pattern(clean_ip_mapper._FAST_IP_PATTERN, "t")
    text = "no addresses here at all"
    assert TokenGatedSub(regex, clean_ip_mapper._IP_GATE)("", text) is text
