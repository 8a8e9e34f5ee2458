"""A fake web on 127.0.0.1 for tests and benchmarks: a SearxNG JSON endpoint plus pages.

One threaded HTTP server holds both: GET /search?q=...&format=json answers like SearxNG
(results are the pages whose words best match the query, scored by shared words), and
every other path serves a registered `Page` (status, headers, body, an optional trickle
delay). Every request is recorded, so a test can assert that nothing was sent.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_WORD = re.compile(r"[a-z0-9]{3,}")


@dataclass
class Page:
    body: bytes = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    title: str = ""
    # Seconds between pieces of the body (a slow page), and the piece size.
    trickle: float = 0.0
    piece: int = 16
    searchable: bool = True  # listed in /search results


def article(title: str, paragraphs: list[str]) -> bytes:
    """Article-like HTML: navigation, a header, the text in <article>, a footer."""
    body = "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
        "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav>"
        f"<article><h1>{title}</h1>{body}</article>"
        "<footer>Copyright the authors. All rights reserved.</footer></body></html>"
    ).encode()


class FakeWeb:
    def __init__(self) -> None:
        self.pages: dict[str, Page] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.searches: list[str] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def add(self, path: str, page: Page) -> str:
        self.pages[path] = page
        return self.url(path)

    def _search(self, query: str) -> list[dict]:
        words = set(_WORD.findall(query.lower()))
        scored = []
        for path, page in self.pages.items():
            if not page.searchable:
                continue
            text = page.body.decode("utf-8", "replace").lower()
            score = len(words & set(_WORD.findall(text)))
            if score:
                scored.append((score, path, page))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [{"url": self.url(p), "title": page.title or p, "content": ""} for _, p, page in scored]

    def __enter__(self) -> FakeWeb:
        web = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                web.requests.append((self.path, dict(self.headers)))
                parts = urllib.parse.urlsplit(self.path)
                if parts.path == "/search":
                    query = urllib.parse.parse_qs(parts.query).get("q", [""])[0]
                    web.searches.append(query)
                    data = json.dumps({"query": query, "results": web._search(query)}).encode()
                    self._send(Page(body=data, content_type="application/json"))
                    return
                page = web.pages.get(self.path) or web.pages.get(parts.path)
                self._send(page or Page(body=b"not found", status=404, content_type="text/plain"))

            def _send(self, page: Page) -> None:
                self.send_response(page.status)
                self.send_header("Content-Type", page.content_type)
                for k, v in page.headers.items():
                    self.send_header(k, v)
                if not page.trickle:
                    self.send_header("Content-Length", str(len(page.body)))
                self.end_headers()
                try:
                    if page.trickle:
                        for i in range(0, len(page.body), page.piece):
                            self.wfile.write(page.body[i:i + page.piece])
                            self.wfile.flush()
                            time.sleep(page.trickle)
                    else:
                        self.wfile.write(page.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
