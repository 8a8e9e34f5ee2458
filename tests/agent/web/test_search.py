"""The SearxNG provider against a fake SearxNG, the settings that turn the feature on, and
the start-up refusal of the tests-only loopback opening."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent.web.search import SearxngProvider, WebSearchError, provider_from_settings
from tests.fake_web import FakeWeb, Page, article

ROOT = Path(__file__).resolve().parents[3]


def test_it_reads_searxng_json_results_best_first_and_capped():
    with FakeWeb() as web:
        web.add("/a", Page(body=article("Tidal power", ["tidal power plants"]), title="Tidal power"))
        web.add("/b", Page(body=article("Tides", ["tidal power moon tides"]), title="Tides"))
        web.add("/c", Page(body=article("Other", ["nothing here"]), title="Other"))
        provider = SearxngProvider(web.base_url, timeout=2, user_agent="GroundedBot/test")
        results = provider.search("tidal power moon", limit=1)
        assert [r.url for r in results] == [web.url("/b")] and results[0].title == "Tides"
        assert web.searches == ["tidal power moon"]
        path, headers = web.requests[0]
        assert "format=json" in path and headers["User-Agent"] == "GroundedBot/test"


def test_it_raises_a_search_error_when_searxng_does_not_answer_json():
    with FakeWeb() as web:
        web.pages["/search"] = Page(body=b"<html>", status=200)
        provider = SearxngProvider(web.base_url + "/nowhere", timeout=2, user_agent="x")
        with pytest.raises(WebSearchError):
            provider.search("q", limit=3)


def test_no_provider_means_no_feature(settings):
    settings.WEB_SEARCH_PROVIDER = ""
    assert provider_from_settings() is None
    settings.WEB_SEARCH_PROVIDER, settings.WEB_SEARCH_URL = "searxng", "http://searxng:8080"
    assert isinstance(provider_from_settings(), SearxngProvider)


def _settings_import(**env: str) -> subprocess.CompletedProcess:
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith("PORTAL_")}
    return subprocess.run([sys.executable, "-c", "import portal.settings"], cwd=ROOT, capture_output=True,
                          text=True, env={**clean, "PORTAL_SECRET_KEY": "x" * 50, **env}, timeout=60)


def test_production_refuses_the_tests_only_loopback_setting_at_start_up():
    refused = _settings_import(PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS="1", PORTAL_DEBUG="0")
    assert refused.returncode != 0 and "for tests only" in refused.stderr
    assert _settings_import(PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS="1", PORTAL_DEBUG="1").returncode == 0
    missing_url = _settings_import(PORTAL_WEB_SEARCH_PROVIDER="searxng", PORTAL_DEBUG="1")
    assert missing_url.returncode != 0 and "PORTAL_WEB_SEARCH_URL" in missing_url.stderr


def test_the_system_check_refuses_the_loopback_setting_outside_debug(settings):
    from agent.web.checks import web_search_loopback_check

    settings.WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS, settings.DEBUG = True, False
    assert [e.id for e in web_search_loopback_check()] == ["agent.E101"]
    settings.DEBUG = True
    assert web_search_loopback_check() == []
