"""MinHash signatures for ``space`` tokenization in a small C library (ctypes), bit-identical to
``minhash_numba``'s kernels (and so to ``minhash.signatures``): used before numba when a C compiler
is there, because numba's LLVM costs a process ~130 MB (its ~69 MB of ``libllvmlite.so`` pages, ~55 MB
of anonymous memory for its imports and cached kernels), more than the whole rest of a MinHash run.

The source below is compiled once per machine with the system's C compiler (``c_build``: ``$CC`` or
``cc``, ``-O3 -march=native``, into ``<DATA_JUICER_CACHE_HOME or ~/.cache/data_juicer>/kernels/``, named
after the source, the compiler and the CPU's flags) and loaded with ctypes (which releases the GIL during
each call, so threads sign batches at once). SHA-1's 64-byte blocks go to OpenSSL's ``SHA1_Transform``,
from the libcrypto Python's ``hashlib`` uses (passed in as a function pointer), as in
``minhash_kernels.sign_space_ossl``. Not used (``available()`` is False, the numba kernels or the
numpy path run instead) when there is no compiler, no such libcrypto, the library's SHA-1 heads differ
from ``hashlib``'s on a probe, or ``DJ_MINHASH_C=0`` / ``DJ_C_KERNELS=0``.
"""
from __future__ import annotations

import ctypes
import hashlib

import numpy as np

from data_juicer.ops.common import c_build

SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef void (*sha1_block)(void *ctx, const unsigned char *data);
static const uint64_t PRIME = (((uint64_t)1) << 61) - 1;

/* first 4 bytes of SHA-1(src[0:size]) as a little-endian uint32; ctx: an SHA_CTX (24 x uint32) */
static inline uint32_t sha1_head(sha1_block tf, const uint8_t *src, int64_t size, uint32_t *ctx, uint8_t *blk) {
    ctx[0] = 0x67452301u; ctx[1] = 0xEFCDAB89u; ctx[2] = 0x98BADCFEu; ctx[3] = 0x10325476u; ctx[4] = 0xC3D2E1F0u;
    int64_t full = size / 64;
    for (int64_t q = 0; q < full; q++) tf(ctx, src + 64 * q);
    int64_t rem = size - 64 * full;
    int64_t tail = rem < 56 ? 64 : 128;  /* the rest, 0x80, zeros, the 64-bit bit length */
    memcpy(blk, src + 64 * full, (size_t)rem);
    blk[rem] = 0x80;
    memset(blk + rem + 1, 0, (size_t)(tail - 8 - rem - 1));
    uint64_t bits = (uint64_t)size * 8;
    for (int i = 0; i < 8; i++) blk[tail - 1 - i] = (uint8_t)(bits >> (8 * i));
    tf(ctx, blk);
    if (tail == 128) tf(ctx, blk + 64);
    uint32_t h0 = ctx[0];
    return ((h0 & 0xFFu) << 24) | (((h0 >> 8) & 0xFFu) << 16) | (((h0 >> 16) & 0xFFu) << 8) | (h0 >> 24);
}

/* minhash_kernels.sign_space_ossl: words between b' ', shingles of `window` words joined by one space */
int dj_sign_space(sha1_block tf, const uint8_t *buf, const int64_t *doc_off, int64_t n_docs, int64_t window,
                  const uint64_t *a, const uint64_t *b, int64_t num_perm, uint32_t *out) {
    uint32_t ctx[24];
    uint8_t blk[128];
    int64_t cap = 64, msg_cap = 256;
    int64_t *ts = malloc(sizeof(int64_t) * cap), *te = malloc(sizeof(int64_t) * cap);
    uint32_t *hs = malloc(sizeof(uint32_t) * cap);
    uint8_t *msg = malloc((size_t)msg_cap);
    uint32_t *a_lo = malloc(sizeof(uint32_t) * (num_perm + 1)), *a_hi = malloc(sizeof(uint32_t) * (num_perm + 1));
    int rc = -1;
    if (!ts || !te || !hs || !msg || !a_lo || !a_hi) goto done;
    for (int64_t j = 0; j < num_perm; j++) { a_lo[j] = (uint32_t)a[j]; a_hi[j] = (uint32_t)(a[j] >> 32); }
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t i = doc_off[d], e = doc_off[d + 1];
        int64_t need = (e - i) / 2 + 1;  /* words of a text of this many bytes, at most */
        if (need > cap) {
            cap = 2 * need;
            free(ts); free(te); free(hs);
            ts = malloc(sizeof(int64_t) * cap); te = malloc(sizeof(int64_t) * cap); hs = malloc(sizeof(uint32_t) * cap);
            if (!ts || !te || !hs) goto done;
        }
        int64_t nt = 0;
        while (i < e) {
            while (i < e && buf[i] == 32) i++;
            if (i >= e) break;
            int64_t s = i;
            while (i < e && buf[i] != 32) i++;
            ts[nt] = s; te[nt] = i; nt++;
        }
        int64_t m = 0;
        for (int64_t k = 0; k + window <= nt; k++) {
            int contiguous = 1;
            for (int64_t t = k + 1; t < k + window; t++)
                if (ts[t] != te[t - 1] + 1) { contiguous = 0; break; }
            if (contiguous) {
                hs[m] = sha1_head(tf, buf + ts[k], te[k + window - 1] - ts[k], ctx, blk);
            } else {  /* copied out, one space apart */
                int64_t size = window - 1;
                for (int64_t t = k; t < k + window; t++) size += te[t] - ts[t];
                if (size > msg_cap) {
                    msg_cap = 2 * size;
                    free(msg);
                    msg = malloc((size_t)msg_cap);
                    if (!msg) goto done;
                }
                int64_t p = 0;
                for (int64_t t = k; t < k + window; t++) {
                    if (t > k) msg[p++] = 32;
                    memcpy(msg + p, buf + ts[t], (size_t)(te[t] - ts[t]));
                    p += te[t] - ts[t];
                }
                hs[m] = sha1_head(tf, msg, size, ctx, blk);
            }
            m++;
        }
        uint32_t *row = out + d * num_perm;
        for (int64_t j = 0; j < num_perm; j++) {
            uint64_t lo = a_lo[j], hi = a_hi[j], bj = b[j];
            uint32_t low = 0xFFFFFFFFu;  /* no shingle: the maximum */
            for (int64_t q = 0; q < m; q++) {
                uint64_t h = hs[q];
                uint64_t x = h * lo + ((h * hi) << 32) + bj;  /* = h * a + b, wrapping mod 2**64 */
                uint64_t y = (x & PRIME) + (x >> 61);
                y = y >= PRIME ? y - PRIME : y;
                uint32_t v = (uint32_t)y;
                low = v < low ? v : low;
            }
            row[j] = low;
        }
    }
    rc = 0;
done:
    free(ts); free(te); free(hs); free(msg); free(a_lo); free(a_hi);
    return rc;
}

/* number of words (between b' ') of each document */
void dj_space_counts(const uint8_t *buf, const int64_t *doc_off, int64_t n_docs, int64_t *counts) {
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t c = 0;
        uint8_t prev = 32;
        for (int64_t i = doc_off[d]; i < doc_off[d + 1]; i++) {
            if (buf[i] != 32 && prev == 32) c++;
            prev = buf[i];
        }
        counts[d] = c;
    }
}

/* minhash_kernels.utf8_lower; out holds total + total / 2 + 4 bytes; returns the bytes written */
int64_t dj_utf8_lower(const uint8_t *data, const int64_t *doc_off, int64_t n, const int32_t *table, int64_t tlen,
                      uint8_t *out, int64_t *out_off, uint8_t *flagged) {
    int64_t p = 0;
    for (int64_t d = 0; d < n; d++) {
        out_off[d] = p;
        int64_t i = doc_off[d], e = doc_off[d + 1];
        int bad = 0;
        flagged[d] = 0;
        while (i < e) {
            int64_t c = data[i];
            if (c < 0x80) { out[p++] = (uint8_t)(65 <= c && c <= 90 ? c + 32 : c); i++; continue; }
            if (c < 0xC2 || c > 0xF4) { bad = 1; break; }
            int k = c < 0xE0 ? 2 : (c < 0xF0 ? 3 : 4);
            if (i + k > e) { bad = 1; break; }
            int64_t cp = c & (k == 2 ? 0x1F : (k == 3 ? 0x0F : 0x07));
            for (int q = 1; q < k; q++) {
                int64_t x = data[i + q];
                if ((x & 0xC0) != 0x80) bad = 1;
                cp = (cp << 6) | (x & 0x3F);
            }
            if (bad || (k == 3 && (cp < 0x800 || (0xD800 <= cp && cp <= 0xDFFF))) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF))
                    || cp == 0x130 || cp == 0x3A3) { bad = 1; break; }
            i += k;
            int64_t lc = cp < tlen ? table[cp] : cp;
            if (lc < 0x80) { out[p++] = (uint8_t)lc; }
            else if (lc < 0x800) { out[p++] = (uint8_t)(0xC0 | (lc >> 6)); out[p++] = (uint8_t)(0x80 | (lc & 0x3F)); }
            else if (lc < 0x10000) {
                out[p++] = (uint8_t)(0xE0 | (lc >> 12)); out[p++] = (uint8_t)(0x80 | ((lc >> 6) & 0x3F));
                out[p++] = (uint8_t)(0x80 | (lc & 0x3F));
            } else {
                out[p++] = (uint8_t)(0xF0 | (lc >> 18)); out[p++] = (uint8_t)(0x80 | ((lc >> 12) & 0x3F));
                out[p++] = (uint8_t)(0x80 | ((lc >> 6) & 0x3F)); out[p++] = (uint8_t)(0x80 | (lc & 0x3F));
            }
        }
        if (bad) {  /* copied unchanged, for the caller */
            flagged[d] = 1;
            p = out_off[d];
            memcpy(out + p, data + doc_off[d], (size_t)(e - doc_off[d]));
            p += e - doc_off[d];
        }
    }
    out_off[n] = p;
    return p;
}
"""

_LIB = None  # the loaded library, False when unusable
_SHA1 = None  # OpenSSL's SHA1_Transform, as an address


def _build() -> str:
    """The compiled library's path (compiled now if this machine has none yet); raises when it cannot be."""
    return c_build.build(SOURCE, "minhash")


def _load():
    global _SHA1
    from data_juicer.ops.common.minhash_numba import _libcrypto_path  # (no numba import)

    crypto = _libcrypto_path()
    if not crypto:
        raise RuntimeError("no libcrypto (hashlib without OpenSSL)")
    transform = ctypes.CDLL(crypto).SHA1_Transform
    lib = ctypes.CDLL(_build())
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.dj_sign_space.argtypes = (p, p, p, i64, i64, p, p, i64, p)
    lib.dj_sign_space.restype = ctypes.c_int
    lib.dj_space_counts.argtypes = (p, p, i64, p)
    lib.dj_space_counts.restype = None
    lib.dj_utf8_lower.argtypes = (p, p, i64, p, i64, p, p, p)
    lib.dj_utf8_lower.restype = i64
    _SHA1 = ctypes.cast(transform, ctypes.c_void_p).value
    _probe(lib)
    return lib


def _probe(lib) -> None:
    """The library's SHA-1 heads are hashlib's: every message length from 0 to 200 bytes (one and two
    padding blocks, whole blocks from the text), each a one-word document, window 1, the identity
    permutation; raises otherwise."""
    msgs = [bytes((i * 7 + j) % 200 + 33 for j in range(n)) for i, n in enumerate(range(201))]  # no spaces
    msgs[0] = b"x"
    buf = np.frombuffer(b"".join(msgs), dtype=np.uint8)
    off = np.zeros(len(msgs) + 1, dtype=np.int64)
    np.cumsum([len(m) for m in msgs], out=off[1:])
    out = np.empty((len(msgs), 1), dtype=np.uint32)
    one, zero = np.ones(1, dtype=np.uint64), np.zeros(1, dtype=np.uint64)
    if lib.dj_sign_space(_SHA1, buf.ctypes.data, off.ctypes.data, len(msgs), 1, one.ctypes.data, zero.ctypes.data,
                         1, out.ctypes.data) != 0:
        raise RuntimeError("out of memory in the probe")
    # (h * 1 + 0) mod (2**61 - 1) of a 32-bit h is h
    want = [int.from_bytes(hashlib.sha1(m).digest()[:4], "little") for m in msgs]
    if out[:, 0].tolist() != want:
        raise ValueError("SHA-1 heads differ from hashlib's")


def available() -> bool:
    """The library is built (or builds now), loads and agrees with ``hashlib``; asked once per process."""
    global _LIB
    if _LIB is None:
        _LIB = False
        if c_build.enabled("DJ_MINHASH_C"):
            try:
                _LIB = _load()
            except Exception as e:  # noqa: BLE001 - any failure means: the numba kernels or numpy
                from loguru import logger

                logger.debug(f"MinHash C kernel not used ({type(e).__name__}: {e})")
    return bool(_LIB)


def _ptr(arr: np.ndarray, dtype) -> np.ndarray:
    return np.ascontiguousarray(arr, dtype=dtype)


def buffer_signatures(data: np.ndarray, doc_off: np.ndarray, window: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(documents x permutations) uint32 signatures of the UTF-8 texts ``data[doc_off[d]:doc_off[d + 1]]``
    (``space`` tokenization, shingles of ``window`` words); ``available()`` must be True."""
    data, doc_off = _ptr(data, np.uint8), _ptr(doc_off, np.int64)
    a, b = _ptr(a, np.uint64), _ptr(b, np.uint64)
    n = len(doc_off) - 1
    out = np.empty((n, len(a)), dtype=np.uint32)
    if n and _LIB.dj_sign_space(_SHA1, data.ctypes.data, doc_off.ctypes.data, n, int(window), a.ctypes.data,
                                b.ctypes.data, len(a), out.ctypes.data) != 0:
        raise MemoryError("MinHash C kernel: out of memory")
    return out


def text_signatures(texts: list[str], window: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``buffer_signatures`` of prepared Python texts."""
    encoded = [t.encode("utf-8") for t in texts]
    off = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=off[1:])
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8) if off[-1] else np.zeros(1, dtype=np.uint8)
    return buffer_signatures(data, off, window, a, b)


def space_counts(data: np.ndarray, doc_off: np.ndarray) -> np.ndarray:
    """Words (between b' ') of each document."""
    data, doc_off = _ptr(data, np.uint8), _ptr(doc_off, np.int64)
    counts = np.empty(len(doc_off) - 1, dtype=np.int64)
    _LIB.dj_space_counts(data.ctypes.data, doc_off.ctypes.data, len(counts), counts.ctypes.data)
    return counts


def lower_buffer(data: np.ndarray, doc_off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``minhash_numba.lower_buffer`` (Python's ``str.lower`` bytes) in the C library."""
    from data_juicer.ops.common.minhash_numba import lower_flagged, lower_table

    data, doc_off = _ptr(data, np.uint8), _ptr(doc_off, np.int64)
    table = lower_table()
    n = len(doc_off) - 1
    total = int(doc_off[n] - doc_off[0])
    out = np.empty(total + total // 2 + 4, dtype=np.uint8)
    out_off = np.empty(n + 1, dtype=np.int64)
    flagged = np.zeros(n, dtype=np.bool_)
    p = _LIB.dj_utf8_lower(data.ctypes.data, doc_off.ctypes.data, n, table.ctypes.data, len(table), out.ctypes.data,
                           out_off.ctypes.data, flagged.ctypes.data)
    return lower_flagged(data, doc_off, out[:max(p, 1)], out_off, flagged)
