"""A shared thread pool for large searches.

An exact dense search over 1M x 384 float32 reads 1.5 GB per query and is bound by memory
bandwidth; one core cannot draw all of it (docs/benchmarks.md, "Retrieval"). numpy's
matrix-vector product and scipy's sparse product release the GIL, so plain threads, each
scoring a block of rows, use every core, and BM25 runs beside the dense blocks. Unlike
OpenBLAS's own threads (one per process in the portal, portal/settings.py), these sleep on
a queue when idle instead of spinning, so they cost nothing under concurrent load.

A pool made before a fork is useless in the child (its threads do not exist there), so a
forked process (a Celery prefork child) starts with no pool and makes its own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

_LOCK = threading.Lock()
_POOLS: dict[int, ThreadPoolExecutor] = {}


def pool(threads: int) -> ThreadPoolExecutor:
    """The process-wide pool with `threads` workers (made on first use)."""
    with _LOCK:
        executor = _POOLS.get(threads)
        if executor is None:
            executor = _POOLS[threads] = ThreadPoolExecutor(threads, thread_name_prefix="search")
        return executor


def submit(threads: int, fn: Callable[..., T], *args: object) -> Future[T]:
    return pool(threads).submit(fn, *args)


# Working arrays of the searches' kernels, by kind: each set lent to one search at a time.
_SHELF: dict[str, list[tuple]] = {}


@contextmanager
def borrowed(kind: str, n: int, make: Callable[[int], tuple]) -> Iterator[tuple]:
    """A set of working arrays of `kind`, each cut to length n, lent for the block.

    Made by `make(n)` when no set of at least n is free. Sets are shared by every thread of
    the process rather than kept per thread: the search pool runs a search's BM25 on any of
    its threads, and one set per thread kept two or three copies of arrays as long as the
    index (13 MB each at 1M chunks) resident where one search at a time needs one
    (docs/benchmarks.md). A kernel that leaves its arrays in the state the next borrower
    expects (e.g. zeroed) returns them; after an error the set is dropped, not lent again.
    """
    with _LOCK:
        free = _SHELF.setdefault(kind, [])
        arrays = free.pop() if free else None
    if arrays is None or len(arrays[0]) < n:
        arrays = make(n)
    yield tuple(a[:n] for a in arrays)
    with _LOCK:
        _SHELF.setdefault(kind, []).append(arrays)


def _forget_pools_after_fork() -> None:
    global _LOCK
    _LOCK = threading.Lock()
    _POOLS.clear()


os.register_at_fork(after_in_child=_forget_pools_after_fork)
