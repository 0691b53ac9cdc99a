"""The analyzer's warm-up: the text filters score two synthetic texts in the driver before the pass forks."""

import pytest

from data_juicer.core import analyzer as A
from data_juicer.ops.filter.character_repetition_filter import CharacterRepetitionFilter
from data_juicer.ops.filter.text_length_filter import TextLengthFilter
from data_juicer.utils.constant import Fields


def test_warm_up_scores_text_filters_on_long_texts(monkeypatch):
    seen = []
    f = TextLengthFilter()
    real = f.score_batch

    def spy(batch):
        seen.append({k: list(v) for k, v in batch.items()})
        return real(batch)

    monkeypatch.setattr(f, "score_batch", spy)
    A.warm_up([f])
    assert len(seen) == 1
    texts = seen[0][f.text_key]
    # two texts past 64 characters, so batch paths (e.g. compiled kernels for long texts) run here
    assert len(texts) == 2 and min(len(t) for t in texts) > 64
    assert seen[0][Fields.stats] == [{"text_len": len(texts[0])}, {"text_len": len(texts[1])}]


def test_warm_up_loads_the_repetition_kernel_in_this_process():
    pytest.importorskip("numba")
    from data_juicer.ops.common import minhash_numba

    A.warm_up([CharacterRepetitionFilter(rep_len=10)])
    assert minhash_numba._PROBED.get("repetition ratio") is True


def test_warm_up_skips_other_modalities_and_ignores_failures(monkeypatch):
    calls = []

    class Broken(TextLengthFilter):
        def compute_stats_batched(self, samples):
            calls.append("broken")
            raise RuntimeError("boom")

    class ImageLike(TextLengthFilter):
        modality = "image"

        def compute_stats_batched(self, samples):
            calls.append("image")
            return samples

    A.warm_up([Broken(), ImageLike()])  # no exception: the pass reports failures on the real data
    assert calls == ["broken"]
