from data_juicer.core.runner import FusedRun, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.batch import rows_to_batch
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401


def make(**kw):
    return OPERATORS.get("audio_duration_filter")(**kw)


def test_durations_and_strategy(media_files):
    m = media_files
    rows = [{"id": 0, "audios": [m["tone16k"], m["tone8k_flac"]]}, {"id": 1, "audios": [m["tone44k_stereo"]]},
            {"id": 2, "audios": []}, {"id": 3, "audios": [m["zero_length"], m["tone_mp3"]]}]
    out = run_ops_on_rows([make(min_duration=1, max_duration=1)], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [0, 2, 3]
    assert out[0][Fields.stats]["audio_duration"] == [1.0, 2.0]
    assert out[2][Fields.stats]["audio_duration"] == [0.0, 1.0]
    out = run_ops_on_rows([make(min_duration=0, max_duration=1, any_or_all="all")], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [1, 2, 3]
    assert out[0][Fields.stats]["audio_duration"] == [0.5]


def test_speech_duration(media_files):
    out = run_ops_on_rows([make(min_duration=1)], [{"audios": [media_files["speech"]]}])
    d = out[0][Fields.stats]["audio_duration"][0]
    assert 1.5 < d < 5 and abs(d * 22050 - round(d * 22050)) < 1e-6


def test_bad_audio_goes_to_errors(media_files):
    m = media_files
    rows = [{"id": 0, "audios": [m["tone16k"]]}, {"id": 1, "audios": [m["missing_audio"]]},
            {"id": 2, "audios": [m["corrupt_audio"]]}]
    kept, failed = FusedRun([make()], mark_errors=False).apply(rows_to_batch(rows))
    assert kept["id"] == [0] and failed["id"] == [1, 2]
    assert "missing.wav" in failed["__dj__error_tmp__"][0] and "corrupt.wav" in failed["__dj__error_tmp__"][1]


def test_shares_decoding_with_snr_filter(media_files, monkeypatch):
    import data_juicer.media.audio as ma

    calls = []
    real = ma.load_audio
    monkeypatch.setattr(ma, "load_audio", lambda p, sr=None, who="": calls.append(p) or real(p, sr, who))
    ops = [make(), OPERATORS.get("audio_nmf_snr_filter")(nmf_iter_num=5, min_snr=-1000)]
    run_ops_on_rows(ops, [{"audios": [media_files["tone16k"], media_files["noisy"]]}])
    assert len(calls) == 2
