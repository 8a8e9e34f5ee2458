"""Web search providers: one small interface, SearxNG's JSON API behind it.

The provider's own address is the operator's choice (PORTAL_WEB_SEARCH_URL, often a
container on the private network), so it is called directly; the pages it returns are
fetched only through agent.web.fetch, which refuses private addresses.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


class WebSearchError(Exception):
    """The provider did not answer usefully (down, timed out, not JSON)."""


@dataclass(frozen=True)
class WebResult:
    url: str
    title: str = ""
    snippet: str = ""


@runtime_checkable
class WebSearchProvider(Protocol):
    name: str

    def search(self, query: str, *, limit: int) -> list[WebResult]:
        """At most `limit` http(s) results for the query, best first."""
        ...


class SearxngProvider:
    """SearxNG: GET {base}/search?q=...&format=json (the instance must enable the json format)."""

    name = "searxng"

    def __init__(self, base_url: str, *, timeout: float, user_agent: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.user_agent = user_agent

    def search(self, query: str, *, limit: int) -> list[WebResult]:
        url = f"{self.base_url}/search?" + urllib.parse.urlencode({"q": query, "format": "json"})
        request = urllib.request.Request(url, headers={"User-Agent": self.user_agent, "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                data = json.loads(response.read(5_000_000))
        except (OSError, urllib.error.URLError, ValueError) as exc:
            raise WebSearchError(f"SearxNG at {self.base_url} did not answer: {exc}") from exc
        results: list[WebResult] = []
        seen: set[str] = set()
        for item in data.get("results", []) if isinstance(data, dict) else []:
            link = str(item.get("url", "")) if isinstance(item, dict) else ""
            if not link.lower().startswith(("http://", "https://")) or link in seen:
                continue
            seen.add(link)
            results.append(WebResult(url=link, title=str(item.get("title", ""))[:300],
                                     snippet=str(item.get("content", ""))[:500]))
            if len(results) >= limit:
                break
        return results


def provider_from_settings() -> WebSearchProvider | None:
    """The configured provider, or None: then web search does not exist anywhere."""
    from django.conf import settings

    if settings.WEB_SEARCH_PROVIDER == "searxng":
        return SearxngProvider(settings.WEB_SEARCH_URL, timeout=settings.WEB_SEARCH_TIMEOUT_SECONDS,
                               user_agent=settings.WEB_SEARCH_USER_AGENT)
    return None


def web_search_available() -> bool:
    from django.conf import settings

    return bool(settings.WEB_SEARCH_PROVIDER)
