import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

pytest.importorskip("nlpcda")

NAME = "nlpcda_zh_mapper"
ZH = ["这是一个测试句子，今天天气很好。", "我在2024年花了1234元买了三本书。", "", "中", "上海是一个美丽的城市，人口约2500万。"]

# values from Data-Juicer 1.6.1 (run one sample per batch: its op augments only the first text of a
# batch); (params, [(index of the source text, text), ...]) from a freshly created op
ZH_CASES = [({'aug_num': 2, 'replace_similar_word': True},
             [(0, '这是一个测试句子，今天天气很好。'), (0, '这是一个测试文句，今天天气很好。'), (0, '这是一个测试句，今天天气很好。'), (1, '我在2024年花了1234元买了三本书。'), (2, ''),
              (3, '中'), (4, '上海是一个美丽的城市，人口约2500万。'), (4, '上海是一个美丽的城市，人约2500万。'), (4, '上海是一个美丽的都，人口约2500万。')]),
            ({'replace_homophone_char': True},
             [(0, '这是一个测试句子，今天天气很好。'), (0, '这是一个测试句子，今鷆天气很好。'), (1, '我在2024年花了1234元买了三本书。'), (1, '我在2024年花了1234肙买了三本书。'),
              (2, ''), (3, '中'), (3, '眾'), (4, '上海是一个美丽的城市，人口约2500万。'), (4, '上海是一个美丽的城市，稔口约2500万。')]),
            ({'aug_num': 3, 'delete_random_char': True},
             [(0, '这是一个测试句子，今天天气很好。'), (0, '这是一个测试句子，今天天气很好'), (0, '这是一个测试句子今天天气很好'), (0, '这是一个测试句子，今天天气好'),
              (1, '我在2024年花了1234元买了三本书。'), (1, '我在2024年花了1234元买了三本书'), (1, '在2024年花了1234元了三本书'), (1, '我在2024年花了1234元买了本书'),
              (2, ''), (3, '中'), (4, '上海是一个美丽的城市，人口约2500万。'), (4, '上海是一个美丽的城市，人口约2500万'), (4, '上海是一个美丽的城市人口约2500万'),
              (4, '上海一个美丽的城市，人口约2500万')]),
            ({'swap_random_char': True},
             [(0, '这是一个测试句子，今天天气很好。'), (0, '这是一个测试句子，天今天气很好。'), (1, '我在2024年花了1234元买了三本书。'), (1, '我在2024年花了1234元了买三本书。'),
              (2, ''), (3, '中'), (4, '上海是一个美丽的城市，人口约2500万。'), (4, '上海是一个美丽的城市，人约口2500万。')]),
            ({'aug_num': 2, 'replace_equivalent_num': True},
             [(0, '这是一个测试句子，今天天气很好。'), (0, '这是壹个测试句子，今天天气很好。'), (0, '这是①个测试句子，今天天气很好。'), (1, '我在2024年花了1234元买了三本书。'),
              (1, '我在2024年花了1二34元买了三本书。'), (1, '我在2024年花了一234元买了三本书。'), (2, ''), (3, '中'), (4, '上海是一个美丽的城市，人口约2500万。'),
              (4, '上海是一个美丽的城市，人口约②500万。'), (4, '上海是一个美丽的城市，人口约250〇万。')]),
            ({'aug_num': 2, 'delete_random_char': True, 'replace_homophone_char': True, 'sequential': True},
             [(0, '这是一个测试句子，今天天气很好。'), (0, '这是一个测试句子，今鷆天气很好'), (0, '这是一个测舓句子，今天天憩很好'), (1, '我在2024年花了1234元买了三本书。'),
              (1, '我在2024年花了1234元买仂三本书'), (1, '我在2024年花了1234元买忇三本书'), (2, ''), (3, '中'), (3, '眾'), (3, '塜'),
              (4, '上海是一个美丽的城市，人口约2500万。'), (4, '上海匙一个美丽的城市，人口彠2500万'), (4, '上海是一个美丽的城市，人口约2500碗')]),
            ({'keep_original_sample': False, 'replace_similar_word': True, 'swap_random_char': True},
             [(0, '这是一个测试文句，今天天气很好。'), (0, '这是个一测试句子，今天天气好很。'), (1, '我在2024年花了1234买元了三本书。'), (4, '上海是一个中看的城市，人口约2500万。'),
              (4, '上海是一个丽美的城市，人口约2500万。')]),
            ({'keep_original_sample': False}, []),
            ({'aug_num': 1,
              'replace_equivalent_num': True,
              'replace_homophone_char': True,
              'replace_similar_word': True,
              'sequential': True},
             [(0, '这是一个测试句子，今天天气很好。'), (0, '这是螘个测试文句，縉天天气很好。'), (1, '我在2024年花了1234元买了三本书。'), (1, '涴在2024年花了12三4元买了三本书。'),
              (2, ''), (3, '中'), (3, '螤'), (4, '上海是一个美丽的城市，人口约2500万。'), (4, '上亥是一个泛美的城冟，人口约二500万。')])]


def _run(op, texts=ZH):
    return [(r["id"], r["text"]) for r in run_ops_on_rows([op], [{"text": t, "id": i} for i, t in enumerate(texts)])]


@pytest.mark.slow  # loading jieba and nlpcda's dictionaries takes seconds
def test_matches_data_juicer():
    for params, expected in ZH_CASES:
        assert _run(OPERATORS.get(NAME)(**params)) == expected, params


def test_no_method_and_global_random_untouched():
    import random

    random.seed(3)
    before = random.random()
    random.seed(3)
    op = OPERATORS.get(NAME)(delete_random_char=True, aug_num=2)
    assert random.random() == before  # nlpcda reseeds Python's generator; the op undoes that
    out = _run(op, ["今天天气很好。", ""])
    assert out[0] == (0, "今天天气很好。") and len(out) == 4 and out[-1] == (1, "")
    assert _run(OPERATORS.get(NAME)()) == [(i, t) for i, t in enumerate(ZH)]
    assert _run(OPERATORS.get(NAME)(keep_original_sample=False)) == []
