"""Atomic counters in the shared cache, and the client's real address.

The login lock-out and the API throttle both count requests in a time window. A count that
is read, compared and written back is a race: 60 concurrent guesses all read "0 so far" and
all get through. `counter_hit` adds one and returns the new total in one atomic step, so
the n-th concurrent request sees n:

- Redis (`PORTAL_REDIS_URL`): `SET key 0 EX window NX` and `INCRBY` in one MULTI/EXEC, atomic
  across every web process.
- The file cache (the laptop default): read and write under a file lock beside the cache
  files, atomic across the processes sharing that folder.
- Any other backend (the tests' in-memory cache): under a lock of this process.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.cache import BaseCache, caches
from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest

_PROCESS_LOCK = threading.Lock()


def _backend() -> BaseCache:
    # The backend object itself: `django.core.cache.cache` is a proxy, never an instance of it.
    return caches["default"]


@contextmanager
def _counter_lock(cache: BaseCache) -> Iterator[None]:
    with _PROCESS_LOCK:
        if isinstance(cache, FileBasedCache):
            from filelock import FileLock

            directory = Path(cache._dir)
            directory.mkdir(parents=True, exist_ok=True)
            with FileLock(str(directory / "counters.lock"), timeout=10):
                yield
        else:
            yield


def counter_hit(key: str, *, window: float, amount: int = 1) -> int:
    """Add `amount` to the counter `key` and return its new value, atomically.

    The first hit starts a window of `window` seconds; later hits keep its expiry, so the
    count falls back to zero `window` seconds after it started.
    """
    cache = _backend()
    if isinstance(cache, RedisCache):
        # Django's RedisCache.incr checks existence then increments: a key expiring between
        # the two would come back without a TTL. One MULTI/EXEC has no such gap.
        full_key = cache.make_and_validate_key(key)
        client = cache._cache.get_client(full_key, write=True)
        pipe = client.pipeline(transaction=True)
        pipe.set(full_key, 0, ex=max(1, int(window + 0.999)), nx=True)
        pipe.incrby(full_key, amount)
        return int(pipe.execute()[1])
    with _counter_lock(cache):
        now = time.time()
        count, expires = _read(cache, key, now)
        if expires is None:
            expires = now + window
        count += amount
        # The expiry travels with the value: a plain set() would restart the window.
        cache.set(key, (count, expires), timeout=max(0.001, expires - now))
        return count


def counter_reset(key: str) -> None:
    _backend().delete(key)


def _read(cache: BaseCache, key: str, now: float) -> tuple[int, float | None]:
    value = cache.get(key)
    if isinstance(value, tuple) and len(value) == 2 and value[1] > now:
        return int(value[0]), float(value[1])
    return 0, None


def client_address(request: HttpRequest) -> str:
    """The address of the client, looking through proxies listed in `TRUSTED_PROXIES` only.

    X-Forwarded-For is read from the right: each trusted proxy appends the address it saw,
    so the first entry from the right that is not a trusted proxy is the client. Entries
    further left were written by the client and prove nothing. Without a trusted peer the
    header is ignored, so a client cannot choose its own address.
    """
    peer = request.META.get("REMOTE_ADDR", "")
    networks = _trusted_networks()
    if not networks or not _in(peer, networks):
        return peer
    forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    for address in reversed(forwarded):
        if not _in(address, networks):
            return address
    return forwarded[0] if forwarded else peer


def _trusted_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(item, strict=False) for item in getattr(settings, "TRUSTED_PROXIES", [])]


def _in(address: str, networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in networks)
