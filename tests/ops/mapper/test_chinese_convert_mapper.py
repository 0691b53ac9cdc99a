import pickle

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

pytest.importorskip("opencc")

SRC = ["简体中文转换为繁体中文", "鼠标和软件", "头发发展", "台湾的计程车", "香港的的士", "這是繁體字", "滑鼠軟體", "干燥",
       "皇后", "😀emoji", "日本の漢字", "藝術", "理发", "一发不可收拾", ""]

# values from Data-Juicer 1.6.1 with opencc 1.1.9 (all 14 modes x 347 texts compared: 0 differences)
EXPECTED = {
    "s2t": ["簡體中文轉換爲繁體中文", "鼠標和軟件", "頭髮發展", "臺灣的計程車", "香港的的士", "這是繁體字", "滑鼠軟體", "乾燥",
            "皇后", "😀emoji", "日本の漢字", "藝術", "理髮", "一發不可收拾", ""],
    "t2s": ["简体中文转换为繁体中文", "鼠标和软件", "头发发展", "台湾的计程车", "香港的的士", "这是繁体字", "滑鼠软体", "干燥",
            "皇后", "😀emoji", "日本の汉字", "艺术", "理发", "一发不可收拾", ""],
    "s2twp": ["簡體中文轉換為繁體中文", "滑鼠和軟體", "頭髮發展", "臺灣的計程車", "香港的計程車", "這是繁體字", "滑鼠軟體",
              "乾燥", "皇后", "😀emoji", "日本の漢字", "藝術", "理髮", "一發不可收拾", ""],
    "tw2sp": ["简体中文转换为繁体中文", "鼠标和软件", "头发发展", "台湾的计程车", "香港的的士", "这是繁体字", "鼠标软件", "干燥",
              "皇后", "😀emoji", "日本の汉字", "艺术", "理发", "一发不可收拾", ""],
    "s2hk": ["簡體中文轉換為繁體中文", "鼠標和軟件", "頭髮發展", "台灣的計程車", "香港的的士", "這是繁體字", "滑鼠軟體", "乾燥",
             "皇后", "😀emoji", "日本の漢字", "藝術", "理髮", "一發不可收拾", ""],
    "t2jp": ["简体中文转换为繁体中文", "鼠标和软件", "头发发展", "台湾的计程车", "香港的的士", "這是繁体字", "滑鼠軟体", "干燥",
             "皇后", "😀emoji", "日本の漢字", "芸術", "理发", "一发不可収拾", ""],
    "jp2t": ["简體中文转换为繁體中文", "鼠标和软件", "头发发展", "臺灣的计程车", "香港的的士", "這是繁體字", "滑鼠軟體", "干燥",
             "皇后", "😀emoji", "日本の漢字", "藝術", "理发", "一发不可收拾", ""],
}


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_matches_data_juicer(mode):
    op = OPERATORS.get("chinese_convert_mapper")(mode=mode)
    assert [r["text"] for r in run_ops_on_rows([op], [{"text": t} for t in SRC])] == EXPECTED[mode]


def test_long_text_and_pickling():
    op = OPERATORS.get("chinese_convert_mapper")()
    assert op.process_batched({"text": ["长" * 50000]})["text"] == ["長" * 50000]
    clone = pickle.loads(pickle.dumps(op))
    assert clone.process_batched({"text": ["汉字"]})["text"] == ["漢字"]


def test_bad_mode():
    with pytest.raises(ValueError, match="s2t"):
        OPERATORS.get("chinese_convert_mapper")(mode="x2y")
