"""The chunk ids of BM25's posting lists, compressed for the first stage (issue 19).

At 1M chunks the int32 chunk ids of the posting lists were the largest thing a loaded index
kept resident after the 8-bit dense codes (154-205 of about 750 MB). Here each term's list
is cut into blocks of `BLOCK` postings; a block's first chunk id is stored whole
(`skip_doc`, int32) with where the block's bytes start (`skip_off`), and every other chunk
id as its gap to the one before, in as many bytes (1 to 4, little-endian) as the block's
largest gap needs: the width is (the block's bytes) / (its gaps), so it costs nothing to
store. Most postings belong to common terms, whose gaps are below 256: one byte each
instead of four (about 1.4 bytes a posting on the bench's Zipf corpus). A width per block,
rather than a varint per gap (tried first), keeps the decoding loops free of data-dependent
branches; the first stage still costs about 15-20% more CPU than with int32 ids at 100k
chunks (docs/benchmarks.md). Posting p of term t is still position p of the weights and
impacts (CSR order), so nothing else moves.

    skip_ptr[t] .. skip_ptr[t + 1]   term t's blocks (its postings indptr[t] .. indptr[t + 1],
                                     BLOCK of them a block, the last one shorter)
    skip_doc[b], skip_off[b]         block b's first chunk id, its gaps' first byte in `gaps`

A walk reads a block's gaps in turn (`block`, `read`); a lookup (`seek`) gallops over the
blocks' first chunk ids, then sums gaps within one block. Lossless: the kernels see the same
chunk ids.
"""

from __future__ import annotations

from functools import cache

import numpy as np

BLOCK = 64
SHIFT = 6  # log2(BLOCK)
ONE = np.uint64(1)


def encode(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(skip_ptr, skip_doc, skip_off, gaps) of the CSR posting lists (indptr, indices);
    every list sorted by chunk, without repeats."""
    indptr = np.asarray(indptr, dtype=np.int64)
    blocks = (np.diff(indptr) + BLOCK - 1) >> SHIFT
    skip_ptr = np.zeros(len(indptr), dtype=np.int64)
    np.cumsum(blocks, out=skip_ptr[1:])
    n_blocks = int(skip_ptr[-1])
    skip_doc = np.zeros(n_blocks, dtype=np.int32)
    skip_off = np.zeros(n_blocks + 1, dtype=np.int64)
    indices = np.asarray(indices).view(np.ndarray)
    fill = _encoder()
    fill(indptr, indices, skip_ptr, skip_doc, skip_off, np.zeros(0, dtype=np.uint8))  # sizes only
    gaps = np.empty(int(skip_off[-1]), dtype=np.uint8)
    fill(indptr, indices, skip_ptr, skip_doc, skip_off, gaps)
    return skip_ptr, skip_doc, skip_off, gaps


@cache
def _encoder():
    from numba import njit

    @njit(cache=True, nogil=True)
    def fill(indptr, indices, skip_ptr, skip_doc, skip_off, gaps):
        """With an empty `gaps`: each block's first chunk id and byte offset (skip_off[-1]:
        the total); otherwise also the bytes."""
        write = len(gaps) > 0
        o = 0
        for t in range(len(indptr) - 1):
            for b in range(skip_ptr[t], skip_ptr[t + 1]):
                start = indptr[t] + ((b - skip_ptr[t]) << SHIFT)
                stop = min(start + BLOCK, indptr[t + 1])
                skip_doc[b] = indices[start]
                skip_off[b] = o
                largest = 0
                for p in range(start + 1, stop):
                    largest = max(largest, np.int64(indices[p]) - np.int64(indices[p - 1]))
                width = 1
                while largest >= np.int64(1) << (8 * width):
                    width += 1
                for p in range(start + 1, stop):
                    v = np.int64(indices[p]) - np.int64(indices[p - 1])
                    for _ in range(width):
                        if write:
                            gaps[o] = v & 255
                        v >>= 8
                        o += 1
        skip_off[len(skip_off) - 1] = o

    return fill


@cache
def codec():
    """The compiled (block, read, seek, find) over (indptr, skip_ptr, skip_doc, skip_off, gaps).

    All inlined into their callers: a call of a compiled function passing arrays costs two
    atomic reference-count updates per array, and `block` is called every 64 postings (with
    `push` not inlined either, they took about a quarter of `top`'s time at 100k chunks,
    docs/benchmarks.md)."""
    from numba import njit

    @njit(cache=True, nogil=True, inline="always")
    def width(skip_off, b, n):
        """Bytes a gap of block b (n postings)."""
        return (skip_off[b + 1] - skip_off[b]) // max(n - 1, 1)

    @njit(cache=True, nogil=True, inline="always")
    def block(skip_ptr, skip_doc, skip_off, t, b, lo, hi):
        """(its first position, its size, bytes a gap, its first chunk id, its first gap's
        byte) of block b of term t, whose postings are lo .. hi."""
        p0 = lo + ((b - skip_ptr[t]) << SHIFT)
        n = min(BLOCK, hi - p0)
        return p0, n, width(skip_off, b, n), np.int64(skip_doc[b]), skip_off[b]

    @njit(cache=True, nogil=True, inline="always")
    def read(gaps, o, w):
        """The w-byte gap at byte o."""
        u = np.uint64(o)  # unsigned: no test for a negative index (bm25_kernels)
        if w == 1:
            return np.int64(gaps[u])
        v = np.int64(gaps[u]) | (np.int64(gaps[u + ONE]) << 8)
        for j in range(2, w):
            v |= np.int64(gaps[u + np.uint64(j)]) << (8 * j)
        return v

    @njit(cache=True, nogil=True, inline="always")
    def seek(indptr, skip_ptr, skip_doc, skip_off, gaps, t, lo, d):
        """(p, chunk id at p): the first position p >= lo of term t's list holding chunk d or
        a later one, (indptr[t + 1], -1) if none. Cheap when called with d increasing and lo
        the last answer, as when a sorted list of chunks is looked up in turn."""
        base, end = indptr[t], indptr[t + 1]
        if lo >= end:
            return end, -1
        first = skip_ptr[t] + ((lo - base) >> SHIFT)
        # The first block after `first` starting above d: doubling steps, then bisection.
        a, z = first + 1, skip_ptr[t + 1]
        step = 1
        while a + step < z and skip_doc[a + step - 1] <= d:
            a += step
            step *= 2
        z = min(z, a + step)
        while a < z:
            mid = (a + z) >> 1
            if skip_doc[mid] <= d:
                a = mid + 1
            else:
                z = mid
        b = a - 1
        p = base + ((b - skip_ptr[t]) << SHIFT)
        stop = min(p + BLOCK, end)
        w = width(skip_off, b, stop - p)
        doc = np.int64(skip_doc[b])
        o = skip_off[b]
        while p < lo or doc < d:
            p += 1
            if p == stop:
                return (end, -1) if p == end else (p, np.int64(skip_doc[b + 1]))
            doc += read(gaps, o, w)
            o += w
        return p, doc

    @njit(cache=True, nogil=True, inline="always")
    def find(indptr, skip_ptr, skip_doc, skip_off, gaps, t, d):
        """The position of chunk d in term t's list, or -1."""
        p, doc = seek(indptr, skip_ptr, skip_doc, skip_off, gaps, t, indptr[t], d)
        return p if doc == d else -1

    return block, read, seek, find
