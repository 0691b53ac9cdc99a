import pytest
from text_filter_data import TEXTS

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.ops.common.strip_characters import SPECIAL_CHARACTERS
from data_juicer.utils.constant import Fields

KEY = "special_char_ratio"


def make(**kw):
    return OPERATORS.get("special_characters_filter")(**kw)


def stats_and_keep(op, texts=TEXTS):
    samples = {"text": list(texts), Fields.stats: [{} for _ in texts]}
    op.compute_stats_batched(samples)
    return [s[KEY] for s in samples[Fields.stats]], [bool(k) for k in op.process_batched(samples)]


# values from Data-Juicer 1.6.1
RATIOS = [0.0, 0.0, 0.24324324324324326, 0.4909090909090909, 0.3225806451612903, 0.6944444444444444,
          0.0006542361792607131, 0.2608695652173913, 0.0, 0.22727272727272727, 1.0, 1.0, 0.17142857142857143, 1.0,
          0.8333333333333334, 0.4032258064516129, 0.125, 0.16, 1.0, 0.18382352941176472, 0.2676056338028169,
          0.4931506849315068, 0.22807017543859648, 0.6181818181818182]
KEEP_DEFAULT = [1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0]
KEEP_01_05 = [0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0]


@pytest.mark.parametrize("kw,keep", [({}, KEEP_DEFAULT), ({"min_ratio": 0.1, "max_ratio": 0.5}, KEEP_01_05)])
def test_matches_data_juicer(kw, keep):
    stats, kept = stats_and_keep(make(**kw))
    assert stats == RATIOS
    assert kept == [bool(k) for k in keep]
    out = run_ops_on_rows([make(**kw)], [{"text": t} for t in TEXTS])
    assert [r["text"] for r in out] == [t for t, k in zip(TEXTS, keep) if k]


def test_special_set_has_data_juicers_members():
    # 1618 single characters in Data-Juicer 1.6.1 (with emoji 2.2.0)
    assert len(SPECIAL_CHARACTERS) == 1618
    assert {"!", "7", "\n", "\u3000", "一", "上", "😀", "🐍", "©", "™", "½", "\ufeff"} <= SPECIAL_CHARACTERS
    assert "\U0001F3FB" in SPECIAL_CHARACTERS  # skin-tone modifier: a single-code-point emoji
    assert not {"a", "中", "é", "\x00", "\u2028", "\ufe0f", "\u200d"} & SPECIAL_CHARACTERS


def test_ascii_and_unicode_paths_agree():
    # ASCII texts take a str.translate path, others a set lookup: same counts
    texts = ["a!b?c 1", "a!b?c 1é", "😀a!", "\x00\x1f\x7f"]
    stats, _ = stats_and_keep(make(), texts)
    assert stats == [4 / 7, 4 / 8, 2 / 3, 0.0]
