import os

import pytest

from data_juicer.core.runner import OpError, run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401


def make(**kw):
    return OPERATORS.get("audio_size_filter")(**kw)


def test_sizes(media_files):
    m = media_files
    assert os.path.getsize(m["tone16k"]) == 32044  # 44-byte header + 16000 16-bit samples
    rows = [{"id": 0, "audios": [m["tone16k"], m["zero_length"]]}, {"id": 1, "audios": [m["zero_length"]]},
            {"id": 2, "audios": []}]
    out = run_ops_on_rows([make(min_size="10KB")], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [0, 2]
    assert out[0][Fields.stats]["audio_sizes"] == [32044, 44]
    assert [r["id"] for r in run_ops_on_rows([make(max_size="31.3KiB")], [dict(r) for r in rows])] == [0, 1, 2]
    assert [r["id"] for r in run_ops_on_rows([make(min_size="1KB", any_or_all="all")], [dict(r) for r in rows])] == [2]


def test_missing(media_files):
    with pytest.raises(OpError, match="audio '.*missing.wav' does not exist"):
        run_ops_on_rows([make(skip_op_error=False)], [{"audios": [media_files["missing_audio"]]}])
