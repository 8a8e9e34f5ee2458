"""Document year and tags: inferred at ingestion, set by editors (API and page), filtering search."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from knowledge import services
from knowledge.ingest import job_run
from knowledge.models import Document, ExtractedText, IngestJob
from tests.conftest import ingest_markdown, upload_paper

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_documents(collection, alice):
    """Two ready documents about the same thing, told apart only by their year and tags."""
    # Titles come from the first heading; the file names differ by year (the title filter matches them too).
    old = ingest_markdown(collection, alice, "fusion-2009.md", "# Rank fusion, the classic\n\nReciprocal rank fusion combines rankings.\n")
    new = ingest_markdown(collection, alice, "fusion-2023.md", "# Rank fusion, revisited\n\nReciprocal rank fusion merges rankings.\n")
    services.document_update(document=old, year=2009, tags=["classic"])
    services.document_update(document=new, year="2023", tags="hybrid, survey")
    return old, new


def _api(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_ingesting_an_arxiv_paper_reads_its_identifier_and_year(ready_collection):
    document = Document.objects.get(collection=ready_collection)
    assert document.metadata["arxiv_id"] == "1904.08375"
    assert document.metadata["arxiv_category"] == "cs.IR"
    assert document.metadata["year"] == 2019


def test_the_same_paper_in_another_collection_gets_its_metadata_from_the_parse_cache(ready_collection, alice):
    other = services.collection_create(name="Second", user=alice)
    document = upload_paper(other, alice, "1904.08375v2_doc2query")
    job_run(job_id=IngestJob.objects.filter(document=document).latest("pk").pk)
    document.refresh_from_db()
    assert ExtractedText.objects.count() == 1, "parsed once"
    assert (document.metadata["year"], document.metadata["arxiv_category"]) == (2019, "cs.IR")


def test_ingesting_again_keeps_the_year_an_editor_set(ready_collection, alice):
    document = Document.objects.get(collection=ready_collection)
    services.document_update(document=document, year=2020)
    job = services.document_reingest(document=document, user=alice)
    job_run(job_id=job.pk)
    document.refresh_from_db()
    assert IngestJob.objects.get(pk=job.pk).status == IngestJob.Status.DONE
    assert document.metadata["year"] == 2020
    assert document.metadata["arxiv_category"] == "cs.IR", "what the editor did not set is still inferred"


def test_an_editor_sets_year_and_tags_over_the_api(two_documents, alice, bob):
    old, _ = two_documents
    url = reverse("api:document_detail", kwargs={"pk": old.pk})
    response = _api(alice).patch(url, {"year": 2010, "tags": ["classic", "rrf"], "title": "  Fusion,  2010 "},
                                 format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["title"], body["year"], body["tags"]) == ("Fusion, 2010", 2010, ["classic", "rrf"])
    # The title is marked edited too, so ingesting the file again keeps it (not the printed title).
    assert body["metadata"]["edited"] == ["tags", "title", "year"]
    cleared = _api(alice).patch(url, {"year": None, "tags": []}, format="json").json()
    assert (cleared["year"], cleared["tags"]) == (None, [])
    # A viewer may read but not change.
    assert _api(bob).patch(url, {"year": 2011}, format="json").status_code == 403


@pytest.mark.parametrize("payload, field", [
    ({"year": "last year"}, "year"),
    ({"year": 12}, "year"),
    ({"tags": ["x" * 51]}, "tags"),
    ({"title": ""}, "title"),
])
def test_the_api_says_which_value_is_wrong_and_changes_nothing(two_documents, alice, payload, field):
    old, _ = two_documents
    response = _api(alice).patch(reverse("api:document_detail", kwargs={"pk": old.pk}), payload, format="json")
    assert response.status_code == 400
    assert field in str(response.json()["error"])
    old.refresh_from_db()
    assert (old.title, old.metadata["year"], old.metadata["tags"]) == ("Rank fusion, the classic", 2009, ["classic"])


def test_search_filters_by_year_tag_and_title(two_documents, alice):
    old, new = two_documents
    url = reverse("api:search", kwargs={"slug": old.collection.slug})

    def found(**params) -> set[int]:
        response = _api(alice).get(url, {"q": "reciprocal rank fusion", **params})
        assert response.status_code == 200, response.json()
        return {hit["document_id"] for hit in response.json()["results"]}

    assert found() == {old.pk, new.pk}
    assert found(year="2009") == {old.pk}
    assert found(year="2020-2024") == {new.pk}
    assert found(tag="SURVEY") == {new.pk}
    assert found(title="2009") == {old.pk}
    assert found(year="1990-2000") == set()
    response = _api(alice).get(url, {"q": "fusion", "year": "2024-2020"})
    assert response.status_code == 400
    assert "ends before it starts" in str(response.json()["error"])


def test_an_editor_sets_the_details_on_the_collection_page(client, two_documents, alice, bob, password):
    old, _ = two_documents
    client.login(username="alice", password=password)
    page = client.get(reverse("knowledge:collection_detail", kwargs={"slug": old.collection.slug}))
    assert b"Edit details" in page.content and b"classic" in page.content
    url = reverse("knowledge:document_update", kwargs={"pk": old.pk})
    response = client.post(url, {"title": "Fusion (classic)", "year": "2008", "tags": "classic, rrf"}, follow=True)
    assert "are saved" in response.content.decode()
    old.refresh_from_db()
    assert (old.title, old.metadata["year"], old.metadata["tags"]) == ("Fusion (classic)", 2008, ["classic", "rrf"])
    response = client.post(url, {"title": "Fusion (classic)", "year": "soon", "tags": ""}, follow=True)
    assert "whole number such as 2021" in response.content.decode()
    old.refresh_from_db()
    assert old.metadata["year"] == 2008, "a rejected form changes nothing"
    client.logout()
    client.login(username="bob", password=password)
    assert client.post(url, {"title": "x"}).status_code == 403
    page = client.get(reverse("knowledge:collection_detail", kwargs={"slug": old.collection.slug}))
    assert b"Edit details" not in page.content


def test_quick_search_filters_and_explains_a_bad_year(client, two_documents, alice, password):
    old, new = two_documents
    client.login(username="alice", password=password)
    url = reverse("knowledge:collection_search", kwargs={"slug": old.collection.slug})
    page = client.get(url, {"q": "reciprocal rank fusion", "tag": "hybrid"}).content.decode()
    assert new.title in page
    assert old.title not in page
    page = client.get(url, {"q": "fusion", "year": "twenty", "fragment": "1"}).content.decode()
    assert "Give a year as 2021 or a range as 2019-2021" in page
