import os

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS
from data_juicer.utils.constant import Fields
from tests.media.files import media_files  # noqa: F401


def make(**kw):
    return OPERATORS.get("image_size_filter")(**kw)


def test_file_sizes(media_files):
    m = media_files
    big, small = os.path.getsize(m["rgb"]), os.path.getsize(m["one_px"])
    assert big > 1024 > small
    rows = [{"id": 0, "images": [m["rgb"], m["one_px"]]}, {"id": 1, "images": [m["one_px"]]}, {"id": 2, "images": []}]
    out = run_ops_on_rows([make(min_size="1KB")], [dict(r) for r in rows])
    assert [r["id"] for r in out] == [0, 2]
    assert out[0][Fields.stats]["image_sizes"] == [big, small]
    assert [r["id"] for r in run_ops_on_rows([make(min_size="1KiB", any_or_all="all")], [dict(r) for r in rows])] == [2]


def test_bytes_are_measured_without_the_files():
    rows = [{"images": ["/nowhere/a.jpg", "/nowhere/b.jpg"], "image_bytes": [b"x" * 10, b"y" * 2000]}]
    out = run_ops_on_rows([make(max_size="1.5KB")], rows)
    assert out[0][Fields.stats]["image_sizes"] == [10, 2000]


def test_missing_file_and_bad_size(media_files):
    from data_juicer.core.runner import OpError

    with pytest.raises(OpError, match="image '.*missing.jpg' does not exist"):
        run_ops_on_rows([make(skip_op_error=False)], [{"images": [media_files["missing_image"]]}])
    with pytest.raises(ValueError, match="unit"):
        make(max_size="3 furlongs")
