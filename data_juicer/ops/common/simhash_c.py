"""``simhash_numba.space_simhashes`` in a small C library (``c_build``; ctypes), bit-identical: words between
spaces, each window of ``window`` words joined by one space hashed with MD5 (its first 8 bytes,
big-endian), bit i of the SimHash set when more windows have it set than not (simhash-pybind's
``compute``). Used before numba's kernel, so a SimHash run maps no LLVM (~130 MB, ~0.4 CPU-s a process).
Not used (``available()`` is False) without a C compiler, when the library's MD5 heads differ from
``hashlib``'s on a probe, or with ``DJ_SIMHASH_C=0`` / ``DJ_C_KERNELS=0``.
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

#define ROTL(x, c) (((x) << (c)) | ((x) >> (32 - (c))))
#define STEP(f, a, b, c, d, x, s, k) a = b + ROTL(a + f(b, c, d) + (x) + (uint32_t)(k), s)
#define F(b, c, d) (((b) & (c)) | (~(b) & (d)))
#define G(b, c, d) (((d) & (b)) | (~(d) & (c)))
#define H(b, c, d) ((b) ^ (c) ^ (d))
#define I(b, c, d) ((c) ^ ((b) | ~(d)))

/* MD5's compression of one 64-byte block into st (RFC 1321) */
static void compress(uint32_t *st, const uint8_t *blk) {
    uint32_t m[16];
    for (int j = 0; j < 16; j++)
        m[j] = (uint32_t)blk[4 * j] | ((uint32_t)blk[4 * j + 1] << 8) | ((uint32_t)blk[4 * j + 2] << 16)
               | ((uint32_t)blk[4 * j + 3] << 24);
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3];
    STEP(F, a, b, c, d, m[0], 7, 0xD76AA478); STEP(F, d, a, b, c, m[1], 12, 0xE8C7B756);
    STEP(F, c, d, a, b, m[2], 17, 0x242070DB); STEP(F, b, c, d, a, m[3], 22, 0xC1BDCEEE);
    STEP(F, a, b, c, d, m[4], 7, 0xF57C0FAF); STEP(F, d, a, b, c, m[5], 12, 0x4787C62A);
    STEP(F, c, d, a, b, m[6], 17, 0xA8304613); STEP(F, b, c, d, a, m[7], 22, 0xFD469501);
    STEP(F, a, b, c, d, m[8], 7, 0x698098D8); STEP(F, d, a, b, c, m[9], 12, 0x8B44F7AF);
    STEP(F, c, d, a, b, m[10], 17, 0xFFFF5BB1); STEP(F, b, c, d, a, m[11], 22, 0x895CD7BE);
    STEP(F, a, b, c, d, m[12], 7, 0x6B901122); STEP(F, d, a, b, c, m[13], 12, 0xFD987193);
    STEP(F, c, d, a, b, m[14], 17, 0xA679438E); STEP(F, b, c, d, a, m[15], 22, 0x49B40821);
    STEP(G, a, b, c, d, m[1], 5, 0xF61E2562); STEP(G, d, a, b, c, m[6], 9, 0xC040B340);
    STEP(G, c, d, a, b, m[11], 14, 0x265E5A51); STEP(G, b, c, d, a, m[0], 20, 0xE9B6C7AA);
    STEP(G, a, b, c, d, m[5], 5, 0xD62F105D); STEP(G, d, a, b, c, m[10], 9, 0x02441453);
    STEP(G, c, d, a, b, m[15], 14, 0xD8A1E681); STEP(G, b, c, d, a, m[4], 20, 0xE7D3FBC8);
    STEP(G, a, b, c, d, m[9], 5, 0x21E1CDE6); STEP(G, d, a, b, c, m[14], 9, 0xC33707D6);
    STEP(G, c, d, a, b, m[3], 14, 0xF4D50D87); STEP(G, b, c, d, a, m[8], 20, 0x455A14ED);
    STEP(G, a, b, c, d, m[13], 5, 0xA9E3E905); STEP(G, d, a, b, c, m[2], 9, 0xFCEFA3F8);
    STEP(G, c, d, a, b, m[7], 14, 0x676F02D9); STEP(G, b, c, d, a, m[12], 20, 0x8D2A4C8A);
    STEP(H, a, b, c, d, m[5], 4, 0xFFFA3942); STEP(H, d, a, b, c, m[8], 11, 0x8771F681);
    STEP(H, c, d, a, b, m[11], 16, 0x6D9D6122); STEP(H, b, c, d, a, m[14], 23, 0xFDE5380C);
    STEP(H, a, b, c, d, m[1], 4, 0xA4BEEA44); STEP(H, d, a, b, c, m[4], 11, 0x4BDECFA9);
    STEP(H, c, d, a, b, m[7], 16, 0xF6BB4B60); STEP(H, b, c, d, a, m[10], 23, 0xBEBFBC70);
    STEP(H, a, b, c, d, m[13], 4, 0x289B7EC6); STEP(H, d, a, b, c, m[0], 11, 0xEAA127FA);
    STEP(H, c, d, a, b, m[3], 16, 0xD4EF3085); STEP(H, b, c, d, a, m[6], 23, 0x04881D05);
    STEP(H, a, b, c, d, m[9], 4, 0xD9D4D039); STEP(H, d, a, b, c, m[12], 11, 0xE6DB99E5);
    STEP(H, c, d, a, b, m[15], 16, 0x1FA27CF8); STEP(H, b, c, d, a, m[2], 23, 0xC4AC5665);
    STEP(I, a, b, c, d, m[0], 6, 0xF4292244); STEP(I, d, a, b, c, m[7], 10, 0x432AFF97);
    STEP(I, c, d, a, b, m[14], 15, 0xAB9423A7); STEP(I, b, c, d, a, m[5], 21, 0xFC93A039);
    STEP(I, a, b, c, d, m[12], 6, 0x655B59C3); STEP(I, d, a, b, c, m[3], 10, 0x8F0CCC92);
    STEP(I, c, d, a, b, m[10], 15, 0xFFEFF47D); STEP(I, b, c, d, a, m[1], 21, 0x85845DD1);
    STEP(I, a, b, c, d, m[8], 6, 0x6FA87E4F); STEP(I, d, a, b, c, m[15], 10, 0xFE2CE6E0);
    STEP(I, c, d, a, b, m[6], 15, 0xA3014314); STEP(I, b, c, d, a, m[13], 21, 0x4E0811A1);
    STEP(I, a, b, c, d, m[4], 6, 0xF7537E82); STEP(I, d, a, b, c, m[11], 10, 0xBD3AF235);
    STEP(I, c, d, a, b, m[2], 15, 0x2AD7D2BB); STEP(I, b, c, d, a, m[9], 21, 0xEB86D391);
    st[0] += a; st[1] += b; st[2] += c; st[3] += d;
}

static inline uint32_t bswap32(uint32_t x) {
    return (x << 24) | ((x & 0xFF00u) << 8) | ((x >> 8) & 0xFF00u) | (x >> 24);
}

/* simhash_kernels.md5_head: the first 8 bytes of MD5(src[0:size]), big-endian */
static uint64_t md5_head(const uint8_t *src, int64_t size) {
    uint32_t st[4] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u};
    uint8_t blk[128];
    int64_t full = size / 64;
    for (int64_t q = 0; q < full; q++) compress(st, src + 64 * q);
    int64_t rem = size - 64 * full;
    int64_t tail = rem < 56 ? 64 : 128;  /* the rest, 0x80, zeros, the 64-bit bit length (little-endian) */
    memcpy(blk, src + 64 * full, (size_t)rem);
    blk[rem] = 0x80;
    memset(blk + rem + 1, 0, (size_t)(tail - 8 - rem - 1));
    uint64_t bits = (uint64_t)size * 8;
    for (int i = 0; i < 8; i++) blk[tail - 8 + i] = (uint8_t)(bits >> (8 * i));
    compress(st, blk);
    if (tail == 128) compress(st, blk + 64);
    return ((uint64_t)bswap32(st[0]) << 32) | (uint64_t)bswap32(st[1]);
}

/* simhash_kernels.simhashes over space_tokens: words between b' ', windows joined by byte sep */
int dj_simhashes(const uint8_t *buf, const int64_t *doc_off, int64_t n_docs, int64_t window, uint8_t sep,
                 uint64_t *out) {
    int64_t cap = 64, msg_cap = 256;
    int64_t *ts = malloc(sizeof(int64_t) * cap), *te = malloc(sizeof(int64_t) * cap);
    uint8_t *msg = malloc((size_t)msg_cap);
    int rc = -1;
    if (!ts || !te || !msg) goto done;
    for (int64_t d = 0; d < n_docs; d++) {
        int64_t i = doc_off[d], e = doc_off[d + 1];
        int64_t need = (e - i) / 2 + 1;  /* words of a text of this many bytes, at most */
        if (need > cap) {
            cap = 2 * need;
            free(ts); free(te);
            ts = malloc(sizeof(int64_t) * cap); te = malloc(sizeof(int64_t) * cap);
            if (!ts || !te) goto done;
        }
        int64_t nt = 0;
        while (i < e) {
            while (i < e && buf[i] == 32) i++;
            if (i >= e) break;
            int64_t s = i;
            while (i < e && buf[i] != 32) i++;
            ts[nt] = s; te[nt] = i; nt++;
        }
        int64_t ones[64] = {0}, total = 0;
        for (int64_t k = 0; k + window <= nt; k++) {
            int64_t size = window - 1;
            int contiguous = 1;
            for (int64_t t = k; t < k + window; t++) {
                size += te[t] - ts[t];
                if (t > k && ts[t] != te[t - 1] + 1) contiguous = 0;
            }
            uint64_t h;
            if (contiguous && sep == 32) {
                h = md5_head(buf + ts[k], size);
            } else {  /* copied out, one separator apart */
                if (size > msg_cap) {
                    msg_cap = 2 * size;
                    free(msg);
                    msg = malloc((size_t)msg_cap);
                    if (!msg) goto done;
                }
                int64_t p = 0;
                for (int64_t t = k; t < k + window; t++) {
                    if (t > k) msg[p++] = sep;
                    memcpy(msg + p, buf + ts[t], (size_t)(te[t] - ts[t]));
                    p += te[t] - ts[t];
                }
                h = md5_head(msg, size);
            }
            total++;
            for (int b = 0; b < 64; b++) ones[b] += (h >> b) & 1;
        }
        uint64_t r = 0;
        for (int b = 0; b < 64; b++)
            if (2 * ones[b] > total) r |= (uint64_t)1 << b;  /* more windows with the bit set than without */
        out[d] = r;
    }
    rc = 0;
done:
    free(ts); free(te); free(msg);
    return rc;
}
"""

_LIB = None  # the loaded library, False when unusable


def _setup(lib) -> None:
    p, i64 = ctypes.c_void_p, ctypes.c_int64
    lib.dj_simhashes.argtypes = (p, p, i64, i64, ctypes.c_uint8, p)
    lib.dj_simhashes.restype = ctypes.c_int
    _probe(lib)


def _probe(lib) -> None:
    """The library's MD5 heads are hashlib's: every message length from 0 to 200 bytes (one and two
    padding blocks, whole blocks from the text), each a one-word document with window 1 (whose SimHash
    is its one MD5 head); raises otherwise."""
    msgs = [bytes((i * 7 + j) % 200 + 33 for j in range(n)) for i, n in enumerate(range(201))]  # no spaces
    msgs[0] = b"x"
    got = _simhashes(lib, msgs, 1)
    want = [int.from_bytes(hashlib.md5(m).digest()[:8], "big") for m in msgs]
    if got.tolist() != want:
        raise ValueError("MD5 heads differ from hashlib's")


def available() -> bool:
    """The library is built (or builds now), loads and agrees with ``hashlib``; asked once per process."""
    global _LIB
    if _LIB is None:
        _LIB = c_build.load(SOURCE, "simhash", "DJ_SIMHASH_C", _setup) or False
    return bool(_LIB)


def _simhashes(lib, encoded: list[bytes], window: int) -> np.ndarray:
    off = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=off[1:])
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8) if off[-1] else np.zeros(1, dtype=np.uint8)
    out = np.zeros(len(encoded), dtype=np.uint64)
    if len(encoded) and lib.dj_simhashes(buf.ctypes.data, off.ctypes.data, len(encoded), int(window), 32,
                                         out.ctypes.data):
        raise MemoryError("SimHash C kernel: out of memory")
    return out


def space_simhashes(texts: list[str], window: int) -> np.ndarray:
    """uint64 SimHash of each prepared text: words between spaces, windows of ``window`` words joined
    by one space (0 for a text of fewer words); ``available()`` must be True."""
    if window < 1:
        raise ValueError(f"SimHash window must be at least 1 word, not {window}")
    if not available():
        raise RuntimeError("the SimHash C library is unusable here (no C compiler, or switched off)")
    return _simhashes(_LIB, [t.encode("utf-8") for t in texts], window)
