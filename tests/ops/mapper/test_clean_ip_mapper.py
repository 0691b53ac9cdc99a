"""Tests of clean_ip_mapper."""

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS


def _run(texts, **params):
    op = OPERATORS.get("clean_ip_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


# values from Data-Juicer 1.6.1 (these inputs run through its op)
DJ_CASES = [
    ({}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('server 192.168.0.1 up', 'server  up'),
        ('256.1.1.1 and 255.255.255.255', '2 and '),
        ('10.0.0.255:8080', ':8080'),
        ('1.2.3.456', '6'),
        ('2001:0db8:85a3:0000:0000:8a2e:0370:7334', ''),
        ('::1 and fe80::1 short', '::1 and fe80::1 short'),
        ('1.2.3.4.5', '.5'),
        ('IP是127.0.0.1。', 'IP是。'),
        ('FFFF:ffff:1:2:3:4:5:6:7:8', ':7:8'),
        ('۱.۲.۳.۴ and １.２.３.４ and ٣:٣:٣:٣:٣:٣:٣:٣', '۱.۲.۳.۴ and １.２.３.４ and '),
        ('001.002.003.004', '001.002.003.004'),
        ('v1.2.3 version', 'v1.2.3 version'),
    ]),
    ({'repl': '[IP:\\1]'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('server 192.168.0.1 up', 'server [IP:] up'),
        ('256.1.1.1 and 255.255.255.255', '2[IP:] and [IP:]'),
        ('10.0.0.255:8080', '[IP:]:8080'),
        ('1.2.3.456', '[IP:]6'),
        ('2001:0db8:85a3:0000:0000:8a2e:0370:7334', '[IP:0370:]'),
        ('::1 and fe80::1 short', '::1 and fe80::1 short'),
        ('1.2.3.4.5', '[IP:].5'),
        ('IP是127.0.0.1。', 'IP是[IP:]。'),
        ('FFFF:ffff:1:2:3:4:5:6:7:8', '[IP:5:]:7:8'),
        ('۱.۲.۳.۴ and １.２.３.４ and ٣:٣:٣:٣:٣:٣:٣:٣', '۱.۲.۳.۴ and １.２.３.４ and [IP:٣:]'),
        ('001.002.003.004', '001.002.003.004'),
        ('v1.2.3 version', 'v1.2.3 version'),
    ]),
    ({'pattern': 'r"\\d+"', 'repl': '#'}, [
        ('', ''),
        ('plain ascii text.', 'plain ascii text.'),
        ('中文测试，没有特殊内容。', '中文测试，没有特殊内容。'),
        ('emoji 😀👍🏽 text', 'emoji 😀👍🏽 text'),
        ('server 192.168.0.1 up', 'server #.#.#.# up'),
        ('256.1.1.1 and 255.255.255.255', '#.#.#.# and #.#.#.#'),
        ('10.0.0.255:8080', '#.#.#.#:#'),
        ('1.2.3.456', '#.#.#.#'),
        ('2001:0db8:85a3:0000:0000:8a2e:0370:7334', '#:#db#:#a#:#:#:#a#e:#:#'),
        ('::1 and fe80::1 short', '::# and fe#::# short'),
        ('1.2.3.4.5', '#.#.#.#.#'),
        ('IP是127.0.0.1。', 'IP是#.#.#.#。'),
        ('FFFF:ffff:1:2:3:4:5:6:7:8', 'FFFF:ffff:#:#:#:#:#:#:#:#'),
        ('۱.۲.۳.۴ and １.２.３.４ and ٣:٣:٣:٣:٣:٣:٣:٣', '#.#.#.# and #.#.#.# and #:#:#:#:#:#:#:#'),
        ('001.002.003.004', '#.#.#.#'),
        ('v1.2.3 version', 'v#.#.# version'),
    ]),
]


@pytest.mark.parametrize("params,pairs", DJ_CASES)
def test_matches_data_juicer(params, pairs):
    assert _run([t for t, _ in pairs], **params) == [e for _, e in pairs]


def test_ipv4_and_full_ipv6_only():
    texts = ["a 8.8.8.8 b", "fe80:0:0:0:0:0:0:1 x", "::1 stays", "版本 1.2 stays", ""]
    assert _run(texts) == ["a  b", " x", "::1 stays", "版本 1.2 stays", ""]


def test_very_long_line():
    long = "abc def 12.5 " * 10000
    assert _run([long + "10.0.0.1"], repl="IP") == [long + "IP"]


def test_bad_pattern_is_a_clear_error():
    with pytest.raises(ValueError, match="clean_ip_mapper"):
        OPERATORS.get("clean_ip_mapper")(pattern="(")
