"""numba kernels for SimHash: MD5 of each shingle (its first 8 bytes, big-endian) and the bit
votes of simhash-pybind's ``compute`` (bit i set when more shingle hashes have it set than not).
Imported only through ``simhash_numba`` when numba is installed."""

import numba as nb
import numpy as np

_S = np.array([7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4, dtype=np.uint32)
_K = np.array([int(abs(np.sin(i + 1)) * 2**32) & 0xFFFFFFFF for i in range(64)], dtype=np.uint32)
_G = np.array([i if i < 16 else (5 * i + 1) % 16 if i < 32 else (3 * i + 5) % 16 if i < 48 else (7 * i) % 16
               for i in range(64)], dtype=np.int64)


@nb.njit(cache=True, inline="always")
def _rotl32(x, n):
    return ((x << n) | (x >> (np.uint32(32) - n))) & np.uint32(0xFFFFFFFF)


@nb.njit(cache=True, inline="always")
def _bswap32(x):
    return (((x & np.uint32(0xFF)) << np.uint32(24)) | ((x & np.uint32(0xFF00)) << np.uint32(8))
            | ((x >> np.uint32(8)) & np.uint32(0xFF00)) | (x >> np.uint32(24)))


@nb.njit(cache=True)
def md5_head(src, base, size, block, S, K, G):
    """First 8 bytes of MD5(src[base:base+size]) as a big-endian unsigned 64-bit number."""
    a0 = np.uint32(0x67452301)
    b0 = np.uint32(0xEFCDAB89)
    c0 = np.uint32(0x98BADCFE)
    d0 = np.uint32(0x10325476)
    total = ((size + 8) // 64 + 1) * 64
    bits = np.uint64(size) * np.uint64(8)
    m = np.empty(16, dtype=np.uint32)
    for chunk in range(0, total, 64):
        for j in range(64):  # the message, 0x80, zeros, then the bit length (little-endian)
            p = chunk + j
            if p < size:
                block[j] = src[base + p]
            elif p == size:
                block[j] = 0x80
            elif p >= total - 8:
                block[j] = np.uint8((bits >> np.uint64(8 * (p - (total - 8)))) & np.uint64(0xFF))
            else:
                block[j] = 0
        for j in range(16):
            m[j] = (np.uint32(block[4 * j]) | (np.uint32(block[4 * j + 1]) << np.uint32(8))
                    | (np.uint32(block[4 * j + 2]) << np.uint32(16)) | (np.uint32(block[4 * j + 3]) << np.uint32(24)))
        a, b, c, d = a0, b0, c0, d0
        for i in range(64):
            if i < 16:
                f = (b & c) | (~b & d)
            elif i < 32:
                f = (d & b) | (~d & c)
            elif i < 48:
                f = b ^ c ^ d
            else:
                f = c ^ (b | ~d)
            f = (f + a + K[i] + m[G[i]]) & np.uint32(0xFFFFFFFF)
            a = d
            d = c
            c = b
            b = (b + _rotl32(f, S[i])) & np.uint32(0xFFFFFFFF)
        a0 = (a0 + a) & np.uint32(0xFFFFFFFF)
        b0 = (b0 + b) & np.uint32(0xFFFFFFFF)
        c0 = (c0 + c) & np.uint32(0xFFFFFFFF)
        d0 = (d0 + d) & np.uint32(0xFFFFFFFF)
    return (np.uint64(_bswap32(a0)) << np.uint64(32)) | np.uint64(_bswap32(b0))


@nb.njit(cache=True)
def simhashes(buf, starts, ends, doc_tok, window, sep, S, K, G, out):
    """SimHash of each document over its windows of ``window`` tokens joined by byte ``sep``."""
    block = np.empty(64, dtype=np.uint8)
    msg = np.empty(256, dtype=np.uint8)
    votes = np.empty(64, dtype=np.int64)
    for d in range(len(doc_tok) - 1):
        votes[:] = 0
        t0, t1 = doc_tok[d], doc_tok[d + 1]
        for k in range(t0, t1 - window + 1):
            size = window - 1
            contiguous = True
            for t in range(k, k + window):
                size += ends[t] - starts[t]
                if t > k and starts[t] != ends[t - 1] + 1:
                    contiguous = False
            if contiguous:
                h = md5_head(buf, starts[k], size, block, S, K, G)
            else:
                if size > len(msg):
                    msg = np.empty(2 * size, dtype=np.uint8)
                p = 0
                for t in range(k, k + window):
                    if t > k:
                        msg[p] = sep
                        p += 1
                    for q in range(starts[t], ends[t]):
                        msg[p] = buf[q]
                        p += 1
                h = md5_head(msg, 0, size, block, S, K, G)
            for i in range(64):
                if (h >> np.uint64(i)) & np.uint64(1):
                    votes[i] += 1
                else:
                    votes[i] -= 1
        r = np.uint64(0)
        for i in range(64):
            if votes[i] > 0:
                r |= np.uint64(1) << np.uint64(i)
        out[d] = r
