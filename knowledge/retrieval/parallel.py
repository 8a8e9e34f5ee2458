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
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
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


def _forget_pools_after_fork() -> None:
    global _LOCK
    _LOCK = threading.Lock()
    _POOLS.clear()


os.register_at_fork(after_in_child=_forget_pools_after_fork)
