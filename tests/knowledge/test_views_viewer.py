"""The viewer pages without a browser: what they mark, where text sources go, who may open
them (the full matrix is tests/test_html_permission_matrix.py)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.factories import make_chunk, make_citation, make_document, make_run

pytestmark = pytest.mark.django_db

TEXT = "BM25 is the baseline. It saturates repeated terms with k1 = 1.5 in every run. Dense retrieval follows."
# The stored boxes of TEXT's three sentences (offsets into TEXT), on page 4, then 4 and 5.
BOXES = [
    [0, 21, [[4, 72.0, 700.0, 200.0, 712.0]]],
    [22, 77, [[4, 200.0, 700.0, 540.0, 712.0], [4, 72.0, 686.0, 120.0, 698.0]]],
    [78, 103, [[5, 72.0, 740.0, 300.0, 752.0]]],
]


def _login(client, user, password):
    assert client.login(username=user.username, password=password)
    return client


def _config(response) -> dict:
    body = response.content.decode()
    start = body.index('<script id="viewer-config" type="application/json">') + len(
        '<script id="viewer-config" type="application/json">')
    return json.loads(body[start : body.index("</script>", start)])


@pytest.fixture
def pdf_chunk(collection):
    document = make_document(collection=collection, title="Okapi at TREC", media_type="application/pdf", pages=9)
    return make_chunk(document=document, text=TEXT, page_start=4, page_end=5, boxes=BOXES)


def test_a_quote_marks_its_sentence_only_at_its_page(client, pdf_chunk, alice, password):
    url = reverse("knowledge:document_viewer", args=[pdf_chunk.document_id])
    response = _login(client, alice, password).get(url, {"chunk": pdf_chunk.pk, "quote": "saturates repeated terms"})
    assert response.status_code == 200
    config = _config(response)
    [mark] = config["highlights"]
    assert mark["page"] == 4 and mark["rects"] == BOXES[1][2]
    assert mark["text"] == "saturates repeated terms"  # shown as text beside the page
    assert "<blockquote class=\"viewer-quote\"" in response.content.decode()
    assert config["file"] == reverse("knowledge:document_file", args=[pdf_chunk.document_id])
    # Everything the page loads is the portal's own: PDF.js and its worker are static files.
    assert config["lib"].startswith("/static/vendor/pdfjs/") and config["worker"].startswith("/static/vendor/pdfjs/")
    # A quote written with other spaces and hyphens is still found (match key).
    again = _config(client.get(url, {"chunk": pdf_chunk.pk, "quote": "Dense  retrieval\nfol-lows"}))
    assert again["highlights"][0]["page"] == 5 and again["highlights"][0]["rects"] == BOXES[2][2]


def test_a_search_hit_without_a_quote_marks_the_whole_passage(client, pdf_chunk, alice, password):
    url = reverse("knowledge:document_viewer", args=[pdf_chunk.document_id])
    config = _config(_login(client, alice, password).get(url, {"chunk": pdf_chunk.pk}))
    assert config["highlights"][0]["rects"] == [r for _, _, rects in BOXES for r in rects]


def test_without_boxes_the_viewer_opens_at_the_chunk_page_and_says_so(client, collection, alice, password):
    document = make_document(collection=collection, title="Old paper", media_type="application/pdf", pages=9)
    chunk = make_chunk(document=document, text=TEXT, page_start=7, page_end=7)  # ingested before boxes existed
    response = _login(client, alice, password).get(
        reverse("knowledge:document_viewer", args=[document.pk]), {"chunk": chunk.pk, "quote": "BM25"})
    assert _config(response)["highlights"][0] == {**_config(response)["highlights"][0], "page": 7, "rects": []}
    assert "could not be placed on the page" in response.content.decode()


def test_a_chunk_of_another_document_is_ignored(client, pdf_chunk, collection, alice, password):
    other = make_document(collection=collection, title="Other", media_type="application/pdf")
    response = _login(client, alice, password).get(
        reverse("knowledge:document_viewer", args=[other.pk]), {"chunk": pdf_chunk.pk})
    assert response.status_code == 200 and _config(response)["highlights"] == []


def test_a_text_source_opens_in_the_text_reader_at_the_passage(client, collection, alice, password):
    document = make_document(collection=collection, title="Notes", media_type="text/markdown")
    chunk = make_chunk(document=document, text=TEXT)
    response = _login(client, alice, password).get(
        reverse("knowledge:document_viewer", args=[document.pk]), {"chunk": chunk.pk, "quote": "k1 = 1.5"})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("knowledge:document_text", args=[document.pk]))
    assert response["Location"].endswith("#passage") and f"chunk={chunk.pk}" in response["Location"]


def test_the_citation_viewer_lists_every_citation_of_the_run_and_opens_at_its_own(
    client, pdf_chunk, collection, alice, bob, charlie, password
):
    notes = make_document(collection=collection, title="Notes", media_type="text/markdown")
    note_chunk = make_chunk(document=notes, text="A note on fusion.")
    run = make_run(collection=collection, user=alice, answer="One [1]. Two [2]. Three [3].")
    make_citation(run=run, chunk=pdf_chunk, marker=1, quote="BM25 is the baseline.")
    make_citation(run=run, chunk=note_chunk, marker=2, quote="fusion")
    make_citation(run=run, chunk=pdf_chunk, marker=3, quote="Dense retrieval follows.")
    response = _login(client, bob, password).get(reverse("agent:citation_viewer", args=[run.pk, 3]))
    assert response.status_code == 200
    config = _config(response)
    assert [m["label"] for m in config["highlights"]] == ["[1]", "[2]", "[3]"]
    assert config["current"] == 2 and config["highlights"][2]["page"] == 5
    assert [m["here"] for m in config["highlights"]] == [True, False, True]
    # The text source opens in the reader; the PDF ones in this viewer.
    assert config["highlights"][1]["href"].startswith(reverse("knowledge:document_text", args=[notes.pk]))
    assert config["highlights"][0]["href"] == reverse("agent:citation_viewer", args=[run.pk, 1])
    # A text citation's viewer URL sends to the reader; an outsider sees nothing.
    assert client.get(reverse("agent:citation_viewer", args=[run.pk, 2])).status_code == 302
    client.logout()
    assert _login(client, charlie, password).get(reverse("agent:citation_viewer", args=[run.pk, 3])).status_code == 404


def test_the_citation_panel_offers_the_viewer_for_a_pdf(client, pdf_chunk, collection, alice, password):
    run = make_run(collection=collection, user=alice, answer="One [1].")
    make_citation(run=run, chunk=pdf_chunk, marker=1, quote="BM25 is the baseline.")
    body = _login(client, alice, password).get(
        reverse("agent:citation_panel", args=[run.pk, 1]), {"fragment": "1"}).content.decode()
    assert f'href="{reverse("agent:citation_viewer", args=[run.pk, 1])}"' in body
    assert "Show the sentence in the PDF" in body


def test_a_pdf_in_the_document_list_opens_in_the_viewer(client, pdf_chunk, alice, password):
    document = pdf_chunk.document
    body = _login(client, alice, password).get(
        reverse("knowledge:collection_detail", args=[document.collection.slug])).content.decode()
    assert f'href="{reverse("knowledge:document_viewer", args=[document.pk])}">{document.title}</a>' in body
    # Without a passage it opens at page 1 with nothing marked.
    config = _config(client.get(reverse("knowledge:document_viewer", args=[document.pk])))
    assert config["highlights"] == [] and config["pages"] == 9
