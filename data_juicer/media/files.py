"""Where the media files mappers write go, what they are called, and how they are written.

Data-Juicer names a produced file ``<stem>__dj_hash_#<hash>#<ext>`` where the hash covers the
op's parameters plus the process id and the current time, so every run writes new files.
Here the hash covers the op's name, its parameters and the *content* of the source file (its
bytes), so a rerun on the same input gives the same paths (and can skip work already done),
while a changed source or changed parameters give a new name. A source that is itself a
produced file has its old ``__dj_hash_#...#`` replaced, not stacked.

The folder, as in Data-Juicer, is (first that applies):

1. the op's ``save_dir`` (used as is);
2. ``$DJ_PRODUCED_DATA_DIR/<op_name>``;
3. ``<source folder>/__dj__produced_data__/<op_name>`` (a source already inside a
   ``__dj__produced_data__`` folder writes beside that folder's parent, not deeper).

``atomic_write`` writes to a temporary name in the target folder and renames it into place, so
a crash never leaves a half-written file under the final name.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from contextlib import contextmanager
from typing import Iterator, Optional

from data_juicer.media.errors import missing_file
from data_juicer.utils.constant import Fields

PRODUCED_DATA_ENV = "DJ_PRODUCED_DATA_DIR"
_HASH_RE = re.compile(r"__dj_hash_#(.*?)#")
_DIGESTS: dict[tuple, str] = {}
_LOCK = threading.Lock()

__all__ = ["transform_file_name", "media_output_dir", "atomic_write", "file_digest", "file_size",
           "size_to_bytes", "PRODUCED_DATA_ENV"]


def file_digest(path: str) -> str:
    """SHA-256 of a file's bytes (cached per path, size and mtime in this process)."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    with _LOCK:
        if key in _DIGESTS:
            return _DIGESTS[key]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    digest = h.hexdigest()
    with _LOCK:
        _DIGESTS[key] = digest
    return digest


def media_output_dir(op, org_path: Optional[str] = None, save_dir: Optional[str] = None) -> str:
    """The folder (created) a file that ``op`` (an op, or an op name) produces from ``org_path`` goes to.

    ``save_dir`` defaults to the op's ``save_dir`` attribute. Without a source path, the fallback
    folder is ``<job folder or cwd>/__dj__produced_data__/<op_name>``.
    """
    op_name = op if isinstance(op, str) else op.name
    if save_dir is None and not isinstance(op, str):
        save_dir = getattr(op, "save_dir", None)
    if save_dir:
        new_dir = os.path.abspath(save_dir)
    elif os.environ.get(PRODUCED_DATA_ENV):
        new_dir = os.path.join(os.path.abspath(os.environ[PRODUCED_DATA_ENV]), op_name)
    else:
        if org_path is not None:
            src_dir = os.path.dirname(os.path.abspath(org_path))
        else:
            src_dir = os.path.abspath((None if isinstance(op, str) else getattr(op, "work_dir", None)) or os.getcwd())
        token = f"/{Fields.multimodal_data_output_dir}/"
        if token in src_dir + "/":
            src_dir = (src_dir + "/").split(token)[0]
        new_dir = os.path.join(src_dir, Fields.multimodal_data_output_dir, op_name)
    os.makedirs(new_dir, exist_ok=True)
    return new_dir


def _canonical(params: dict) -> str:
    return json.dumps(params, sort_keys=True, default=repr, ensure_ascii=False)


def transform_file_name(org_path: str, op_name: str, params: dict, ext: Optional[str] = None,
                        out_dir: Optional[str] = None, content_key: Optional[str] = None) -> str:
    """The path of the file ``op_name`` with ``params`` produces from ``org_path``.

    ``<folder>/<stem>__dj_hash_#<h>#<ext>``: ``<folder>`` as ``media_output_dir`` (``out_dir`` is
    the op's ``save_dir``), ``ext`` defaults to the source's extension (give e.g. ``".wav"`` to
    change the format), and ``h`` is an MD5 over the op name, the parameters and the source's
    content digest (or ``content_key`` when the output depends on more than the file, e.g. a
    per-image random draw). A source that does not exist locally (a URL) is returned unchanged,
    as in Data-Juicer.
    """
    if not os.path.exists(org_path):
        return org_path
    digest = content_key if content_key is not None else file_digest(org_path)
    h = hashlib.md5(f"{op_name}\n{_canonical(params)}\n{digest}".encode("utf-8")).hexdigest()
    stem, org_ext = os.path.splitext(os.path.basename(org_path))
    m = _HASH_RE.search(stem)
    if m:
        stem = stem[: m.start()]
    folder = media_output_dir(op_name, org_path, out_dir)
    return os.path.join(folder, f"{stem}__dj_hash_#{h}#{org_ext if ext is None else ext}")


@contextmanager
def atomic_write(path: str) -> Iterator[str]:
    """Yield a temporary path beside ``path`` (same extension) to write to; rename it to ``path`` on success.

    On an exception the temporary file is removed and ``path`` is left as it was.
    """
    folder, name = os.path.split(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    stem, ext = os.path.splitext(name)
    tmp = os.path.join(folder, f".{stem}.tmp-{os.getpid()}-{threading.get_ident()}{ext}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def file_size(kind: str, path: str) -> int:
    """Size in bytes of a media file; a clear FileNotFoundError when it is missing."""
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        raise missing_file(kind, path) from None


_UNITS = {"": 0, "b": 0, "kb": 10, "kib": 10, "mb": 20, "mib": 20, "gb": 30, "gib": 30, "tb": 40, "tib": 40,
          "pb": 50, "pib": 50, "eb": 60, "eib": 60, "zb": 70, "zib": 70, "yb": 80, "yib": 80}


def size_to_bytes(size) -> int:
    """Bytes in a size like ``"0"``, ``"1024"``, ``"20KB"``, ``"1.5 MiB"`` (units are powers of 1024).

    As Data-Juicer, ``KB`` and ``KiB`` both mean 1024 and a bare number is bytes. Unlike it,
    a decimal point is honoured (Data-Juicer drops it: ``"1.5MB"`` is 15 MiB there).
    """
    if isinstance(size, (int, float)) and not isinstance(size, bool):
        return int(size)
    text = str(size).strip()
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)", text)
    if not m:
        if not re.search(r"[0-9]", text):
            raise ValueError(f"size '{size}' does not contain a number")
        raise ValueError(f"cannot read size '{size}'; write a number with an optional unit, e.g. '20KB', '1.5MiB'")
    unit = m.group(2).lower()
    if unit not in _UNITS:
        raise ValueError(f"unknown size unit '{m.group(2)}' in '{size}'; use one of "
                         "B, KB, MB, GB, TB, PB, EB, ZB, YB or KiB ... YiB (case insensitive, powers of 1024)")
    return int(float(m.group(1)) * (1 << _UNITS[unit]))
