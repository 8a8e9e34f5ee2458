"""Sentence boxes (knowledge.pdf_boxes): each chunk sentence placed on its PDF page, matched
to pdfium's characters by match key, and the highlight of a quote in a stored chunk."""

from __future__ import annotations

from functools import lru_cache

import pytest

from knowledge.pdf_boxes import (
    ChunkPlace,
    PageKey,
    _last,
    _place,
    boxes_for_span,
    chunk_boxes,
    match_key_with_index,
)
from knowledge.text import match_key
from tests.conftest import paper


@lru_cache(maxsize=2)
def _paper_boxes(stem: str):
    from knowledge import extract
    from knowledge.chunking import chunk_pages

    path = paper(stem)
    specs = chunk_pages(extract.extract_pdf(path).pages)
    return path, specs, chunk_boxes(path, specs)


@pytest.mark.parametrize("text", ["Eﬃcient re-\nranking", "BM25 (k1 = 1.2)", "naïve  Straße", "ﬁne-tuned, 11.7 %"])
def test_the_indexed_key_is_the_match_key_and_points_at_its_characters(text):
    key, index = match_key_with_index(text)
    assert key == match_key(text)
    assert len(index) == len(key)
    assert all(match_key(text[i]) and key[k] in match_key(text[i]) for k, i in enumerate(index))


def test_it_places_nearly_every_sentence_of_a_real_paper_on_its_own_pages():
    from knowledge.text import sentence_spans

    path, specs, boxes = _paper_boxes("1904.08375v2_doc2query")
    total = sum(len(sentence_spans(s.text)) for s in specs)
    placed = sum(len(b) for b in boxes)
    assert placed >= 0.9 * total, (placed, total)
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    sizes = [document[i].get_size() for i in range(len(document))]
    for spec, entries in zip(specs, boxes, strict=True):
        for start, end, rects in entries:
            assert 0 <= start < end <= len(spec.text)
            for page, x0, y0, x1, y1 in rects:
                width, height = sizes[page - 1]
                assert spec.page_start <= page <= spec.page_end
                assert 0 <= x0 < x1 <= width and 0 <= y0 < y1 <= height


def test_a_known_sentence_of_the_abstract_is_boxed_on_page_one_in_the_left_column():
    _, specs, boxes = _paper_boxes("1904.08375v2_doc2query")
    wanted = "we propose a simple method that predicts which queries will be issued"
    for spec, entries in zip(specs, boxes, strict=True):
        at = spec.text.find(wanted)
        if at >= 0:
            rects = boxes_for_span(entries, at, at + len(wanted))
            break
    else:
        pytest.fail("sentence not in the chunks")
    assert rects and {r[0] for r in rects} == {1}
    # Letter paper, two columns: the abstract's sentence lies left of the middle.
    assert all(r[3] < 612 / 2 for r in rects), rects


class _FakeTextPage:
    """One 10 x 10 pt box per character, 20 characters a line."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, float, float, float]] = []

    def count_rects(self, first: int, count: int) -> int:
        self.pending = [(10.0 * (i % 20), 700.0 - 12 * (i // 20), 10.0 * (i % 20) + 10, 710.0 - 12 * (i // 20))
                        for i in range(first, first + count)]
        return len(self.pending)

    def get_rect(self, i: int) -> tuple[float, float, float, float]:
        return self.pending[i]


def _page(number: int, text: str) -> PageKey:
    key, index = match_key_with_index(text)
    return PageKey(number=number, key=key, index=index, text=text, textpage=_FakeTextPage())


def test_a_sentence_across_a_page_break_is_boxed_on_both_pages_and_lines_are_merged():
    first = _page(1, "Intro text here. The retriever ranks every passage of the")
    second = _page(2, "Running header 2\ncollection by its fused score. Next one.")
    sentence = "The retriever ranks every passage of the collection by its fused score."
    rects = _place(match_key(sentence), [first, second])
    assert {r[0] for r in rects} == {1, 2}
    # Characters of one line come back as one merged box per line, not one per character.
    assert len([r for r in rects if r[0] == 1]) <= 3
    # A sentence's box ends after its closing punctuation, not at its last letter.
    end = second.key.index("scorenext") + len("score") - 1
    assert second.text[_last(second, end)] == "."
    models = _page(3, "keyword matching (one-hot models). Next")
    assert models.text[_last(models, models.key.index("modelsnext") + 5) - 1 :].startswith(").")


def test_an_unplaceable_sentence_gets_no_boxes_and_a_quote_highlights_its_sentences_only():
    page = _page(3, "Alpha beta gamma delta. Epsilon zeta eta theta.")
    assert _place(match_key("Nothing like this is on the page."), [page]) == []
    boxes = [[0, 24, [[3, 0, 0, 10, 10]]], [25, 48, [[3, 0, 20, 10, 30]]]]
    assert boxes_for_span(boxes, 30, 40) == [[3, 0, 20, 10, 30]]
    assert boxes_for_span(boxes, 0, 48) == [[3, 0, 0, 10, 10], [3, 0, 20, 10, 30]]


def test_a_file_pdfium_cannot_open_gives_no_boxes_instead_of_failing(tmp_path):
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.4\nnot really a pdf")
    chunks = [ChunkPlace(text="Some text.", page_start=1, page_end=1)]
    assert chunk_boxes(broken, chunks) == [[]]
