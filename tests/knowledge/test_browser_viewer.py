"""The PDF viewer in real Chromium, on real papers: it opens at the cited page and its
highlight lies over the quoted sentence in PDF.js's text layer; it pages and jumps between
citations by keyboard; it fits a phone; and it asks nothing of any server but the portal."""

from __future__ import annotations

import hashlib
import shutil
from functools import lru_cache
from pathlib import Path

import pytest

from tests.agent.test_browser_ui import (  # noqa: F401
    browser_type_launch_args,
    console_errors,
    log_in,
    low_contrast,
    screenshot,
)
from tests.conftest import paper

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Three papers with different layouts: two columns (ACL), one column (NeurIPS), arXiv preprint.
PAPERS = ["1904.08375v2_doc2query", "1908.10084v1_sentence_bert", "1706.03762v5_attention_is_all_you_need"]

# The current highlight's boxes against PDF.js's text layer, letters compared folded (letters
# and digits only). A span "of the quote" has 30 letters or more (a phrase, not a name that may recur), all inside the quote; a span
# "touching" it shares 10 letters in a row with it (a text run may hold the end of the sentence
# before, or start the next one).
OVERLAP_JS = """
(quote) => {
  const fold = (s) => s.normalize("NFKC").toLowerCase().replace(/[^\\p{L}\\p{N}]+/gu, "");
  const key = fold(quote);
  const touches = (text) => {
    if (text.length < 10) { return text.length >= 2 && key.includes(text); }
    for (let i = 0; i + 10 <= text.length; i++) { if (key.includes(text.slice(i, i + 10))) { return true; } }
    return false;
  };
  const rect = (el) => el.getBoundingClientRect();
  const meets = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  const marks = [...document.querySelectorAll(".pdf-mark.current")].map(rect);
  const all = [...document.querySelectorAll(".textLayer span")].filter((s) => !s.children.length);
  const spans = all.filter((s) => fold(s.textContent).length >= 30 && key.includes(fold(s.textContent)));
  const touching = all.filter((s) => touches(fold(s.textContent)));
  return {
    marks: marks.length,
    quoteSpans: spans.length,
    quoteSpansUnderMark: spans.filter((s) => marks.some((m) => meets(rect(s), m))).length,
    marksOverQuote: marks.filter((m) => touching.some((s) => meets(rect(s), m))).length,
  };
}
"""


@lru_cache(maxsize=4)
def _ingested(stem: str):
    """A paper's chunks and sentence boxes as ingestion makes them, computed once per session."""
    from knowledge import extract
    from knowledge.chunking import chunk_pages
    from knowledge.pdf_boxes import chunk_boxes

    path = paper(stem)
    extracted = extract.extract_pdf(path)
    specs = chunk_pages(extracted.pages)
    return path, extracted.page_count, specs, chunk_boxes(path, specs)


def _store_paper(collection, stem: str):
    """The paper as a READY document with its chunks and boxes (no embedding: the viewer does
    not search)."""
    from django.conf import settings

    from knowledge.models import Chunk
    from tests.factories import make_document

    path, pages, specs, boxes = _ingested(stem)
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    relative = f"files/{sha[:2]}/{sha}"
    target = Path(settings.MEDIA_ROOT) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)
    document = make_document(collection=collection, title=stem, original_name=path.name, file=relative, sha256=sha,
                             media_type="application/pdf", pages=pages)
    Chunk.objects.bulk_create([
        Chunk(document=document, ordinal=s.ordinal, text=s.text, section_title=s.section_title,
              page_start=s.page_start, page_end=s.page_end, char_start=s.char_start, char_end=s.char_end,
              token_count=s.token_count, is_reference=s.is_reference, embedding_model="test", boxes=b)
        for s, b in zip(specs, boxes, strict=True)
    ])
    return document


def _quotable(document, first_page: int = 2):
    """A prose sentence on `first_page` or later, placed on one page: (chunk, sentence, page)."""
    from knowledge.text import is_answer_eligible

    for chunk in document.chunks.filter(page_start__gte=first_page, is_reference=False).order_by("ordinal"):
        for start, end, rects in chunk.boxes:
            sentence = chunk.text[start:end]
            pages = {r[0] for r in rects}
            if 80 <= len(sentence) <= 220 and len(pages) == 1 and "\n" not in sentence and is_answer_eligible(sentence):
                return chunk, sentence, pages.pop()
    raise AssertionError(f"no quotable sentence in {document}")


@pytest.fixture
def cited_run(collection, alice):
    from agent.models import Run
    from tests.factories import make_citation, make_run

    run = make_run(collection=collection, user=alice, question="What do these papers say?",
                   status=Run.Status.DONE, outcome="ANSWER", answer="One [1]. Two [2]. Three [3].")
    expected, documents = {}, []
    for marker, stem in enumerate(PAPERS, start=1):
        documents.append(_store_paper(collection, stem))
        chunk, sentence, page_number = _quotable(documents[-1])
        make_citation(run=run, chunk=chunk, marker=marker, quote=sentence)
        expected[marker] = (sentence, page_number)
    # A fourth citation in the first paper, pages later: the viewer jumps to it in place.
    chunk, sentence, page_number = _quotable(documents[0], first_page=expected[1][1] + 2)
    make_citation(run=run, chunk=chunk, marker=4, quote=sentence)
    expected[4] = (sentence, page_number)
    return run, expected


def _rendered(page, number: int) -> None:
    page.locator(f".pdf-page[data-page='{number}'][data-rendered]").wait_for(timeout=20000)


def test_the_viewer_highlights_the_quoted_sentence_on_the_right_page_of_three_papers(
    page, live_server, alice, password, cited_run, console_errors  # noqa: F811
):
    run, expected = cited_run
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    log_in(page, live_server, alice, password)
    for marker, (sentence, page_number) in expected.items():
        page.goto(f"{live_server.url}/runs/{run.pk}/citations/{marker}/view/")
        _rendered(page, page_number)
        found = page.evaluate(OVERLAP_JS, sentence)
        assert found["marks"] >= 1, (marker, found)
        assert found["quoteSpans"] >= 1, (marker, sentence, found)
        # The highlight lies over the quote's text: every box over some of it, and most of
        # the quote's text runs under a box.
        assert found["marksOverQuote"] == found["marks"], (marker, found)
        assert found["quoteSpansUnderMark"] >= 0.8 * found["quoteSpans"], (marker, found)
        assert page.locator("[data-page-number]").inner_text() == str(page_number)
        if marker == 1:
            screenshot(page, "pdf-viewer-highlight")
    outside = [u for u in requests if not u.startswith(live_server.url)]
    assert outside == []
    assert any("/static/vendor/pdfjs/pdf.worker.min.mjs" in u for u in requests)
    assert console_errors == []


def test_the_viewer_pages_and_jumps_between_citations_by_keyboard(
    page, live_server, alice, password, cited_run, console_errors  # noqa: F811
):
    run, expected = cited_run
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/citations/1/view/")
    first_page = expected[1][1]
    _rendered(page, first_page)
    page.keyboard.press("ArrowRight")
    _rendered(page, first_page + 1)
    assert page.locator(".pdf-mark.current").count() == 0
    page.keyboard.press("ArrowLeft")
    _rendered(page, first_page)
    # [4] is in the same paper: the viewer redraws in place at its page, with its text.
    page.evaluate("window.__sameDocument = true")
    page.locator(".viewer-marks a", has_text="[4]").click()
    _rendered(page, expected[4][1])
    assert page.evaluate("window.__sameDocument") is True
    assert page.url.endswith(f"/runs/{run.pk}/citations/4/view/")
    assert page.locator("[data-mark-text]").inner_text() == " ".join(expected[4][0].split())
    assert page.evaluate(OVERLAP_JS, expected[4][0])["quoteSpansUnderMark"] >= 1
    page.keyboard.press("p")  # back to [3], in another paper
    page.wait_for_url(f"**/runs/{run.pk}/citations/3/view/")
    _rendered(page, expected[3][1])
    page.keyboard.press("p")
    # "p" from [3] opened the previous citation, in another paper, at its page.
    page.wait_for_url(f"**/runs/{run.pk}/citations/2/view/")
    _rendered(page, expected[2][1])
    assert page.locator(".viewer-marks a[aria-current]").inner_text() == "[2]"
    assert low_contrast(page) == []
    # The toolbar is reachable by Tab and works with Enter.
    page.get_by_role("button", name="Page →").focus()
    page.keyboard.press("Enter")
    _rendered(page, expected[2][1] + 1)
    assert console_errors == []


def test_on_a_phone_the_viewer_fits_the_screen_and_scrolls_to_the_highlight(
    page, live_server, alice, password, cited_run, console_errors  # noqa: F811
):
    run, expected = cited_run
    page.set_viewport_size({"width": 360, "height": 740})
    log_in(page, live_server, alice, password)
    page.goto(f"{live_server.url}/runs/{run.pk}/citations/3/view/")
    _rendered(page, expected[3][1])
    page.wait_for_timeout(300)
    box = page.locator(".pdf-mark.current").first.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 740, box
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    screenshot(page, "pdf-viewer-360px", full_page=False)
    assert console_errors == []
