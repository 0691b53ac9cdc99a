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


_M32 = np.uint64(0xFFFFFFFF)


@nb.njit(cache=True, inline="always")
def _rot(x, n, b):
    # 32-bit values in uint64: only the low 32 bits are kept exact (carries and the shifted-out bits go
    # up, never down), so the one mask needed is the one before the rotation; the state is masked at the end
    x &= np.uint64(0xFFFFFFFF)
    return ((x << np.uint64(n)) | (x >> np.uint64(32 - n))) + b


@nb.njit(cache=True, inline="always")
def _f(a, b, c, d, x, s, k):
    return _rot(a + ((b & c) | (~b & d)) + x + np.uint64(k), s, b)


@nb.njit(cache=True, inline="always")
def _g(a, b, c, d, x, s, k):
    return _rot(a + ((d & b) | (~d & c)) + x + np.uint64(k), s, b)


@nb.njit(cache=True, inline="always")
def _h(a, b, c, d, x, s, k):
    return _rot(a + (b ^ c ^ d) + x + np.uint64(k), s, b)


@nb.njit(cache=True, inline="always")
def _i(a, b, c, d, x, s, k):
    return _rot(a + (c ^ (b | ~d)) + x + np.uint64(k), s, b)


@nb.njit(cache=True, inline="always")
def _compress(state, w):
    """MD5's compression of one 64-byte block (``w``: its 16 little-endian 32-bit words) into ``state``
    (4 uint64 holding 32-bit values), the 64 steps of RFC 1321 written out."""
    m0, m1, m2, m3 = np.uint64(w[0]), np.uint64(w[1]), np.uint64(w[2]), np.uint64(w[3])
    m4, m5, m6, m7 = np.uint64(w[4]), np.uint64(w[5]), np.uint64(w[6]), np.uint64(w[7])
    m8, m9, m10, m11 = np.uint64(w[8]), np.uint64(w[9]), np.uint64(w[10]), np.uint64(w[11])
    m12, m13, m14, m15 = np.uint64(w[12]), np.uint64(w[13]), np.uint64(w[14]), np.uint64(w[15])
    a, b, c, d = state[0], state[1], state[2], state[3]
    a = _f(a, b, c, d, m0, 7, 0xD76AA478)
    d = _f(d, a, b, c, m1, 12, 0xE8C7B756)
    c = _f(c, d, a, b, m2, 17, 0x242070DB)
    b = _f(b, c, d, a, m3, 22, 0xC1BDCEEE)
    a = _f(a, b, c, d, m4, 7, 0xF57C0FAF)
    d = _f(d, a, b, c, m5, 12, 0x4787C62A)
    c = _f(c, d, a, b, m6, 17, 0xA8304613)
    b = _f(b, c, d, a, m7, 22, 0xFD469501)
    a = _f(a, b, c, d, m8, 7, 0x698098D8)
    d = _f(d, a, b, c, m9, 12, 0x8B44F7AF)
    c = _f(c, d, a, b, m10, 17, 0xFFFF5BB1)
    b = _f(b, c, d, a, m11, 22, 0x895CD7BE)
    a = _f(a, b, c, d, m12, 7, 0x6B901122)
    d = _f(d, a, b, c, m13, 12, 0xFD987193)
    c = _f(c, d, a, b, m14, 17, 0xA679438E)
    b = _f(b, c, d, a, m15, 22, 0x49B40821)
    a = _g(a, b, c, d, m1, 5, 0xF61E2562)
    d = _g(d, a, b, c, m6, 9, 0xC040B340)
    c = _g(c, d, a, b, m11, 14, 0x265E5A51)
    b = _g(b, c, d, a, m0, 20, 0xE9B6C7AA)
    a = _g(a, b, c, d, m5, 5, 0xD62F105D)
    d = _g(d, a, b, c, m10, 9, 0x02441453)
    c = _g(c, d, a, b, m15, 14, 0xD8A1E681)
    b = _g(b, c, d, a, m4, 20, 0xE7D3FBC8)
    a = _g(a, b, c, d, m9, 5, 0x21E1CDE6)
    d = _g(d, a, b, c, m14, 9, 0xC33707D6)
    c = _g(c, d, a, b, m3, 14, 0xF4D50D87)
    b = _g(b, c, d, a, m8, 20, 0x455A14ED)
    a = _g(a, b, c, d, m13, 5, 0xA9E3E905)
    d = _g(d, a, b, c, m2, 9, 0xFCEFA3F8)
    c = _g(c, d, a, b, m7, 14, 0x676F02D9)
    b = _g(b, c, d, a, m12, 20, 0x8D2A4C8A)
    a = _h(a, b, c, d, m5, 4, 0xFFFA3942)
    d = _h(d, a, b, c, m8, 11, 0x8771F681)
    c = _h(c, d, a, b, m11, 16, 0x6D9D6122)
    b = _h(b, c, d, a, m14, 23, 0xFDE5380C)
    a = _h(a, b, c, d, m1, 4, 0xA4BEEA44)
    d = _h(d, a, b, c, m4, 11, 0x4BDECFA9)
    c = _h(c, d, a, b, m7, 16, 0xF6BB4B60)
    b = _h(b, c, d, a, m10, 23, 0xBEBFBC70)
    a = _h(a, b, c, d, m13, 4, 0x289B7EC6)
    d = _h(d, a, b, c, m0, 11, 0xEAA127FA)
    c = _h(c, d, a, b, m3, 16, 0xD4EF3085)
    b = _h(b, c, d, a, m6, 23, 0x04881D05)
    a = _h(a, b, c, d, m9, 4, 0xD9D4D039)
    d = _h(d, a, b, c, m12, 11, 0xE6DB99E5)
    c = _h(c, d, a, b, m15, 16, 0x1FA27CF8)
    b = _h(b, c, d, a, m2, 23, 0xC4AC5665)
    a = _i(a, b, c, d, m0, 6, 0xF4292244)
    d = _i(d, a, b, c, m7, 10, 0x432AFF97)
    c = _i(c, d, a, b, m14, 15, 0xAB9423A7)
    b = _i(b, c, d, a, m5, 21, 0xFC93A039)
    a = _i(a, b, c, d, m12, 6, 0x655B59C3)
    d = _i(d, a, b, c, m3, 10, 0x8F0CCC92)
    c = _i(c, d, a, b, m10, 15, 0xFFEFF47D)
    b = _i(b, c, d, a, m1, 21, 0x85845DD1)
    a = _i(a, b, c, d, m8, 6, 0x6FA87E4F)
    d = _i(d, a, b, c, m15, 10, 0xFE2CE6E0)
    c = _i(c, d, a, b, m6, 15, 0xA3014314)
    b = _i(b, c, d, a, m13, 21, 0x4E0811A1)
    a = _i(a, b, c, d, m4, 6, 0xF7537E82)
    d = _i(d, a, b, c, m11, 10, 0xBD3AF235)
    c = _i(c, d, a, b, m2, 15, 0x2AD7D2BB)
    b = _i(b, c, d, a, m9, 21, 0xEB86D391)
    state[0] = (state[0] + a) & np.uint64(0xFFFFFFFF)
    state[1] = (state[1] + b) & np.uint64(0xFFFFFFFF)
    state[2] = (state[2] + c) & np.uint64(0xFFFFFFFF)
    state[3] = (state[3] + d) & np.uint64(0xFFFFFFFF)


@nb.njit(cache=True)
def md5_head_fast(src, base, size, block, words, state):
    """``md5_head`` through the written-out compression: ``block`` a uint8[64] buffer, ``words`` its
    uint32 view, ``state`` a uint64[4] buffer."""
    state[0] = np.uint64(0x67452301)
    state[1] = np.uint64(0xEFCDAB89)
    state[2] = np.uint64(0x98BADCFE)
    state[3] = np.uint64(0x10325476)
    total = ((size + 8) // 64 + 1) * 64
    for chunk in range(0, total, 64):
        if chunk + 64 <= size:
            for j in range(64):
                block[j] = src[base + chunk + j]
        else:
            n = max(0, min(64, size - chunk))
            for j in range(n):
                block[j] = src[base + chunk + j]
            for j in range(n, 64):
                block[j] = 0
            if size >= chunk:
                block[size - chunk] = 0x80
            if chunk + 64 == total:
                bits = np.uint64(size) * np.uint64(8)
                for j in range(8):
                    block[56 + j] = np.uint8((bits >> np.uint64(8 * j)) & np.uint64(0xFF))
        _compress(state, words)
    a = np.uint32(state[0])
    b = np.uint32(state[1])
    return (np.uint64(_bswap32(a)) << np.uint64(32)) | np.uint64(_bswap32(b))


@nb.njit(cache=True)
def simhashes(buf, starts, ends, doc_tok, window, sep, S, K, G, out):
    """SimHash of each document over its windows of ``window`` tokens joined by byte ``sep``."""
    block = np.zeros(64, dtype=np.uint8)
    words = block.view(np.uint32)
    state = np.zeros(4, dtype=np.uint64)
    msg = np.empty(256, dtype=np.uint8)
    ones = np.empty(64, dtype=np.int64)
    for d in range(len(doc_tok) - 1):
        ones[:] = 0
        t0, t1 = doc_tok[d], doc_tok[d + 1]
        total = 0
        for k in range(t0, t1 - window + 1):
            size = window - 1
            contiguous = True
            for t in range(k, k + window):
                size += ends[t] - starts[t]
                if t > k and starts[t] != ends[t - 1] + 1:
                    contiguous = False
            if contiguous:
                h = md5_head_fast(buf, starts[k], size, block, words, state)
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
                h = md5_head_fast(msg, 0, size, block, words, state)
            total += 1
            for i in range(64):
                ones[i] += (h >> np.uint64(i)) & np.uint64(1)
        r = np.uint64(0)
        for i in range(64):
            if 2 * ones[i] > total:  # more shingles with the bit set than without
                r |= np.uint64(1) << np.uint64(i)
        out[d] = r
