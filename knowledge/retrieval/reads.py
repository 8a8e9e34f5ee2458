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
"""

from __future__ import annotations

import mmap
import os

import numpy as np

# Rows this close together (in bytes) are read in one call rather than one call each.
_GAP_BYTES = 4_096


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
    positions = np.asarray(positions, dtype=np.int64)
    where = _mapped_file(array) if len(positions) else None
    if where is None:
        return np.asarray(array[positions])
    path, base = where
    row_bytes = array.itemsize * int(np.prod(array.shape[1:], dtype=np.int64))
    out = np.empty((len(positions), *array.shape[1:]), dtype=array.dtype)
    flat = out.reshape(-1).view(np.uint8)
    # Runs of rows close enough together to read in one call.
    breaks = np.flatnonzero(np.diff(positions) * row_bytes > _GAP_BYTES) + 1
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # the file is gone (an old version deleted): the mapping still holds it
        return np.asarray(array[positions])
    try:
        done = 0
        for run in np.split(positions, breaks):
            lo, hi = int(run[0]), int(run[-1]) + 1
            if hi - lo == len(run):  # consecutive rows: straight into the output
                view = flat[done * row_bytes : (done + len(run)) * row_bytes]
                _read_exactly(fd, view, base + lo * row_bytes)
            else:
                span = np.empty((hi - lo) * row_bytes, dtype=np.uint8)
                _read_exactly(fd, span, base + lo * row_bytes)
                rows = span.reshape(hi - lo, row_bytes)[run - lo]
                flat[done * row_bytes : (done + len(run)) * row_bytes] = rows.reshape(-1)
            done += len(run)
    finally:
        os.close(fd)
    return out


def _read_exactly(fd: int, buffer: np.ndarray, offset: int) -> None:
    view = memoryview(buffer)
    while len(view):
        n = os.preadv(fd, [view], offset)
        if n <= 0:
            raise OSError(f"short read at byte {offset} of a mapped index file")
        view, offset = view[n:], offset + n
