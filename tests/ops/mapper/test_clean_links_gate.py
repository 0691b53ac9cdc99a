"""The narrower link gate (scheme ':' / '.tld/' / 'www') still sends every word holding a link
through the full pattern: the gated substitution equals the plain one, also on Unicode
case-folding traps (ſ, K) and near-misses of each gate branch."""

import random
import re

from data_juicer.ops.common.regex_patterns import TokenGatedSub, compile_pattern
from data_juicer.ops.mapper import clean_links_mapper

PIECES = ["http://a.b/c", "x.ſt/", "a.Kom/", "ab:ſ", "a-:b", "_:x", "x.c/", "x.abcde/", "a.b.c/", "ſ:/", "K:%",
          "a.co.uk/", ".de/", "w.ww.", "wwW1.a", "WwW", "Note: x", "12:30", "1.5", "end.", ". /", "a. b/", "a:",
          ":b", "x", "é", "\xa0", "\u3000", " ", "\n", "(", ")", "/", ".", ":", "w", "中文.中文/", "a.\u0131n/"]


def test_gate_skips_sentence_periods_and_plain_colons():
    gate = re.compile(clean_links_mapper._LINK_GATE)
    assert gate.search("The end. Note: nothing 12 / 3 here.") is None
    assert [m.start() for m in gate.finditer("see http://a.b/c, a.com/x and www.q.org")] == [8, 19, 32]


def test_narrow_gate_equals_plain_sub():
    regex = compile_pattern(clean_links_mapper.DEFAULT_LINK_PATTERN, "t")
    gated = TokenGatedSub(regex, clean_links_mapper._LINK_GATE)
    rng = random.Random(17)
    for _ in range(4000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 10)))
        assert gated("", text) == regex.sub("", text), repr(text)
        assert gated("<L>", text) == regex.sub("<L>", text), repr(text)


def test_ip_two_gates_equal_plain_sub():
    from data_juicer.ops.mapper import clean_ip_mapper

    regex = compile_pattern(clean_ip_mapper._FAST_IP_PATTERN, "t")
    gated = TokenGatedSub(regex, clean_ip_mapper._IP_GATE)
    assert len(gated.gates) == 2
    pieces = ["192.168.0.1", "10.0.0.256", "1.2.3", "fe80:0:0:0:0:0:0:1", "a:b", "1:2:3:4:5:6:7:8", "x", ".", ":",
              " ", "\n", "v1.2", "12:30", "\u0661.\u0662", "ab:cd", "1.", ".1", "é"]
    rng = random.Random(23)
    for _ in range(4000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        assert gated("", text) == regex.sub("", text), repr(text)
        assert gated("<IP>", text) == regex.sub("<IP>", text), repr(text)
    assert gated("", "at 10.0.0.1: fe80:0:0:0:0:0:0:1 x") == "at :  x"
