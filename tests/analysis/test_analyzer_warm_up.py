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


def test_warm_up_loads_the_repetition_kernel_in_this_process(monkeypatch):
    from data_juicer.ops.common import minhash_numba, repetition_c

    monkeypatch.setattr(repetition_c, "_LIB", None)  # as in a fresh process: nothing loaded yet
    monkeypatch.setattr(minhash_numba, "_PROBED", {})
    A.warm_up([CharacterRepetitionFilter(rep_len=10)])
    if repetition_c._LIB is not False:  # a C compiler here: the warm-up loaded the C library
        assert repetition_c._LIB is not None
    else:  # no C library: numba's kernel was compiled or loaded from its cache
        pytest.importorskip("numba")
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
