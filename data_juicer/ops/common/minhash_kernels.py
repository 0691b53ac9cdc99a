"""numba kernels of ``minhash_numba`` (imported only when numba is installed and MinHash runs).

Module-level functions, so numba's on-disk cache (``cache=True``) holds across processes.

``sign_ossl`` is ``sign`` with SHA-1's compression function taken from OpenSSL's libcrypto (the
library Python's ``hashlib`` uses; ``SHA1_Transform`` uses the CPU's SHA instructions where
there are some): the padding is done here, the 64-byte blocks go to OpenSSL, about 3x faster
than ``sha1_head``; same values. It is compiled only after ``minhash_numba`` has made that
symbol loadable (an external function is linked by name, so the cache holds for it too).

The kernels release the GIL (``nogil``), so several Python threads can sign batches at once.
"""

import numba as nb
import numpy as np
from numba import types

MASK32 = np.uint64(0xFFFFFFFF)
PRIME = np.uint64((1 << 61) - 1)

@nb.njit(cache=True, inline="always")
def rotl(x, n):
    return ((x << np.uint64(n)) | (x >> np.uint64(32 - n))) & MASK32

@nb.njit(cache=True, nogil=True)
def sha1_head(src, base, size, w):
    """First 4 bytes of SHA-1(src[base:base + size]) as a little-endian uint32 (in a uint64)."""
    total = ((size + 8) // 64 + 1) * 64  # padded: 0x80, zeros, the 64-bit bit length
    h0 = np.uint64(0x67452301)
    h1 = np.uint64(0xEFCDAB89)
    h2 = np.uint64(0x98BADCFE)
    h3 = np.uint64(0x10325476)
    h4 = np.uint64(0xC3D2E1F0)
    for blk in range(0, total, 64):
        for t in range(16):
            i = blk + 4 * t
            if i + 4 <= size:
                j = base + i
                w[t] = ((np.uint64(src[j]) << np.uint64(24)) | (np.uint64(src[j + 1]) << np.uint64(16))
                        | (np.uint64(src[j + 2]) << np.uint64(8)) | np.uint64(src[j + 3]))
            elif i >= total - 8:
                bits = np.uint64(size) * np.uint64(8)
                w[t] = (bits >> np.uint64(32)) & MASK32 if i == total - 8 else bits & MASK32
            elif i > size:
                w[t] = np.uint64(0)
            else:
                v = np.uint64(0)
                for k in range(4):
                    if i + k < size:
                        byte = np.uint64(src[base + i + k])
                    elif i + k == size:
                        byte = np.uint64(0x80)
                    else:
                        byte = np.uint64(0)
                    v = (v << np.uint64(8)) | byte
                w[t] = v
        for t in range(16, 80):
            w[t] = rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1)
        a, b, c, d, e = h0, h1, h2, h3, h4
        for t in range(20):
            tmp = (rotl(a, 5) + ((b & c) | ((b ^ MASK32) & d)) + e + np.uint64(0x5A827999) + w[t]) & MASK32
            e, d, c, b, a = d, c, rotl(b, 30), a, tmp
        for t in range(20, 40):
            tmp = (rotl(a, 5) + (b ^ c ^ d) + e + np.uint64(0x6ED9EBA1) + w[t]) & MASK32
            e, d, c, b, a = d, c, rotl(b, 30), a, tmp
        for t in range(40, 60):
            tmp = (rotl(a, 5) + ((b & c) | (b & d) | (c & d)) + e + np.uint64(0x8F1BBCDC) + w[t]) & MASK32
            e, d, c, b, a = d, c, rotl(b, 30), a, tmp
        for t in range(60, 80):
            tmp = (rotl(a, 5) + (b ^ c ^ d) + e + np.uint64(0xCA62C1D6) + w[t]) & MASK32
            e, d, c, b, a = d, c, rotl(b, 30), a, tmp
        h0 = (h0 + a) & MASK32
        h1 = (h1 + b) & MASK32
        h2 = (h2 + c) & MASK32
        h3 = (h3 + d) & MASK32
        h4 = (h4 + e) & MASK32
    # digest bytes start with h0 big-endian; read little-endian
    return (((h0 & np.uint64(0xFF)) << np.uint64(24)) | ((h0 >> np.uint64(8) & np.uint64(0xFF)) << np.uint64(16))
            | ((h0 >> np.uint64(16) & np.uint64(0xFF)) << np.uint64(8)) | (h0 >> np.uint64(24)))

# void SHA1_Transform(SHA_CTX *c, const unsigned char *data): one 64-byte block into c's h0..h4
sha1_transform = types.ExternalFunction("SHA1_Transform", types.void(types.intp, types.intp))


@nb.njit(cache=True, inline="always")
def sha1_head_ossl(src, base, size, ctx, blk):
    """``sha1_head`` through OpenSSL: first 4 bytes of SHA-1(src[base:base + size]), little-endian.
    ``ctx``: uint32[24] (an ``SHA_CTX``), ``blk``: uint8[128] scratch for the padded tail."""
    ctx[0] = np.uint32(0x67452301)
    ctx[1] = np.uint32(0xEFCDAB89)
    ctx[2] = np.uint32(0x98BADCFE)
    ctx[3] = np.uint32(0x10325476)
    ctx[4] = np.uint32(0xC3D2E1F0)
    cptr = ctx.ctypes.data
    full = size // 64
    sptr = src.ctypes.data + base
    for q in range(full):  # whole blocks straight from the text
        sha1_transform(cptr, sptr + 64 * q)
    rem = size - 64 * full
    tail = 64 if rem < 56 else 128  # the rest, 0x80, zeros, the 64-bit bit length
    start = base + 64 * full
    for i in range(rem):
        blk[i] = src[start + i]
    blk[rem] = 0x80
    for i in range(rem + 1, tail - 8):
        blk[i] = 0
    bits = np.uint64(size) * np.uint64(8)
    for i in range(8):
        blk[tail - 1 - i] = np.uint8((bits >> np.uint64(8 * i)) & np.uint64(0xFF))
    bptr = blk.ctypes.data
    sha1_transform(cptr, bptr)
    if tail == 128:
        sha1_transform(cptr, bptr + 64)
    h0 = np.uint64(ctx[0])
    return (((h0 & np.uint64(0xFF)) << np.uint64(24)) | ((h0 >> np.uint64(8) & np.uint64(0xFF)) << np.uint64(16))
            | ((h0 >> np.uint64(16) & np.uint64(0xFF)) << np.uint64(8)) | (h0 >> np.uint64(24)))


@nb.njit(cache=True, nogil=True)
def space_tokens(buf, doc_off):
    """Token (start, end) byte offsets of words between b' ', and each document's first token."""
    n = len(doc_off) - 1
    count = 0  # first the number of words, so the offsets take no more memory than they need
    for d in range(n):
        prev = 32
        for i in range(doc_off[d], doc_off[d + 1]):
            if buf[i] != 32 and prev == 32:
                count += 1
            prev = buf[i]
    starts = np.empty(count, dtype=np.int64)
    ends = np.empty_like(starts)
    doc_tok = np.empty(n + 1, dtype=np.int64)
    k = 0
    for d in range(n):
        doc_tok[d] = k
        i, e = doc_off[d], doc_off[d + 1]
        while i < e:
            while i < e and buf[i] == 32:
                i += 1
            if i >= e:
                break
            s = i
            while i < e and buf[i] != 32:
                i += 1
            starts[k] = s
            ends[k] = i
            k += 1
    doc_tok[n] = k
    return starts[:k], ends[:k], doc_tok

@nb.njit(cache=True, nogil=True)
def char_tokens(buf, doc_off):
    """Each UTF-8 character as a token."""
    n = len(doc_off) - 1
    count = 0  # characters: bytes that do not continue a UTF-8 sequence
    for d in range(n):
        for i in range(doc_off[d], doc_off[d + 1]):
            if (buf[i] & 0xC0) != 0x80 or i == doc_off[d]:
                count += 1
    starts = np.empty(count, dtype=np.int64)
    ends = np.empty_like(starts)
    doc_tok = np.empty(n + 1, dtype=np.int64)
    k = 0
    for d in range(n):
        doc_tok[d] = k
        i, e = doc_off[d], doc_off[d + 1]
        while i < e:
            s = i
            i += 1
            while i < e and (buf[i] & 0xC0) == 0x80:
                i += 1
            starts[k] = s
            ends[k] = i
            k += 1
    doc_tok[n] = k
    return starts[:k], ends[:k], doc_tok

@nb.njit(cache=True, inline="always")  # inlined into both kernels: no call per shingle
def shingle_bytes(buf, starts, ends, k, window, sep, msg):
    """The bytes of the shingle of tokens ``k .. k + window - 1`` joined by byte ``sep`` (none if < 0),
    as ``(array, start, size, msg)``: a slice of ``buf`` when the tokens lie there as joined, else a copy
    into ``msg`` (grown when too short; the caller keeps the returned one)."""
    size = 0
    contiguous = True
    for t in range(k, k + window):
        size += ends[t] - starts[t]
        if t > k and starts[t] != ends[t - 1] + (1 if sep >= 0 else 0):
            contiguous = False
    if sep >= 0:
        size += window - 1
    if contiguous:
        return buf, starts[k], size, msg
    if size > len(msg):
        msg = np.empty(2 * size, dtype=np.uint8)
    p = 0
    for t in range(k, k + window):
        if sep >= 0 and t > k:
            msg[p] = sep
            p += 1
        for q in range(starts[t], ends[t]):
            msg[p] = buf[q]
            p += 1
    return msg, 0, size, msg


@nb.njit(cache=True, nogil=True)
def sign(buf, starts, ends, doc_tok, window, sep, a, b, out):
    """MinHash of every window of ``window`` tokens joined by byte ``sep`` (none if < 0) into ``out``."""
    num_perm = len(a)
    w = np.empty(80, dtype=np.uint64)
    msg = np.empty(256, dtype=np.uint8)
    for d in range(len(doc_tok) - 1):
        row = out[d]
        for j in range(num_perm):
            row[j] = np.uint32(0xFFFFFFFF)
        t0, t1 = doc_tok[d], doc_tok[d + 1]
        for k in range(t0, t1 - window + 1):
            src, at, size, msg = shingle_bytes(buf, starts, ends, k, window, sep, msg)
            h = sha1_head(src, at, size, w)
            for j in range(num_perm):
                x = h * a[j] + b[j]  # wraps mod 2**64
                y = (x & PRIME) + (x >> np.uint64(61))
                if y >= PRIME:
                    y -= PRIME
                v = np.uint32(y & MASK32)
                row[j] = min(row[j], v)


@nb.njit(cache=True, nogil=True)
def sign_ossl(buf, starts, ends, doc_tok, window, sep, a, b, out):
    """``sign`` with OpenSSL's SHA-1 blocks (``sha1_head_ossl``); same values. A document's shingle
    hashes are collected first, then each permutation is a min-reduction over them (a loop without
    stores, which the compiler vectorises: about 1.8x faster than updating all minima per shingle)."""
    num_perm = len(a)
    ctx = np.zeros(24, dtype=np.uint32)
    blk = np.zeros(128, dtype=np.uint8)
    msg = np.empty(256, dtype=np.uint8)
    most = 0
    for d in range(len(doc_tok) - 1):
        most = max(most, doc_tok[d + 1] - doc_tok[d] - window + 1)
    hs = np.empty(max(most, 1), dtype=np.uint64)
    for d in range(len(doc_tok) - 1):
        t0, t1 = doc_tok[d], doc_tok[d + 1]
        m = 0
        for k in range(t0, t1 - window + 1):
            src, at, size, msg = shingle_bytes(buf, starts, ends, k, window, sep, msg)
            hs[m] = sha1_head_ossl(src, at, size, ctx, blk)
            m += 1
        for j in range(num_perm):
            aj, bj = a[j], b[j]
            low = MASK32  # no shingle: the maximum
            for q in range(m):
                x = hs[q] * aj + bj  # wraps mod 2**64
                y = (x & PRIME) + (x >> np.uint64(61))
                y = y - PRIME if y >= PRIME else y
                low = min(low, y & MASK32)
            out[d, j] = np.uint32(low)


@nb.njit(cache=True, nogil=True)
def utf8_lower(data, doc_off, table):
    """Lower-case UTF-8 documents ``data[doc_off[d]:doc_off[d + 1]]`` code point by code point
    (``table[cp]``: the lower-case code point of ``cp``; code points past the table are their own)
    into a new buffer: ``(out, out_off, flagged)``. A document is flagged (and copied unchanged) when
    it holds U+0130 or U+03A3, whose lower case Python's ``str.lower`` takes from special casing
    (two code points; final sigma by context), or bytes that are not well-formed UTF-8: the caller
    lower-cases those in Python. One pass: a lower-case character is at most 3/2 of its UTF-8 bytes
    (2 -> 3 bytes, e.g. U+023A), so ``out`` is allocated at that bound."""
    n = len(doc_off) - 1
    flagged = np.zeros(n, dtype=np.bool_)
    out_off = np.empty(n + 1, dtype=np.int64)
    total = doc_off[n] - doc_off[0]
    out = np.empty(total + total // 2 + 4, dtype=np.uint8)
    tlen = len(table)
    p = 0
    for d in range(n):
        out_off[d] = p
        i, e = doc_off[d], doc_off[d + 1]
        bad = False
        while i < e:
            c = np.int64(data[i])
            if c < 0x80:
                out[p] = c + 32 if 65 <= c <= 90 else c
                p += 1
                i += 1
                continue
            if c < 0xC2 or c > 0xF4:
                bad = True
                break
            k = 2 if c < 0xE0 else (3 if c < 0xF0 else 4)
            if i + k > e:
                bad = True
                break
            cp = c & (0x1F if k == 2 else (0x0F if k == 3 else 0x07))
            for q in range(1, k):
                x = np.int64(data[i + q])
                if (x & 0xC0) != 0x80:
                    bad = True
                cp = (cp << 6) | (x & 0x3F)
            if (bad or (k == 3 and (cp < 0x800 or 0xD800 <= cp <= 0xDFFF)) or (k == 4 and (cp < 0x10000 or cp > 0x10FFFF))
                    or cp == 0x130 or cp == 0x3A3):
                bad = True
                break
            i += k
            lc = np.int64(table[cp]) if cp < tlen else cp
            if lc < 0x80:
                out[p] = lc
                p += 1
            elif lc < 0x800:
                out[p] = 0xC0 | (lc >> 6)
                out[p + 1] = 0x80 | (lc & 0x3F)
                p += 2
            elif lc < 0x10000:
                out[p] = 0xE0 | (lc >> 12)
                out[p + 1] = 0x80 | ((lc >> 6) & 0x3F)
                out[p + 2] = 0x80 | (lc & 0x3F)
                p += 3
            else:
                out[p] = 0xF0 | (lc >> 18)
                out[p + 1] = 0x80 | ((lc >> 12) & 0x3F)
                out[p + 2] = 0x80 | ((lc >> 6) & 0x3F)
                out[p + 3] = 0x80 | (lc & 0x3F)
                p += 4
        if bad:  # copied unchanged, for the caller
            flagged[d] = True
            p = out_off[d]
            for q in range(doc_off[d], e):
                out[p] = data[q]
                p += 1
    out_off[n] = p
    return out[:max(p, 1)], out_off, flagged


@nb.njit(cache=True, nogil=True)
def sign_space_ossl(buf, doc_off, window, a, b, out):
    """``space_tokens`` + ``sign_ossl`` in one pass per document (same values): each document's words
    (between b' ') go to small per-document arrays, not to offsets for the whole batch, and the
    permutations take the 32-bit shingle hashes with ``a`` split in 32-bit halves, so
    ``h * a = h * a_lo + (h * a_hi << 32)`` (mod 2**64) is two 32 x 32 -> 64-bit products the
    compiler vectorises; the minima are kept in 32 bits."""
    num_perm = len(a)
    ctx = np.zeros(24, dtype=np.uint32)
    blk = np.zeros(128, dtype=np.uint8)
    msg = np.empty(256, dtype=np.uint8)
    a_lo = np.empty(num_perm, dtype=np.uint64)
    a_hi = np.empty(num_perm, dtype=np.uint64)
    for j in range(num_perm):
        a_lo[j] = a[j] & MASK32
        a_hi[j] = a[j] >> np.uint64(32)
    cap = 64
    ts = np.empty(cap, dtype=np.int64)
    te = np.empty(cap, dtype=np.int64)
    hs = np.empty(cap, dtype=np.uint32)
    for d in range(len(doc_off) - 1):
        i, e = doc_off[d], doc_off[d + 1]
        need = (e - i) // 2 + 1  # words of a text of this many bytes, at most
        if need > cap:
            cap = 2 * need
            ts = np.empty(cap, dtype=np.int64)
            te = np.empty(cap, dtype=np.int64)
            hs = np.empty(cap, dtype=np.uint32)
        nt = 0
        while i < e:
            while i < e and buf[i] == 32:
                i += 1
            if i >= e:
                break
            s = i
            while i < e and buf[i] != 32:
                i += 1
            ts[nt] = s
            te[nt] = i
            nt += 1
        m = 0
        for k in range(nt - window + 1):
            # as shingle_bytes, without returning arrays (each array passed back costs reference counting)
            contiguous = True
            for t in range(k + 1, k + window):
                if ts[t] != te[t - 1] + 1:
                    contiguous = False
            if contiguous:  # the words as they lie in the text, one space apart
                hs[m] = np.uint32(sha1_head_ossl(buf, ts[k], te[k + window - 1] - ts[k], ctx, blk))
            else:  # copied out, one space apart
                size = window - 1
                for t in range(k, k + window):
                    size += te[t] - ts[t]
                if size > len(msg):
                    msg = np.empty(2 * size, dtype=np.uint8)
                p = 0
                for t in range(k, k + window):
                    if t > k:
                        msg[p] = 32
                        p += 1
                    for q in range(ts[t], te[t]):
                        msg[p] = buf[q]
                        p += 1
                hs[m] = np.uint32(sha1_head_ossl(msg, 0, size, ctx, blk))
            m += 1
        for j in range(num_perm):
            lo, hi, bj = a_lo[j], a_hi[j], b[j]
            low = np.uint32(0xFFFFFFFF)  # no shingle: the maximum
            for q in range(m):
                h = np.uint64(hs[q])
                x = h * lo + ((h * hi) << np.uint64(32)) + bj  # = h * a + b, wrapping mod 2**64
                y = (x & PRIME) + (x >> np.uint64(61))
                y = y - PRIME if y >= PRIME else y
                low = min(low, np.uint32(y & MASK32))
            out[d, j] = low
