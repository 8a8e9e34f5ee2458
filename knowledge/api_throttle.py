"""API throttles that count atomically in the shared cache (accounts.ratelimit).

DRF's own throttles read a request history from the cache, compare and write it back:
concurrent requests on one token all read the same history, so 8 threads made 1,500
requests against a limit of 600/min. These count in fixed windows aligned to the clock
(`<scope>:<ident>:<window start>`) with one atomic increment each, so the n-th request of a
window sees n, whatever process serves it. A fixed window lets a client spend its whole
allowance at the end of one window and again at the start of the next: at most twice the
rate over any sliding period, never more.
"""

from __future__ import annotations

import time

from rest_framework.throttling import AnonRateThrottle, SimpleRateThrottle, UserRateThrottle

from accounts.ratelimit import client_address, counter_hit


class _AtomicWindowMixin(SimpleRateThrottle):
    wait_seconds: float = 0.0

    def get_ident(self, request) -> str:  # type: ignore[no-untyped-def]
        # X-Forwarded-For only from PORTAL_TRUSTED_PROXIES, as for the login lock-out.
        return client_address(request)

    def allow_request(self, request, view) -> bool:  # type: ignore[no-untyped-def]
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        now = time.time()
        start = int(now // self.duration) * self.duration
        count = counter_hit(f"{key}:{start}", window=self.duration + 1)
        if count > self.num_requests:
            self.wait_seconds = start + self.duration - now
            return False
        return True

    def wait(self) -> float:
        return max(1.0, self.wait_seconds)


class AtomicAnonRateThrottle(_AtomicWindowMixin, AnonRateThrottle):
    pass


class AtomicUserRateThrottle(_AtomicWindowMixin, UserRateThrottle):
    pass
