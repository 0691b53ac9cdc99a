from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

TEXTS = [
    "", "   ", "\n\n\t\n", "a bb ccc dddd eeeee", "Hello,   world!\tTabs\there\n\nnew  line ",
    "supercalifragilisticexpialidocious (supercalifragilistic) ...hello...",
    "中文没有空格的一长句子中文没有空格 short 😀😀😀😀😀😀😀😀😀😀😀 ok",
    "“quotation”—dash 12345678901234567890 x", "ab\u3000cd\xa0ef gh\r\nij",
]


def _run(texts, **params):
    op = OPERATORS.get("remove_long_words_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_removes_words_out_of_range_and_normalizes_spacing():
    assert _run(["a  bb ccc\t\tdddd\n\neeeee"], min_len=2, max_len=4) == ["bb ccc\tdddd"]
    # too long, but in range once the punctuation at its ends is stripped
    assert _run(["((abc)) abcdefg"], max_len=5) == ["((abc))"]


def test_very_long_word():
    assert _run(["keep " + "x" * 100_000 + " this"], max_len=50) == ["keep this"]


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        '',
        '',
        '',
        'a bb ccc dddd eeeee',
        'Hello, world!\tTabs\there\nnew line',
        'supercalifragilisticexpialidocious (supercalifragilistic) ...hello...',
        '中文没有空格的一长句子中文没有空格 short 😀😀😀😀😀😀😀😀😀😀😀 ok',
        '“quotation”—dash 12345678901234567890 x',
        'ab\u3000cd\xa0ef gh\r\nij',
    ]
    assert _run(TEXTS, min_len=3, max_len=10) == [
        '',
        '',
        '',
        'ccc dddd eeeee',
        'Hello, world!\tTabs\there\nnew line',
        '...hello...',
        'short',
        '',
        'ab\u3000cd\xa0ef gh\r',
    ]
    assert _run(TEXTS, min_len=2, max_len=5) == [
        '',
        '',
        '',
        'bb ccc dddd eeeee',
        'Hello, world!\tTabs\there\nnew line',
        '...hello...',
        'short ok',
        '',
        'gh\r\nij',
    ]
