"""Fixtures for the web search path: a fake SearxNG + article pages on 127.0.0.1, and the
settings that turn the feature on against it (the tests-only loopback opening included)."""

from __future__ import annotations

import pytest

from tests.fake_web import FakeWeb, Page, article

EIFFEL = article("The Eiffel Tower", [
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris.",
    "The Eiffel Tower opened to the public on 31 March 1889, after two years of construction.",
    "The Eiffel Tower is 330 metres tall and was designed by the engineering company of Gustave Eiffel.",
])
TIDES = article("Tides", [
    "Tides are the rise and fall of sea levels caused by the gravity of the Moon and the Sun.",
    "Most coasts see two high tides and two low tides every lunar day.",
])
KB_TEXT = """# BM25 ranking

BM25 is a bag-of-words ranking function used by search engines.
BM25 uses the parameters k1 and b, usually set to k1 = 1.5 and b = 0.75.
The parameter b controls how strongly the document length normalises the term frequency.
"""


@pytest.fixture
def fake_web():
    with FakeWeb() as web:
        web.add("/wiki/eiffel-tower", Page(body=EIFFEL, title="The Eiffel Tower"))
        web.add("/wiki/tides", Page(body=TIDES, title="Tides"))
        yield web


@pytest.fixture
def web_settings(settings, fake_web):
    settings.WEB_SEARCH_PROVIDER = "searxng"
    settings.WEB_SEARCH_URL = fake_web.base_url
    settings.WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS = True
    settings.WEB_SEARCH_FETCH_TIMEOUT_SECONDS = 5.0
    settings.WEB_SEARCH_PAGES = 2
    return settings


@pytest.fixture
def kb_collection(collection, alice):
    """`collection` (alice owner, bob viewer) with a small Markdown page on BM25, ingested, web search on."""
    from tests.conftest import ingest_markdown

    ingest_markdown(collection, alice, "bm25.md", KB_TEXT)
    collection.refresh_from_db()
    collection.web_search_enabled = True
    collection.save(update_fields=["web_search_enabled"])
    return collection
