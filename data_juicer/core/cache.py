"""Reusing and compressing the Hugging Face cache files of each pass (``use_cache``, ``cache_compress``).

Each row-wise pass gets a fingerprint computed from the fingerprint of its input dataset and
the names and parameters of its ops (not from pickling the pass object, which holds per-job
paths), so rerunning a recipe, or a recipe sharing a prefix with an earlier one, loads the
passes it has already computed from the cache instead of computing them again.

With ``cache_compress`` (gzip, zstd or lz4), the cache files of a pass are compressed once the
next pass no longer needs them, and decompressed again when a later run wants to reuse them.
"""

from __future__ import annotations

import functools
import glob
import gzip
import inspect
import json
import os
import shutil
from typing import Iterable, Optional

import xxhash
from loguru import logger

from data_juicer import __version__

_SUFFIX = {"gzip": ".gz", "zstd": ".zst", "lz4": ".lz4"}


@functools.lru_cache(maxsize=None)
def _code_hash(cls: type) -> str:
    """Hash of the source file defining ``cls``: editing an op's code invalidates its cached passes."""
    try:
        with open(inspect.getsourcefile(cls), "rb") as f:
            return xxhash.xxh64_hexdigest(f.read())
    except (OSError, TypeError):
        return cls.__qualname__


def _op_part(op) -> list:
    members = getattr(op, "filters", None) or getattr(op, "ops", None)
    from data_juicer.ops.base import OP

    params = {k: v for k, v in op.init_params.items() if k != "work_dir" and not isinstance(v, OP)
              and not (isinstance(v, (list, tuple)) and v and all(isinstance(x, OP) for x in v))}
    part = [op.name, params, _code_hash(type(op))]
    if members:
        part.append([_op_part(m) for m in members])
    return part


def stage_fingerprint(input_fingerprint: str, ops: Iterable, extra: Optional[dict] = None) -> str:
    """Fingerprint of a pass: its input, its ops and their parameters, and this version."""
    payload = json.dumps([input_fingerprint, __version__, [_op_part(op) for op in ops], extra or {}],
                         sort_keys=True, default=str)
    return xxhash.xxh64_hexdigest(payload.encode("utf-8"))


def _open(path: str, mode: str, algo: str):
    if algo == "gzip":
        return gzip.open(path, mode, compresslevel=3)
    if algo == "zstd":
        import zstandard

        raw = open(path, mode)
        if "w" in mode:
            return zstandard.ZstdCompressor(level=3).stream_writer(raw, closefd=True)
        return zstandard.ZstdDecompressor().stream_reader(raw, closefd=True)
    if algo == "lz4":
        from data_juicer.utils.lazy import require

        lz4 = require("lz4", who="cache_compress: lz4")
        return lz4.frame.open(path, mode)
    raise ValueError(f"cache_compress: unknown method {algo!r}; use gzip, zstd or lz4")


def check_method(algo: Optional[str]) -> None:
    """Fail before any work when the chosen compression cannot be used."""
    if algo == "lz4":
        from data_juicer.utils.lazy import require

        require("lz4", who="cache_compress: lz4")
    elif algo not in (None, "gzip", "zstd"):
        raise ValueError(f"cache_compress: unknown method {algo!r}; use gzip, zstd or lz4")


def pass_files(dataset) -> list[str]:
    """The cache files a map pass wrote behind ``dataset`` (not the files it was loaded from)."""
    return [f["filename"] for f in getattr(dataset, "cache_files", []) or []
            if os.path.basename(f["filename"]).startswith("cache-")]


def compress(paths: Iterable[str], algo: str) -> int:
    """Compress pass cache files; the originals are removed. Returns the bytes saved."""
    saved = 0
    for path in paths:
        if not os.path.exists(path):
            continue
        target = path + _SUFFIX[algo]
        tmp = target + ".tmp"
        with open(path, "rb") as src, _open(tmp, "wb", algo) as dst:
            shutil.copyfileobj(src, dst, length=8 << 20)
        os.replace(tmp, target)
        saved += os.path.getsize(path) - os.path.getsize(target)
        os.remove(path)  # an open memory map keeps the data readable until it is closed
    if saved:
        logger.debug(f"cache_compress: {saved / 2**20:.1f} MB saved ({algo})")
    return saved


def restore(cache_dir: str, fingerprint: str, algo: Optional[str]) -> int:
    """Decompress the cache files of the pass ``fingerprint`` in ``cache_dir`` if only the
    compressed copies exist, so the datasets cache can load them. Returns the files restored."""
    n = 0
    for suffix in ([_SUFFIX[algo]] if algo else _SUFFIX.values()):
        method = next(k for k, v in _SUFFIX.items() if v == suffix)
        for packed in glob.glob(os.path.join(glob.escape(cache_dir), f"cache-{fingerprint}*.arrow{suffix}")):
            path = packed[: -len(suffix)]
            if os.path.exists(path):
                continue
            tmp = path + ".tmp"
            with _open(packed, "rb", method) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, length=8 << 20)
            os.replace(tmp, path)
            n += 1
    return n
