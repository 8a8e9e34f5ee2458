"""Where each sentence of a chunk sits on its PDF page: a few line rectangles, for the viewer.

The chunk text comes from pypdf and the cleaner (knowledge.extract); the boxes come from pdfium
(pypdfium2), which knows each character's position. The two texts differ (headers dropped,
hyphenation joined, ligatures, spaces), so they are compared by `match_key` (letters and
digits only, case-folded): each page's characters are folded into one key string that
remembers the character each key letter came from, and each sentence's key is looked up in it.

Stored per chunk (`Chunk.boxes`) as a compact list, one entry per sentence that was found:

    [start, end, [[page, x0, y0, x1, y1], ...]]

`start`/`end` are offsets into the chunk text, `page` is 1-based, the rectangles are in PDF
points in the page's user space (origin bottom left, y up; PDF.js converts them with
`viewport.convertToViewportRectangle`), rounded to 0.1 pt and merged per line. A sentence
that is not found has no entry: the viewer then shows its page only.
"""

from __future__ import annotations

import itertools
import logging
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

logger = logging.getLogger(__name__)

# A sentence split by a page break is matched by its head on one page and its tail on the next.
_EDGE_KEY = 24
# Key strings shorter than this are too ambiguous to place (a lone "1", "Table").
_MIN_KEY = 4


@dataclass
class PageKey:
    """One page's text folded to a match key, with the character index of each key letter."""

    number: int
    key: str
    index: list[int]
    text: str = ""
    cursor: int = 0  # where the previous match ended: sentences come in reading order
    textpage: object = field(default=None, repr=False)


def _fold(ch: str) -> str:
    folded = unicodedata.normalize("NFKC", ch).casefold()
    return "".join(c for c in folded if c.isalnum())


def match_key_with_index(text: str) -> tuple[str, list[int]]:
    """`knowledge.text.match_key` of `text`, plus for each key letter the index it came from."""
    key: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            if ch.isalnum():
                key.append(ch.lower())
                index.append(i)
            continue
        for c in _fold(ch):
            key.append(c)
            index.append(i)
    return "".join(key), index


def _merge(rects: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Rectangles on the same line (vertical overlap over half the smaller height, close
    horizontally) joined into one, so a sentence is a few boxes, not one per text run."""
    merged: list[list[float]] = []
    for x0, y0, x1, y1 in rects:
        if x1 <= x0 or y1 <= y0:
            continue
        if merged:
            m = merged[-1]
            overlap = min(m[3], y1) - max(m[1], y0)
            if overlap > 0.5 * min(m[3] - m[1], y1 - y0) and x0 - m[2] < 24 and m[0] - x1 < 24:
                m[0], m[1], m[2], m[3] = min(m[0], x0), min(m[1], y0), max(m[2], x1), max(m[3], y1)
                continue
        merged.append([x0, y0, x1, y1])
    return [tuple(m) for m in merged]  # type: ignore[misc]


def _rects(page: PageKey, first: int, last: int) -> list[list[float]]:
    """Merged rectangles of characters first..last (inclusive) of the page."""
    textpage = page.textpage
    count = textpage.count_rects(first, last - first + 1)  # type: ignore[attr-defined]
    raw = [textpage.get_rect(i) for i in range(count)]  # type: ignore[attr-defined]
    # pdfium gives (left, bottom, right, top).
    return [[page.number, round(x0, 1), round(y0, 1), round(x1, 1), round(y1, 1)] for x0, y0, x1, y1 in _merge(raw)]


# Closing punctuation right after a sentence's last letter belongs to its box ("models).").
_CLOSING = set(").,;:!?]}\"'\u201d\u2019")


def _last(page: PageKey, end: int) -> int:
    """The character index of key letter `end`, moved over the closing punctuation after it."""
    at = page.index[end]
    for _ in range(3):
        if at + 1 < len(page.text) and page.text[at + 1] in _CLOSING:
            at += 1
    return at


def _find(page: PageKey, key: str) -> int:
    at = page.key.find(key, page.cursor)
    if at < 0:
        at = page.key.find(key)
    return at


def _place(key: str, candidates: Sequence[PageKey]) -> list[list[float]]:
    """Rectangles of `key` on the first candidate page that has it whole, else its head at the
    end of one page and its tail on the next; [] when neither is found."""
    if len(key) < _MIN_KEY:
        return []
    for page in candidates:
        at = _find(page, key)
        if at >= 0:
            end = at + len(key) - 1
            page.cursor = end + 1
            return _rects(page, page.index[at], _last(page, end))
    head, tail = key[:_EDGE_KEY], key[-_EDGE_KEY:]
    if len(key) <= 2 * _EDGE_KEY:
        return []
    for page, following in itertools.pairwise(candidates):
        at, to = _find(page, head), following.key.find(tail)
        if at >= 0 and to >= 0:
            end = to + len(tail) - 1
            following.cursor = end + 1
            return (_rects(page, page.index[at], page.index[-1])
                    + _rects(following, following.index[0], _last(following, end)))
    return []


@dataclass
class ChunkPlace:
    """The part of a chunk the boxes need (a knowledge.chunking.ChunkSpec fits)."""

    text: str
    page_start: int
    page_end: int


def chunk_boxes(path: Path, chunks: Sequence[ChunkPlace]) -> list[list]:
    """For each chunk, its sentences' boxes (see the module docstring); [] per chunk when the
    PDF cannot be read by pdfium (the viewer falls back to the page)."""
    import pypdfium2 as pdfium

    from knowledge.text import sentence_spans

    result: list[list] = [[] for _ in chunks]
    try:
        document = pdfium.PdfDocument(str(path))
    except Exception as exc:  # a file pypdf read but pdfium cannot: no boxes, still searchable
        logger.warning("no sentence boxes for %s: %s", path, exc)
        return result
    pages: dict[int, PageKey] = {}

    def page_key(number: int) -> PageKey | None:
        if number < 1 or number > len(document):
            return None
        if number not in pages:
            textpage = document[number - 1].get_textpage()
            text = textpage.get_text_range(0, textpage.count_chars())
            key, index = match_key_with_index(text)
            pages[number] = PageKey(number=number, key=key, index=index, text=text, textpage=textpage)
        return pages[number]

    try:
        for n, chunk in enumerate(chunks):
            # Chunks come in page order: pages behind this chunk are closed, so a long PDF
            # holds a few pages' characters in memory, not all of them.
            for number in [k for k in pages if k < chunk.page_start]:
                pages.pop(number).textpage.close()  # type: ignore[attr-defined]
            candidates = [p for p in (page_key(k) for k in range(chunk.page_start, chunk.page_end + 1)) if p]
            entries = []
            for start, end in sentence_spans(chunk.text):
                key, _ = match_key_with_index(chunk.text[start:end])
                rects = _place(key, candidates)
                if rects:
                    entries.append([start, end, rects])
            result[n] = entries
    finally:
        for page in pages.values():
            page.textpage.close()  # type: ignore[attr-defined]
        document.close()
    return result


def boxes_for_span(boxes: Sequence[Sequence], start: int, end: int) -> list[list[float]]:
    """The rectangles of the stored sentences that overlap chunk offsets [start, end)."""
    rects: list[list[float]] = []
    for s, e, sentence_rects in boxes:
        if s < end and e > start:
            rects.extend(sentence_rects)
    return rects
