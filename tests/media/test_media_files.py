import os

import pytest

from data_juicer.media.files import atomic_write, file_size, media_output_dir, size_to_bytes, transform_file_name


def _src(tmp_path, name="a.jpg", data=b"abc"):
    p = tmp_path / "data" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return str(p)


def test_name_is_stable_and_content_derived(tmp_path, monkeypatch):
    monkeypatch.delenv("DJ_PRODUCED_DATA_DIR", raising=False)
    src = _src(tmp_path)
    a = transform_file_name(src, "image_blur_mapper", {"radius": 2})
    assert a == transform_file_name(src, "image_blur_mapper", {"radius": 2})
    assert os.path.dirname(a) == str(tmp_path / "data" / "__dj__produced_data__" / "image_blur_mapper")
    base = os.path.basename(a)
    assert base.startswith("a__dj_hash_#") and base.endswith("#.jpg") and len(base) == len("a__dj_hash_##.jpg") + 32
    assert transform_file_name(src, "image_blur_mapper", {"radius": 3}) != a
    other = _src(tmp_path, "b/a.jpg", b"abd")  # same name, other content
    assert os.path.basename(transform_file_name(other, "image_blur_mapper", {"radius": 2})) != base


def test_produced_file_is_rehashed_not_stacked(tmp_path, monkeypatch):
    monkeypatch.delenv("DJ_PRODUCED_DATA_DIR", raising=False)
    first = transform_file_name(_src(tmp_path), "op_a", {})
    with open(first, "wb") as f:
        f.write(b"new")
    second = transform_file_name(first, "op_b", {}, ext=".png")
    assert os.path.dirname(second) == str(tmp_path / "data" / "__dj__produced_data__" / "op_b")
    assert os.path.basename(second).count("__dj_hash_#") == 1 and second.endswith(".png")


def test_folder_priority(tmp_path, monkeypatch):
    src = _src(tmp_path)
    monkeypatch.setenv("DJ_PRODUCED_DATA_DIR", str(tmp_path / "env"))
    assert media_output_dir("op", src) == str(tmp_path / "env" / "op")
    assert media_output_dir("op", src, str(tmp_path / "save")) == str(tmp_path / "save")

    class Op:
        name = "x_mapper"
        save_dir = str(tmp_path / "s2")
    assert os.path.dirname(transform_file_name(src, "x_mapper", {}, out_dir=Op.save_dir)) == Op.save_dir
    assert media_output_dir(Op()) == Op.save_dir


def test_remote_path_unchanged():
    assert transform_file_name("http://x/y.jpg", "op", {}) == "http://x/y.jpg"


def test_atomic_write(tmp_path):
    target = str(tmp_path / "out" / "f.wav")
    with atomic_write(target) as tmp:
        assert tmp.endswith(".wav") and os.path.dirname(tmp) == os.path.dirname(target)
        open(tmp, "wb").write(b"1")
        assert not os.path.exists(target)
    assert open(target, "rb").read() == b"1"
    with pytest.raises(RuntimeError):
        with atomic_write(target) as tmp:
            open(tmp, "wb").write(b"2")
            raise RuntimeError("boom")
    assert open(target, "rb").read() == b"1" and os.listdir(tmp_path / "out") == ["f.wav"]


@pytest.mark.parametrize("text,n", [("0", 0), ("1024", 1024), ("20KB", 20480), ("20kib", 20480), ("1 MB", 1 << 20),
                                    ("1.5MiB", 1572864), ("1TB", 1 << 40), (300, 300)])
def test_size_to_bytes(text, n):
    assert size_to_bytes(text) == n


@pytest.mark.parametrize("text,msg", [("MB", "does not contain a number"), ("3 parsecs", "unknown size unit"),
                                      ("1-2KB", "cannot read size")])
def test_size_to_bytes_errors(text, msg):
    with pytest.raises(ValueError, match=msg):
        size_to_bytes(text)


def test_file_size_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="audio '.*nope.wav' does not exist"):
        file_size("audio", str(tmp_path / "nope.wav"))
