"""The web search path in the UI and the API: absent without a provider; with one, the ask
box (default from the user's last choice), the owner's switch, web citations marked as
such, the editor-only save button, and the reviewer's filter."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agent.models import Run
from tests.api_support import WEB_MARKER, enable_web_search

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(api_world, monkeypatch):
    monkeypatch.setattr("knowledge.dispatch.send_task", lambda task, *args: True)
    return api_world


def test_without_a_provider_the_feature_does_not_exist(client, world, settings, monkeypatch):
    settings.WEB_SEARCH_PROVIDER = ""
    owner = world.users["owner"]
    client.force_login(owner)
    page = client.get(reverse("knowledge:collection_detail", args=[world.collection.slug])).content.decode()
    assert "may_search_web" not in page and "Web search" not in page
    assert client.post(reverse("knowledge:collection_web_search", args=[world.collection.slug]),
                       {"enabled": "on"}).status_code == 404
    detail = world.client("owner").get(reverse("api:run_detail", args=[world.run.pk])).json()
    assert "used_web" not in detail and "source_url" not in detail["citations"][0]
    created = world.client("owner").post(reverse("api:run_list"), {
        "collection": world.collection.slug, "question": "Which baseline?", "may_search_web": True}, format="json")
    assert created.status_code == 202 and not Run.objects.get(pk=created.json()["id"]).web_allowed
    from knowledge.api_schema import SchemaApi

    monkeypatch.setattr(SchemaApi, "_built", {})  # built once per process; this one must reflect no provider
    schema = client.get(reverse("api-schema")).content.decode()
    assert "may_search_web" not in schema and "used_web" not in schema and "source_url" not in schema


def test_the_ask_box_defaults_to_the_askers_last_choice(client, world, settings):
    enable_web_search(settings, world)
    client.force_login(world.users["viewer"])
    detail = reverse("knowledge:collection_detail", args=[world.collection.slug])
    assert 'name="may_search_web">' in client.get(detail).content.decode()  # unticked by default
    response = client.post(reverse("agent:collection_ask", args=[world.collection.slug]),
                           {"question": "When did the Eiffel Tower open?", "web_choice": "1", "may_search_web": "on"})
    run = Run.objects.latest("pk")
    assert response.status_code == 302 and run.web_allowed
    assert 'name="may_search_web" checked>' in client.get(detail).content.decode()
    client.post(reverse("agent:collection_ask", args=[world.collection.slug]),
                {"question": "Another?", "web_choice": "1"})
    assert not Run.objects.latest("pk").web_allowed


def test_the_owner_switches_web_search_for_the_collection(client, world, settings):
    enable_web_search(settings, world)
    client.force_login(world.users["owner"])
    client.post(reverse("knowledge:collection_web_search", args=[world.collection.slug]), {"enabled": "on"})
    world.collection.refresh_from_db()
    assert world.collection.web_search_enabled
    client.post(reverse("knowledge:collection_web_search", args=[world.collection.slug]), {})
    world.collection.refresh_from_db()
    assert not world.collection.web_search_enabled


def test_a_run_that_used_the_web_says_so_and_marks_its_web_citations(client, world, settings):
    enable_web_search(settings, world)
    Run.objects.filter(pk=world.run.pk).update(used_web=True, answer="BM25 is the baseline [1]. Tides rise [2].")
    client.force_login(world.users["viewer"])
    page = client.get(reverse("agent:run_detail", args=[world.run.pk])).content.decode()
    assert "Parts of this answer come from the web" in page and "Sentences citing [2]" in page
    assert "[2 web]" in page and "[1 web]" not in page and "https://example.org/tides" in page
    panel = client.get(reverse("agent:citation_panel", args=[world.run.pk, WEB_MARKER])).content.decode()
    assert "From the web, not this collection" in panel and "Add this page to the collection" not in panel
    client.force_login(world.users["editor"])
    panel = client.get(reverse("agent:citation_panel", args=[world.run.pk, WEB_MARKER])).content.decode()
    assert "Add this page to the collection" in panel


def test_an_editor_saves_a_web_page_once(client, world, settings):
    from knowledge.models import Document

    enable_web_search(settings, world)
    client.force_login(world.users["editor"])
    url = reverse("agent:citation_save", args=[world.run.pk, WEB_MARKER])
    client.post(url)
    document = Document.objects.get(collection=world.collection, title="Tides")
    assert document.metadata["source_url"] == "https://example.org/tides" and document.media_type == "text/html"
    assert document.jobs.count() == 1
    client.post(url)
    assert Document.objects.filter(collection=world.collection, sha256=document.sha256).count() == 1
    # A collection citation has no page to save.
    response = world.client("editor").post(reverse("api:citation_save", args=[world.run.pk, 1]))
    assert response.status_code == 400


def test_reviewers_filter_runs_that_used_the_web(client, world, settings):
    enable_web_search(settings, world)
    Run.objects.filter(pk=world.run.pk).update(used_web=True)
    other = Run.objects.create(collection=world.collection, user=world.users["owner"], question="Plain?",
                               config_name="agentic", config_hash="z" * 64, status=Run.Status.DONE, outcome="ANSWER")
    api = world.client("reviewer")
    listed = api.get(reverse("api:run_list") + "?mine=false&used_web=true").json()
    ids = [r["id"] for r in listed["results"]]
    assert world.run.pk in ids and other.pk not in ids and all(r["used_web"] for r in listed["results"])
    client.force_login(world.users["owner"])
    page = client.get(reverse("agent:run_history", args=[world.collection.slug]) + "?web=1").content.decode()
    assert "What baseline is used?" in page and "Plain?" not in page
