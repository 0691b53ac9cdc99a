from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

TEXTS = [
    "", "中文English混合123，标点！😀 ＃＄", "Data-Juicer：一个（数据）处理系统《手册》/ 版本 1.6 & more…",
    "ça va? 日本語のテキスト 한국어 Ελληνικά", "\t\n tabs\nand newlines 你好 ",
]


def _run(texts, **params):
    op = OPERATORS.get("remove_non_chinese_character_mapper")(**params)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in texts])]


def test_keeps_only_chinese_when_asked():
    assert _run(["你好, world 123!😀"], keep_alphabet=False, keep_number=False, keep_punc=False) == ["你好"]
    assert _run(["你好, world 123!😀"]) == ["你好, world 123!"]


def test_matches_data_juicer():
    # values from Data-Juicer 1.6.1
    assert _run(TEXTS) == [
        '',
        '中文English混合123，标点！ ',
        'Data-Juicer：一个（数据）处理系统《手册》/ 版本 1.6 & more',
        'a va 日本語  ',
        ' tabsand newlines 你好 ',
    ]
    assert _run(TEXTS, keep_alphabet=False) == [
        '',
        '中文混合123，标点！ ',
        '-：一个（数据）处理系统《手册》/ 版本 1.6 & ',
        '  日本語  ',
        '   你好 ',
    ]
    assert _run(TEXTS, keep_number=False) == [
        '',
        '中文English混合，标点！ ',
        'Data-Juicer：一个（数据）处理系统《手册》/ 版本 . & more',
        'a va 日本語  ',
        ' tabsand newlines 你好 ',
    ]
    assert _run(TEXTS, keep_punc=False) == [
        '',
        '中文English混合123标点',
        'DataJuicer一个数据处理系统手册版本16more',
        'ava日本語',
        'tabsandnewlines你好',
    ]
    assert _run(TEXTS, keep_alphabet=False, keep_number=False, keep_punc=False) == [
        '',
        '中文混合标点',
        '一个数据处理系统手册版本',
        '日本語',
        '你好',
    ]
