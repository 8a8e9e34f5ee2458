"""Fetching a page a search engine chose, without letting it reach the server's own network.

The web path makes the server fetch URLs a third party picked, the textbook SSRF set-up.
Every hop (the first URL and each redirect) goes through the same checks:

1. Only http and https; no user:password@ in the URL; a host written as a number in a
   non-standard form (2130706433, 0177.0.0.1, 0x7f.1) is refused before any lookup.
2. The host is resolved once; if any address it resolves to is not public (loopback,
   private, link-local with the cloud metadata service, shared, reserved, multicast,
   IPv4 written inside IPv6), the URL is refused and nothing is sent.
3. The connection goes to the address that was checked (pinned, with the real host
   name in Host and TLS SNI), so a second DNS answer cannot swap in 127.0.0.1; and the
   address the socket is actually connected to is checked again before the request is
   written (DNS rebinding, or anything in between that re-routes the connection).
4. One wall-clock deadline per page covers connect, headers and body; the body is read
   piece by piece and refused past the byte cap (or at once when Content-Length says so).
5. Only text/html, application/xhtml+xml and text/plain; no compressed bodies (a small
   gzip can expand to gigabytes); no cookies, credentials or Referer are ever sent;
   the User-Agent names the portal.

The address check uses the standard library's `ipaddress` (is_global and friends, kept
current with IANA's special-purpose registries). `advocate`, the one Python SSRF library
in the registry lists, has not been released since 2020 and wraps `requests`, which the
portal does not use; see docs/web-search.md.
"""

from __future__ import annotations

import http.client
import ipaddress
import re
import socket
import ssl
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

ACCEPTED_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
# Digits, hex and dots only, but not a canonical address: an IP in a non-standard form.
_NUMERIC_HOST = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]*))*$", re.IGNORECASE)
_TEST_LOOPBACK = ipaddress.ip_address("127.0.0.1")


class FetchRefused(Exception):
    """The page was not fetched; `reason` says why in words a reader of the run page follows."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason


@dataclass(frozen=True)
class FetchPolicy:
    max_bytes: int = 2_000_000
    timeout: float = 10.0
    max_redirects: int = 3
    user_agent: str = "GroundedBot/1.0"
    # Tests only (PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS): 127.0.0.1 itself, nothing else.
    allow_test_loopback: bool = False

    @classmethod
    def from_settings(cls) -> FetchPolicy:
        from django.conf import settings

        return cls(max_bytes=settings.WEB_SEARCH_FETCH_MAX_BYTES, timeout=settings.WEB_SEARCH_FETCH_TIMEOUT_SECONDS,
                   max_redirects=settings.WEB_SEARCH_FETCH_MAX_REDIRECTS, user_agent=settings.WEB_SEARCH_USER_AGENT,
                   allow_test_loopback=settings.WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS)


@dataclass(frozen=True)
class FetchedPage:
    url: str  # as asked
    final_url: str  # after redirects
    content_type: str
    charset: str
    body: bytes
    address: str  # the peer the body came from
    fetched_at: datetime
    redirects: list[str] = field(default_factory=list)

    def text(self) -> str:
        try:
            return self.body.decode(self.charset or "utf-8", errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


Resolver = Callable[[str, int], list[str]]


def system_resolve(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def address_refusal(ip: str, *, allow_test_loopback: bool = False) -> str | None:
    """Why the server must not connect to `ip`, or None when it is a public address."""
    try:
        addr = ipaddress.ip_address(ip.split("%", 1)[0])
    except ValueError:
        return f"{ip!r} is not an IP address"
    if isinstance(addr, ipaddress.IPv6Address):
        embedded = addr.ipv4_mapped or addr.sixtofour or (addr.teredo[1] if addr.teredo else None)
        if embedded is not None:
            why = address_refusal(str(embedded), allow_test_loopback=False)
            return f"{ip} carries the IPv4 address {embedded} ({why or 'IPv4 inside IPv6 is not accepted'})"
    if allow_test_loopback and addr == _TEST_LOOPBACK:
        return None
    if addr.is_loopback:
        return f"{ip} is a loopback address (this server itself)"
    if addr.is_link_local:
        return f"{ip} is a link-local address (where cloud metadata services live)"
    if addr.is_unspecified or addr.is_multicast:
        return f"{ip} is not a unicast address"
    if addr.is_private:
        return f"{ip} is a private-network address"
    if not addr.is_global or addr.is_reserved:
        return f"{ip} is not a public internet address"
    return None


def _open_socket(address: str, port: int, timeout: float) -> socket.socket:
    # A seam for tests: the connection goes to the checked address, never to a fresh lookup.
    return socket.create_connection((address, port), timeout=timeout)


class _Pinned:
    """Connects to a checked address; checks the connected peer before a byte is written."""

    def _pinned_socket(self) -> socket.socket:
        sock = _open_socket(self._address, self.port, self.timeout)  # type: ignore[attr-defined]
        peer = str(sock.getpeername()[0])
        why = address_refusal(peer, allow_test_loopback=self._allow)  # type: ignore[attr-defined]
        if why is not None or peer.split("%", 1)[0] != self._address.split("%", 1)[0]:  # type: ignore[attr-defined]
            sock.close()
            raise FetchRefused(self.host, f"connected to {peer}, not the checked address "  # type: ignore[attr-defined]
                               f"{self._address}: {why or 'the address changed'}")  # type: ignore[attr-defined]
        return sock


class _PinnedHTTP(_Pinned, http.client.HTTPConnection):
    def __init__(self, host: str, port: int, *, address: str, timeout: float, allow: bool) -> None:
        super().__init__(host, port, timeout=timeout)
        self._address, self._allow = address, allow

    def connect(self) -> None:
        self.sock = self._pinned_socket()


class _PinnedHTTPS(_Pinned, http.client.HTTPSConnection):
    def __init__(self, host: str, port: int, *, address: str, timeout: float, allow: bool) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address, self._allow = address, allow

    def connect(self) -> None:
        self.sock = self._context.wrap_socket(self._pinned_socket(), server_hostname=self.host)


class SafeFetcher:
    def __init__(self, policy: FetchPolicy, *, resolve: Resolver = system_resolve) -> None:
        self.policy = policy
        self.resolve = resolve

    def _check_url(self, url: str) -> tuple[urllib.parse.SplitResult, str, int, str]:
        """(parts, host, port, address to connect to), or FetchRefused before any lookup or request."""
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        except ValueError as exc:
            raise FetchRefused(url, f"not a valid URL ({exc})") from None
        if parts.scheme.lower() not in ("http", "https"):
            raise FetchRefused(url, f"only http and https are fetched, not {parts.scheme or 'a bare path'}")
        if parts.username is not None or parts.password is not None:
            raise FetchRefused(url, "the URL carries a user name or password")
        host = (parts.hostname or "").rstrip(".")
        if not host:
            raise FetchRefused(url, "the URL has no host")
        try:
            literal = ipaddress.ip_address(host)
        except ValueError:
            literal = None
            if _NUMERIC_HOST.match(host):
                raise FetchRefused(url, f"the host {host!r} is an IP address in a non-standard form") from None
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = self.resolve(host, port)
            except OSError as exc:
                raise FetchRefused(url, f"the host {host} does not resolve ({exc})") from None
        if not addresses:
            raise FetchRefused(url, f"the host {host} does not resolve")
        for address in addresses:
            why = address_refusal(address, allow_test_loopback=self.policy.allow_test_loopback)
            if why is not None:
                raise FetchRefused(url, f"{host} resolves to {why}")
        return parts, host, port, addresses[0]

    def fetch(self, url: str) -> FetchedPage:
        """The page at `url` within the policy's caps, or FetchRefused saying why not."""
        policy = self.policy
        deadline = time.monotonic() + policy.timeout
        redirects: list[str] = []
        current = url
        while True:
            parts, host, port, address = self._check_url(current)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FetchRefused(url, f"no complete answer within {policy.timeout:g} s")
            cls = _PinnedHTTPS if parts.scheme.lower() == "https" else _PinnedHTTP
            conn = cls(host, port, address=address, timeout=remaining, allow=policy.allow_test_loopback)
            try:
                path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
                conn.request("GET", path, headers={
                    "User-Agent": policy.user_agent, "Accept": ", ".join(ACCEPTED_TYPES),
                    "Accept-Encoding": "identity", "Connection": "close",
                })
                response = conn.getresponse()
                if response.status in (301, 302, 303, 307, 308):
                    location = response.getheader("Location", "")
                    if not location:
                        raise FetchRefused(url, f"HTTP {response.status} without a Location")
                    if len(redirects) >= policy.max_redirects:
                        raise FetchRefused(url, f"more than {policy.max_redirects} redirects")
                    current = urllib.parse.urljoin(current, location)
                    redirects.append(current)
                    continue
                if response.status != 200:
                    raise FetchRefused(url, f"the server answered HTTP {response.status}")
                return self._read(url, current, response, conn, address, deadline, redirects)
            except FetchRefused as exc:
                if exc.url != url:  # raised deep inside with the host only
                    raise FetchRefused(url, exc.reason) from None
                raise
            except TimeoutError:
                raise FetchRefused(url, f"no complete answer within {policy.timeout:g} s") from None
            except (OSError, http.client.HTTPException, ValueError) as exc:
                # ValueError: what http.client raises on a header or host it cannot encode.
                raise FetchRefused(url, f"the connection failed ({exc.__class__.__name__}: {exc})") from None
            finally:
                conn.close()

    def _read(self, url: str, final_url: str, response: http.client.HTTPResponse, conn: http.client.HTTPConnection,
              address: str, deadline: float, redirects: list[str]) -> FetchedPage:
        policy = self.policy
        raw_type = response.getheader("Content-Type", "")
        media_type = raw_type.split(";", 1)[0].strip().lower()
        if media_type not in ACCEPTED_TYPES:
            raise FetchRefused(url, f"the content type {media_type or 'is missing and'} is not HTML or text")
        encoding = (response.getheader("Content-Encoding", "") or "identity").strip().lower()
        if encoding != "identity":
            raise FetchRefused(url, f"the body is {encoding}-compressed, which is not accepted")
        declared = response.getheader("Content-Length")
        if declared and declared.isdigit() and int(declared) > policy.max_bytes:
            raise FetchRefused(url, f"the page is {int(declared)} bytes, over the {policy.max_bytes}-byte cap")
        body = bytearray()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise FetchRefused(url, f"no complete answer within {policy.timeout:g} s")
            if conn.sock is not None:
                conn.sock.settimeout(remaining)
            piece = response.read1(65536)
            if not piece:
                break
            body += piece
            if len(body) > policy.max_bytes:
                raise FetchRefused(url, f"the page is over the {policy.max_bytes}-byte cap")
        match = re.search(r"charset=([\w.-]+)", raw_type, re.IGNORECASE)
        return FetchedPage(url=url, final_url=final_url, content_type=media_type,
                           charset=match.group(1) if match else "", body=bytes(body), address=address,
                           fetched_at=datetime.now(UTC), redirects=redirects)
