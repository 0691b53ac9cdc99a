import io
import tarfile
import zipfile

import pytest

from data_juicer.core.runner import run_ops_on_rows
from data_juicer.ops import OPERATORS

FILES = [("main.tex", "\\documentclass{article}\n\\input{sec}\n中文 😀"), ("sec/sec1.tex", "Section one"),
         ("fig.png", "PNG"), ("notes.TEX", "upper"), ("bad.tex", b"ok\xff\xfe bytes"), ("big.tex", "x" * 300),
         ("z.tex", "")]
MAIN = "\\documentclass{article}\n\\input{sec}\n中文 😀"


def _bytes(c):
    return c if isinstance(c, bytes) else c.encode()


def _tar(path, mode):
    with tarfile.open(path, mode) as tf:
        d = tarfile.TarInfo("dir.tex")
        d.type = tarfile.DIRTYPE
        tf.addfile(d)
        for name, content in FILES:
            ti = tarfile.TarInfo(name)
            b = _bytes(content)
            ti.size = len(b)
            tf.addfile(ti, io.BytesIO(b))
        link = tarfile.TarInfo("link.tex")
        link.type = tarfile.SYMTYPE
        link.linkname = "main.tex"
        tf.addfile(link)
    return str(path)


@pytest.fixture
def archives(tmp_path):
    out = {
        "tar": _tar(tmp_path / "p.tar", "w"),
        "tgz": _tar(tmp_path / "p.tgz", "w:gz"),
        "TARGZ": _tar(tmp_path / "P.TAR.GZ", "w:gz"),
        "bz2_named_tar": _tar(tmp_path / "bz.tar", "w:bz2"),
    }
    with zipfile.ZipFile(tmp_path / "p.zip", "w") as zf:
        zf.writestr("dir/", "")
        for name, content in FILES:
            zf.writestr(name, _bytes(content))
        zf.writestr("main.tex", "dup second")  # a duplicated name: both entries read the last one
    out["zip"] = str(tmp_path / "p.zip")
    with zipfile.ZipFile(tmp_path / "q.ZIP", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.tex", "A")
        zf.writestr("b.tex", "B")
    out["ZIP"] = str(tmp_path / "q.ZIP")
    (tmp_path / "corrupt.zip").write_bytes(b"PK\x03\x04garbage")
    (tmp_path / "corrupt.tar.gz").write_bytes(b"\x1f\x8bnot gzip")
    (tmp_path / "single.gz").write_bytes(b"\x1f\x8b")
    out.update(corrupt_zip=str(tmp_path / "corrupt.zip"), corrupt_tgz=str(tmp_path / "corrupt.tar.gz"),
               gz=str(tmp_path / "single.gz"), missing=str(tmp_path / "missing.tar"))
    return out


def _run(paths, **kw):
    op = OPERATORS.get("latex_merge_tex_mapper")(**kw)
    return [r["text"] for r in run_ops_on_rows([op], [{"text": "old", "compressed_file": p} for p in paths])]


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_matches_data_juicer(archives):
    # values from Data-Juicer 1.6.1 (13 archives x 5 size/separator configs compared: 0 differences)
    bad = "ok\ufffd\ufffd bytes"
    full_tar = "\n\n".join([MAIN, "Section one", bad, "x" * 300, ""])
    full_zip = "\n\n".join(["dup second", "Section one", bad, "x" * 300, "", "dup second"])
    keys = ["tar", "tgz", "TARGZ", "bz2_named_tar", "zip", "ZIP", "corrupt_zip", "corrupt_tgz", "gz", "missing"]
    paths = [archives[k] for k in keys]
    assert _run(paths) == [full_tar] * 4 + [full_zip, "A\n\nB", "", "", "", ""]
    assert _run(paths[::4][:2], separator="|", max_file_size=100) == [
        MAIN + "|Section one|" + bad + "|", "dup second|Section one|" + bad + "||dup second"]
    assert _run([archives["tar"], archives["zip"]], max_total_size=60) == [
        MAIN + "\n\nSection one", "dup second\n\nSection one\n\n" + bad]
    assert _run([archives["tar"], archives["zip"], archives["ZIP"]], max_total_size=20, max_file_size=0) == [
        "", "dup second", "A\n\nB"]
    assert _run([archives["tgz"]], max_file_size=0, max_total_size=0) == [full_tar]


def test_missing_field_is_an_error():
    op = OPERATORS.get("latex_merge_tex_mapper")(compressed_file_key="arc")
    with pytest.raises(ValueError, match="arc"):
        op.process_batched({"text": ["x"]})
