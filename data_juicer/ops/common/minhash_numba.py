"""Compiled MinHash signatures (numba), bit-identical to ``minhash.signatures`` over the
``shingles`` module's shingle sets; used when numba is installed (for ``space`` tokenization the C
library of ``minhash_c`` comes first, where a C compiler built it: no LLVM in the process).

One pass over a batch: documents are UTF-8 bytes, cut into tokens (words between spaces,
characters, or tokens given by the caller); each window of ``window`` consecutive tokens,
joined by the separator, is hashed with SHA-1 (its first 4 bytes, little-endian), and the
permutations ``((h * a + b) mod 2**64) mod (2**61 - 1)``, low 32 bits, update the
document's minima in place. A shingle that repeats in a document gives the same values again,
so no shingle set is needed. SHA-1's 64-byte blocks go to OpenSSL's ``SHA1_Transform`` (the
libcrypto ``hashlib`` uses) where it loads and agrees with ``hashlib`` on a probe, else numba's.
"""

from __future__ import annotations

import os

import numpy as np

from data_juicer.utils.lazy import is_available

_KERNELS = None


_USABLE = None


def available() -> bool:
    """numba is installed and its kernels import (a numba too old for this numpy does not)."""
    global _USABLE
    if _USABLE is None:
        _USABLE = False
        if is_available("numba"):
            try:
                _kernels()
                _USABLE = True
            except Exception as e:  # noqa: BLE001 - any failure means: use the numpy path
                from loguru import logger

                logger.warning(f"numba is installed but unusable ({type(e).__name__}: {e}); "
                               "MinHash signatures use the slower numpy path")
    return _USABLE


_NUMBA = None


def numba_usable() -> bool:
    """numba is installed and imports; asked once per process. Unlike ``available`` it loads no MinHash
    kernel (their import and the OpenSSL probe are ~0.7 CPU s that a recipe with the word filters and
    no numba MinHash does not need)."""
    global _NUMBA
    if _NUMBA is None:
        _NUMBA = False
        if is_available("numba"):
            try:
                import numba  # noqa: F401

                _NUMBA = True
            except Exception as e:  # noqa: BLE001 - any failure means: the other paths
                from loguru import logger

                logger.warning(f"numba is installed but does not import ({type(e).__name__}: {e})")
    return _NUMBA


_PROBED: dict = {}


def kernel_usable(name: str, probe, fallback: str) -> bool:
    """Whether the compiled kernel ``name`` works here: numba imports and ``probe()`` (a tiny call
    that compiles the kernel, or loads it from numba's cache; a numba too old for this numpy fails
    here) succeeds; asked once per process."""
    if name not in _PROBED:
        _PROBED[name] = False
        if numba_usable():
            try:
                probe()
                _PROBED[name] = True
            except Exception as e:  # noqa: BLE001 - any failure means: use the other path
                from loguru import logger

                logger.warning(f"compiled {name} unusable ({type(e).__name__}: {e}); using {fallback}")
    return _PROBED[name]


def _kernels():
    global _KERNELS
    if _KERNELS is None:
        from data_juicer.ops.common import minhash_kernels as k

        _KERNELS = k.space_tokens, k.char_tokens, (k.sign_ossl if _openssl_usable(k) else k.sign)
    return _KERNELS


# code points whose lower case ``str.lower`` takes from special casing: U+0130 (two code points) and
# U+03A3 (final sigma, by context); documents holding them are lower-cased by Python
_SPECIAL_LOWER = (0x130, 0x3A3)
_LOWER_TABLE = None


def lower_table() -> np.ndarray:
    """int32 table: ``table[cp]`` is ``ord(chr(cp).lower())`` for every code point up to the last one
    whose lower case differs (beyond it, every code point is its own), from this Python's own
    ``str.lower`` of all code points at once (~0.07 s, once per process)."""
    global _LOWER_TABLE
    if _LOWER_TABLE is None:
        cps = np.arange(0x110000, dtype=np.uint32)
        cps[0xD800:0xE000] = 0x20  # surrogates are not in UTF-8 text
        cps[list(_SPECIAL_LOWER)] = 0x20
        text = cps.tobytes().decode("utf-32-le")
        lowered = text.lower()
        if len(lowered) != len(text):  # another multi-code-point lower case: the table cannot hold it
            raise ValueError("str.lower changes the length of single code points beyond U+0130")
        low = np.frombuffer(lowered.encode("utf-32-le"), dtype=np.uint32)
        changed = np.flatnonzero(low != cps)
        size = int(changed[-1]) + 1 if len(changed) else 0x80
        table = np.arange(size, dtype=np.int32)
        table[changed] = low[changed]
        table[list(_SPECIAL_LOWER)] = list(_SPECIAL_LOWER)  # never read: such documents are flagged
        _LOWER_TABLE = table
    return _LOWER_TABLE


def lower_buffer(data: np.ndarray, doc_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 documents ``data[doc_off[d]:doc_off[d + 1]]`` lower-cased exactly as Python's
    ``str.lower`` does, as a new ``(buffer, offsets)``: in the compiled kernel (no GIL, no Python
    strings) from ``lower_table``, and in Python for the few documents it flags (U+0130, U+03A3,
    bytes that are not UTF-8: these raise as ``bytes.decode`` does)."""
    from data_juicer.ops.common import minhash_kernels as k

    out, out_off, flagged = k.utf8_lower(data, doc_off, lower_table())
    return lower_flagged(data, doc_off, out, out_off, flagged)


def lower_flagged(data, doc_off, out, out_off, flagged) -> tuple[np.ndarray, np.ndarray]:
    """``(out, out_off)`` of a lower-casing kernel, with the documents it flagged lower-cased in Python."""
    if not flagged.any():
        return out, out_off
    pieces = [out[out_off[d]:out_off[d + 1]].tobytes() for d in range(len(doc_off) - 1)]
    for d in np.flatnonzero(flagged).tolist():
        pieces[d] = data[doc_off[d]:doc_off[d + 1]].tobytes().decode("utf-8").lower().encode("utf-8")
    return _concat(pieces)


def _libcrypto_path():
    """The libcrypto that Python's ``hashlib`` is linked with (already mapped into this process), or
    None (``hashlib`` without OpenSSL, or not Linux)."""
    try:
        import _hashlib  # noqa: F401 - maps libcrypto into the process
    except ImportError:
        return None
    try:
        with open("/proc/self/maps", encoding="utf-8") as f:
            for line in f:
                path = line.split()[-1] if line.count(" ") >= 5 else ""
                if "libcrypto" in os.path.basename(path):
                    return path
    except OSError:
        pass
    import ctypes.util

    return ctypes.util.find_library("crypto")


def _openssl_usable(k) -> bool:
    """OpenSSL's ``SHA1_Transform`` loads, and ``sign_ossl`` gives hashlib's SHA-1 heads on a probe
    (every message length from 0 to 200 bytes, across the one- and two-block paddings). With
    ``DJ_MINHASH_OPENSSL=0`` (or any failure) the numba SHA-1 is used: the same values, slower."""
    if os.environ.get("DJ_MINHASH_OPENSSL", "1") == "0":
        return False
    try:
        import ctypes
        import hashlib

        import llvmlite.binding as llb

        path = _libcrypto_path()
        if not path or not hasattr(ctypes.CDLL(path), "SHA1_Transform"):
            return False
        llb.load_library_permanently(path)
        msgs = [bytes((i * 7 + j) % 251 + 1 for j in range(n)) for i, n in enumerate(range(201))]
        buf, off = _concat(msgs)
        one = np.ones(1, dtype=np.uint64)
        out = np.empty((len(msgs), 1), dtype=np.uint32)
        # one token per message, window 1, the identity permutation: each value is the SHA-1 head
        k.sign_ossl(buf, off[:-1], off[1:], np.arange(len(msgs) + 1, dtype=np.int64), 1, -1, one,
                    np.zeros(1, dtype=np.uint64), out)
        want = [int.from_bytes(hashlib.sha1(m).digest()[:4], "little") for m in msgs]
        if out[:, 0].tolist() != want:
            raise ValueError("SHA-1 heads differ from hashlib's")
        return True
    except Exception as e:  # noqa: BLE001 - any failure means: the numba SHA-1
        from loguru import logger

        logger.warning(f"OpenSSL SHA-1 for MinHash unusable ({type(e).__name__}: {e}); using numba's SHA-1")
        return False


# ``space`` tokenization through ``sign_space_ossl`` (one pass; ``DJ_MINHASH_FUSED=0``: the two kernels)
_FUSED_SPACE = os.environ.get("DJ_MINHASH_FUSED", "1") != "0"


def warm_up(a: np.ndarray, b: np.ndarray) -> None:
    """Compile (or load from numba's cache) the kernels for these permutation arrays."""
    text_signatures(["a b"], "space", 1, a, b)
    text_signatures(["a"], "character", 1, a, b)
    token_signatures([["a", "b"]], " ", 1, a, b)
    token_signatures([["a", "b"]], "", 1, a, b)


def _concat(encoded: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


def text_signatures(texts: list[str], tokenization: str, window: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(documents x permutations) uint32 signatures of prepared texts for ``space`` or
    ``character`` tokenization."""
    buf, doc_off = _concat([t.encode("utf-8") for t in texts])
    return buffer_signatures(buf, doc_off, tokenization, window, a, b)


def buffer_signatures(data: np.ndarray, doc_off: np.ndarray, tokenization: str, window: int, a: np.ndarray,
                      b: np.ndarray) -> np.ndarray:
    """``text_signatures`` of texts already UTF-8 in one buffer: document ``d`` is
    ``data[doc_off[d]:doc_off[d + 1]]`` (int64 offsets, e.g. an Arrow string array's own buffers). The
    kernels release the GIL, so threads may call this at once."""
    space_tokens, char_tokens, sign = _kernels()
    out = np.empty((len(doc_off) - 1, len(a)), dtype=np.uint32)
    from data_juicer.ops.common import minhash_kernels as k

    if tokenization == "space" and _FUSED_SPACE and sign is k.sign_ossl:
        k.sign_space_ossl(data, doc_off, window, a, b, out)  # tokens and signatures in one pass
        return out
    starts, ends, doc_tok = (space_tokens if tokenization == "space" else char_tokens)(data, doc_off)
    sign(data, starts, ends, doc_tok, window, 32 if tokenization == "space" else -1, a, b, out)
    return out


def token_signatures(docs_tokens: list[list[str]], sep: str, window: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Signatures of documents given as token lists, shingles joined by ``sep`` (" " or "")."""
    _, _, sign = _kernels()
    flat = [t.encode("utf-8") for tokens in docs_tokens for t in tokens]
    buf, tok_off = _concat(flat)
    doc_tok = np.zeros(len(docs_tokens) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, docs_tokens), dtype=np.int64, count=len(docs_tokens)), out=doc_tok[1:])
    out = np.empty((len(docs_tokens), len(a)), dtype=np.uint32)
    sign(buf, tok_off[:-1], tok_off[1:], doc_tok, window, ord(sep) if sep else -1, a, b, out)
    return out
