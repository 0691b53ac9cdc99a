import sys

import pytest

from data_juicer.core.runner import FusedRun, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.batch import rows_to_batch
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def make(**kw):
    return OPERATORS.get("audio_nmf_snr_filter")(**kw)


def test_tone_is_cleaner_than_speech_and_silence_is_infinite(media_files):
    m = media_files
    rows = [{"id": 0, "audios": [m["noisy"]]}, {"id": 1, "audios": [m["silent"]]}, {"id": 2, "audios": []}]
    out = run_ops_on_rows([make(nmf_iter_num=50, max_snr=float(sys.float_info.max))], [dict(r) for r in rows])
    snr = {r["id"]: r[Fields.stats]["audio_nmf_snr"] for r in out}
    # the same values Data-Juicer 1.6.1's compute_nmf_snr gives (checked against its source): 30.758590698242188 on
    # the install this test was written on, 30.758480072021484 on a later one (scikit-learn 1.9.1, numpy 2.4.6): the
    # float32 NMF moves by ~3.6e-6 relative between library builds
    assert snr[0][0] == pytest.approx(30.758590698242188, rel=1e-5)
    assert snr[1] == [sys.float_info.max] and snr[2] == []
    # the default max (sys.maxsize) drops the silent audio, as in Data-Juicer
    assert [r["id"] for r in run_ops_on_rows([make(nmf_iter_num=50)], [dict(r) for r in rows])] == [0, 2]


def test_threshold_and_seeded(media_files):
    rows = [{"audios": [media_files["noisy"], media_files["speech"]]}]
    a = run_ops_on_rows([make(nmf_iter_num=20, min_snr=10)], [dict(rows[0])])
    b = run_ops_on_rows([make(nmf_iter_num=20, min_snr=10)], [dict(rows[0])])
    assert a[0][Fields.stats] == b[0][Fields.stats]
    s = a[0][Fields.stats]["audio_nmf_snr"]
    assert s[0] > 10 > s[1]
    assert run_ops_on_rows([make(nmf_iter_num=20, min_snr=10, any_or_all="all")], [dict(rows[0])]) == []


def test_empty_audio_is_a_sample_error(media_files):
    kept, failed = FusedRun([make(nmf_iter_num=5)], mark_errors=False).apply(
        rows_to_batch([{"audios": [media_files["zero_length"]]}]))
    assert "has no samples" in failed["__dj__error_tmp__"][0]
