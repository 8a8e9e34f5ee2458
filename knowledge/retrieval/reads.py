"""A few rows of a memory-mapped array, read with pread instead of through the mapping.

An index is loaded memory-mapped (knowledge.retrieval.store), and a search reads only a few
rows of its large exact files: the float32 vectors of the dense candidates, the float64
BM25 weights of the chunks rescored at the end. Touching them through the mapping costs
more memory than it reads: each page fault maps the 64 KB around the page from the page
cache (Linux fault-around, which MADV_RANDOM does not turn off), and those pages count in
the process's resident memory. After a few hundred searches the whole file was resident
(966 MB at 300k chunks, docs/benchmarks.md). `take` reads the same bytes with pread into a
fresh array: the page cache (shared by every process, reclaimable) holds them, this
process's resident memory does not.

The reads are made by a compiled loop (numba, calling libc's pread), one call per run of
consecutive rows: a dense search may rescore a thousand scattered rows (near-duplicates
within the first stage's error bound), and a Python loop over them took 3-8 ms where the
compiled one takes under 1 (docs/benchmarks.md). The same holds for the few ids of a
search's hits (knowledge.retrieval.engine), read here rather than through the mapping for
the same reason as the rows: at 1M chunks, fault-around over a few hundred searches made
the whole chunk and document id files resident (16 MB) for the ten ids each search reads.
"""

from __future__ import annotations

import mmap
import os
from functools import cache

import numpy as np


def _mapped_file(array: np.ndarray) -> tuple[str | os.PathLike, int] | None:
    """(file, byte offset of array's first element) when `array` is a C-contiguous view of
    a file mapping made by np.memmap / np.load(mmap_mode="r") (scipy keeps a plain ndarray
    view of it), else None."""
    if not array.flags.c_contiguous:
        return None
    mapped = array
    while isinstance(mapped, np.ndarray) and not isinstance(mapped, np.memmap):
        mapped = mapped.base
    if not isinstance(mapped, np.memmap) or getattr(mapped, "_mmap", None) is None or not mapped.filename:
        return None
    # The mapping starts at the file offset rounded down to the allocation granularity; a
    # view's place in it is taken from pointers (a memmap view keeps its parent's `offset`).
    start = mapped.offset - mapped.offset % mmap.ALLOCATIONGRANULARITY
    first = np.frombuffer(mapped._mmap, dtype=np.uint8).ctypes.data
    return mapped.filename, start + array.ctypes.data - first


def take(array: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """array[positions] (rows along the first axis; `positions` sorted ascending), read with
    pread when `array` is memory-mapped from a file, by plain indexing otherwise."""
    positions = np.ascontiguousarray(positions, dtype=np.int64)
    where = _mapped_file(array) if len(positions) else None
    if where is None:
        return np.asarray(array[positions])
    path, base = where
    row_bytes = array.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))
    out = np.empty((len(positions), *array.shape[1:]), dtype=array.dtype)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # the file is gone (an old version deleted): the mapping still holds it
        return np.asarray(array[positions])
    try:
        done = _reader()(fd, out.reshape(-1).view(np.uint8), positions, base, row_bytes)
    finally:
        os.close(fd)
    if done < len(positions):
        raise OSError(f"short read of row {positions[done]} of a mapped index file {path}")
    return out


@cache
def _reader():
    """The compiled `read_rows(fd, out, positions, base, row_bytes)` (made on first use,
    cached on disk): rows `positions` (ascending) of the file's array starting at byte `base`
    into `out`, one pread per run of consecutive rows; returns how many rows were read (short
    of all of them at a failed or empty read)."""
    from numba import njit, types

    pread = types.ExternalFunction("pread", types.intp(types.intc, types.voidptr, types.uintp, types.int64))

    @njit(cache=True, nogil=True)
    def read_rows(fd, out, positions, base, row_bytes):
        address = out.ctypes.data
        n = len(positions)
        i = 0
        while i < n:
            j = i + 1
            while j < n and positions[j] == positions[j - 1] + 1:
                j += 1
            want = (j - i) * row_bytes
            got = 0
            while got < want:
                r = pread(fd, address + i * row_bytes + got, want - got, base + positions[i] * row_bytes + got)
                if r <= 0:
                    return i
                got += r
            i = j
        return n

    return read_rows
