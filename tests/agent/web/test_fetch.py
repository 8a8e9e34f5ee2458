"""SSRF: the fetcher refuses every address that is not the public internet, with a reason,
and sends nothing where it must not (tests/fake_web.py records every request)."""

from __future__ import annotations

import pytest

from agent.web import fetch
from agent.web.fetch import FetchPolicy, FetchRefused, SafeFetcher, address_refusal
from tests.fake_web import FakeWeb, Page, article

PUBLIC = "93.184.216.34"


@pytest.fixture
def web():
    with FakeWeb() as server:
        server.add("/article", Page(body=article("Tides", ["The tide rises twice a day."]), title="Tides"))
        yield server


@pytest.fixture
def no_connect(monkeypatch):
    """Fails the test if the fetcher opens any connection."""

    def _refuse(*args, **kwargs):
        raise AssertionError(f"a connection was opened: {args}")

    monkeypatch.setattr(fetch, "_open_socket", _refuse)


def _fetcher(*, test_loopback=False, resolve=None, **policy) -> SafeFetcher:
    kwargs = {"resolve": resolve} if resolve else {}
    return SafeFetcher(FetchPolicy(allow_test_loopback=test_loopback, **policy), **kwargs)


def _refused(fetcher: SafeFetcher, url: str) -> str:
    with pytest.raises(FetchRefused) as info:
        fetcher.fetch(url)
    return info.value.reason


@pytest.mark.parametrize(("ip", "words"), [
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"),
    ("100.64.0.1", "not a public"), ("127.0.0.1", "loopback"), ("127.9.9.9", "loopback"),
    ("169.254.169.254", "link-local"), ("0.0.0.0", "not a unicast"), ("224.0.0.1", "not a unicast"),
    ("::1", "loopback"), ("fe80::1", "link-local"), ("fd00:ec2::254", "private"),
    ("::ffff:127.0.0.1", "IPv4 address 127.0.0.1"), ("::ffff:10.0.0.1", "IPv4 address 10.0.0.1"),
    ("2002:7f00:1::", "IPv4 address 127.0.0.1"), ("192.0.2.1", "192.0.2.1 is"),
])
def test_it_refuses_every_non_public_address(ip, words):
    assert words in (address_refusal(ip) or ""), address_refusal(ip)


@pytest.mark.parametrize("ip", [PUBLIC, "8.8.8.8", "2606:4700:4700::1111"])
def test_it_accepts_public_addresses(ip):
    assert address_refusal(ip) is None


def test_the_test_setting_opens_127_0_0_1_only():
    assert address_refusal("127.0.0.1", allow_test_loopback=True) is None
    assert address_refusal("127.0.0.2", allow_test_loopback=True)
    assert address_refusal("::ffff:127.0.0.1", allow_test_loopback=True)
    assert address_refusal("10.0.0.1", allow_test_loopback=True)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/x", "gopher://example.org/",
                                 "javascript:alert(1)"])
def test_it_fetches_http_and_https_only(url, no_connect):
    assert "only http and https" in _refused(_fetcher(resolve=lambda h, p: [PUBLIC]), url)


def test_it_refuses_credentials_in_the_url(no_connect):
    reason = _refused(_fetcher(resolve=lambda h, p: [PUBLIC]), "http://user:secret@example.org/")
    assert "user name or password" in reason


def test_it_refuses_loopback_without_the_test_setting(web):
    reason = _refused(_fetcher(), web.url("/article"))
    assert "loopback" in reason
    assert web.requests == []


def test_it_fetches_with_the_test_setting_and_sends_no_cookie_and_a_clear_user_agent(web):
    page = _fetcher(test_loopback=True, user_agent="GroundedBot/1.0 (+http://portal)").fetch(web.url("/article"))
    assert b"The tide rises" in page.body
    assert page.content_type == "text/html" and page.address == "127.0.0.1"
    (_, headers), = web.requests
    assert headers["User-Agent"] == "GroundedBot/1.0 (+http://portal)"
    assert not {"Cookie", "Authorization", "Referer"} & set(headers)


@pytest.mark.parametrize("ip", ["10.0.0.7", "192.168.0.10", "169.254.169.254", "::ffff:127.0.0.1", "fd00::1"])
def test_it_refuses_a_host_that_resolves_to_a_non_public_address(ip, no_connect):
    reason = _refused(_fetcher(resolve=lambda h, p: [ip]), "http://intranet.example.org/")
    assert f"intranet.example.org resolves to {ip}" in reason


def test_it_refuses_when_any_resolved_address_is_not_public(no_connect):
    reason = _refused(_fetcher(resolve=lambda h, p: [PUBLIC, "10.0.0.1"]), "http://mixed.example.org/")
    assert "10.0.0.1" in reason


@pytest.mark.parametrize("host", ["2130706433", "0177.0.0.1", "0x7f.0.0.1", "127.1", "0x7f000001", "017700000001"])
def test_it_refuses_ip_addresses_in_decimal_octal_or_hex_form_even_with_the_test_setting(host, web, no_connect):
    reason = _refused(_fetcher(test_loopback=True), f"http://{host}:{web.base_url.rsplit(':', 1)[1]}/article")
    assert "non-standard form" in reason
    assert web.requests == []


@pytest.mark.parametrize("url", ["http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "http://[::1]/",
                                 "http://169.254.169.254/latest/meta-data/"])
def test_it_refuses_literal_mapped_loopback_and_metadata_addresses(url, no_connect):
    assert _refused(_fetcher(test_loopback=True), url)


@pytest.mark.parametrize("target", ["http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/admin",
                                    "http://[::ffff:127.0.0.1]/", "file:///etc/passwd"])
def test_it_refuses_a_redirect_to_a_non_public_address(web, target):
    web.add("/jump", Page(status=302, headers={"Location": target}))
    reason = _refused(_fetcher(test_loopback=True), web.url("/jump"))
    assert reason
    # Only the redirecting page was asked; nothing went to the target.
    assert [path for path, _ in web.requests] == ["/jump"]


def test_it_follows_a_redirect_to_a_public_page(web):
    web.add("/moved", Page(status=301, headers={"Location": "/article"}))
    page = _fetcher(test_loopback=True).fetch(web.url("/moved"))
    assert page.final_url == web.url("/article") and page.redirects == [web.url("/article")]


def test_it_stops_after_the_redirect_limit(web):
    web.add("/loop", Page(status=302, headers={"Location": "/loop"}))
    assert "more than 2 redirects" in _refused(_fetcher(test_loopback=True, max_redirects=2), web.url("/loop"))
    assert len(web.requests) == 3


def test_it_defeats_dns_rebinding_by_pinning_and_checking_the_connected_peer(web, monkeypatch):
    """The name resolves to a public address when checked; the connection lands on 127.0.0.1
    (a rebinding answer, or a router in between): refused before the request is written."""
    lookups = []

    def resolve(host, port):
        lookups.append(host)
        return [PUBLIC] if len(lookups) == 1 else ["127.0.0.1"]

    port = int(web.base_url.rsplit(":", 1)[1])
    opened = []

    def rebound(address, _port, timeout):
        import socket

        opened.append(address)
        return socket.create_connection(("127.0.0.1", port), timeout=timeout)

    monkeypatch.setattr(fetch, "_open_socket", rebound)
    reason = _refused(_fetcher(resolve=resolve), "http://rebind.example.org/article")
    assert "connected to 127.0.0.1, not the checked address" in reason
    # One lookup, and the connection was asked for the checked address, not a new lookup's.
    assert lookups == ["rebind.example.org"] and opened == [PUBLIC]
    assert web.requests == []


def test_it_refuses_a_page_over_the_byte_cap_by_its_length_header(web):
    web.add("/big", Page(body=b"<p>" + b"x" * 5000 + b"</p>"))
    assert "over the 1024-byte cap" in _refused(_fetcher(test_loopback=True, max_bytes=1024), web.url("/big"))


def test_it_refuses_a_page_over_the_byte_cap_without_a_length_header(web):
    web.add("/stream", Page(body=b"y" * 4000, trickle=0.0001, piece=1000))
    reason = _refused(_fetcher(test_loopback=True, max_bytes=1024), web.url("/stream"))
    assert "over the 1024-byte cap" in reason


def test_it_refuses_a_slow_page_at_the_time_cap(web):
    import time

    web.add("/slow", Page(body=b"<p>" + b"z" * 200 + b"</p>", trickle=0.05, piece=4))
    started = time.monotonic()
    assert "no complete answer within 0.3 s" in _refused(_fetcher(test_loopback=True, timeout=0.3), web.url("/slow"))
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize("content_type", ["application/pdf", "image/png", "application/octet-stream", ""])
def test_it_refuses_content_that_is_not_html_or_text(web, content_type):
    web.add("/bin", Page(body=b"%PDF-1.7", content_type=content_type))
    assert "not HTML or text" in _refused(_fetcher(test_loopback=True), web.url("/bin"))


def test_it_refuses_a_compressed_body(web):
    web.add("/gz", Page(body=b"\x1f\x8b", headers={"Content-Encoding": "gzip"}))
    assert "gzip-compressed" in _refused(_fetcher(test_loopback=True), web.url("/gz"))


def test_it_reports_an_error_status(web):
    assert "HTTP 404" in _refused(_fetcher(test_loopback=True), web.url("/missing"))
