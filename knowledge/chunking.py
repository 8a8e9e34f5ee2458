"""Chunking of cleaned pages into passages that fit the embedding model's window.

Pure domain code, no Django. Input: `CleanPage`s (knowledge.extract). Output: `ChunkSpec`s.

Offsets: the pages of a document are read as one text, joined by `PAGE_JOINER`. A chunk is
one contiguous slice of that text; `char_start` is its offset into the cleaned text of
`page_start`, and `char_end = char_start + len(text)`. So for a one-page chunk
`page.text[char_start:char_end] == text`, and for a chunk crossing pages
`PAGE_JOINER.join(texts of page_start..page_end)[char_start:char_end] == text`
(`chunk_text_from_pages` does exactly this).

Algorithm:
1. Split each paragraph into sentences (knowledge.text); a sentence longer than the budget is cut into
   word windows. Token counts come from the model's tokenizer (sum of parts == count of
   the whole, since WordPiece splits on whitespace first).
2. Pack units greedily up to `max_tokens`. A section heading always starts a new chunk
   (and stays with the text under it); references never share a chunk with body text.
3. When a chunk is full, prefer to end it at the last paragraph boundary if that keeps
   it at least half full (paragraph-first); otherwise end it between sentences (the
   sentence-window fallback for weak structure).
4. The next chunk repeats the previous chunk's trailing sentences up to `overlap_tokens`,
   unless the break was at a paragraph or section boundary.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from knowledge.extract import CleanPage
from knowledge.text import runs_on, sentence_spans

PAGE_JOINER = "\n\n"
CHUNKER_VERSION = "3"
# all-MiniLM-L6-v2 reads 256 word pieces including [CLS] and [SEP]: 254 of text. A little
# under it leaves room for tokenizer differences on the OpenAI side.
DEFAULT_MAX_TOKENS = 250
DEFAULT_OVERLAP_TOKENS = 40
# A hard ceiling on a chunk's characters, whatever the token count says: the tokenizer counts
# a "word" of any length without spaces (a base64 blob, a 19 MB line) as one [UNK] piece, so
# only a character cap keeps such a file from becoming one giant chunk. Prose chunks of
# 250 word pieces hold about 1,000-1,500 characters, far below it.
DEFAULT_MAX_CHARS = 4000

TokenCounter = Callable[[Sequence[str]], list[int]]

@dataclass(frozen=True)
class ChunkParams:
    max_tokens: int = DEFAULT_MAX_TOKENS
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS
    max_chars: int = DEFAULT_MAX_CHARS
    version: str = CHUNKER_VERSION

    def to_json(self) -> dict:
        return {"method": "paragraph-first, sentence-window fallback", **asdict(self)}


@dataclass
class ChunkSpec:
    ordinal: int
    text: str
    section_title: str
    page_start: int
    page_end: int
    char_start: int
    char_end: int
    token_count: int
    is_reference: bool


@dataclass
class _Unit:
    start: int  # into the joined document text
    end: int
    tokens: int
    page: int
    section: str
    is_reference: bool
    paragraph_start: bool
    heading: bool


def _split_sentences(text: str, base: int) -> list[tuple[int, int]]:
    # The one splitter (knowledge.text), so a chunk ends between the sentences the agent quotes.
    return [(base + a, base + b) for a, b in sentence_spans(text)]


def _char_pieces(doc: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Cut a span longer than max_chars, at the last space inside each window if there is one."""
    pieces: list[tuple[int, int]] = []
    while end - start > max_chars:
        stop = start + max_chars
        space = doc.rfind(" ", start + max_chars // 2, stop)
        cut = space if space > start else stop
        pieces.append((start, cut))
        start = cut
        while start < end and doc[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return pieces


def _word_windows(doc: str, start: int, end: int, max_tokens: int, count: TokenCounter) -> list[tuple[int, int, int]]:
    """Cut an over-long span into consecutive word windows of at most max_tokens."""
    words = [(m.start() + start, m.end() + start) for m in re.finditer(r"\S+", doc[start:end])]
    counts = count([doc[a:b] for a, b in words])
    windows: list[tuple[int, int, int]] = []
    w_start, tokens, last_end = None, 0, start
    for (a, b), n in zip(words, counts, strict=True):
        if n > max_tokens:
            # A single "word" longer than the window (a URL, a base64 blob): cut by characters.
            if w_start is not None:
                windows.append((w_start, last_end, tokens))
                w_start, tokens = None, 0
            step = max(1, (b - a) * max_tokens // n)
            pos = a
            while pos < b:
                stop = min(b, pos + step)
                windows.append((pos, stop, count([doc[pos:stop]])[0]))
                pos = stop
            last_end = b
            continue
        if w_start is not None and tokens + n > max_tokens:
            windows.append((w_start, last_end, tokens))
            w_start, tokens = None, 0
        if w_start is None:
            w_start = a
        tokens += n
        last_end = b
    if w_start is not None:
        windows.append((w_start, last_end, tokens))
    return windows


def _model_token_counter() -> TokenCounter:
    from knowledge.embeddings import count_tokens

    return count_tokens


# A sentence or heading before units are made: start, end, page, section, is_reference,
# paragraph start, heading.
_RawUnit = tuple[int, int, int, str, bool, bool, bool]


def _join_run_ons(doc: str, raw: list[_RawUnit]) -> list[_RawUnit]:
    """One unit for a sentence that a page or column break cut in two (`runs_on`).

    The joined unit keeps the page, section and paragraph start of its first part; a
    heading or a change between body and reference list is never joined.
    """
    out: list[_RawUnit] = []
    for unit in raw:
        start, end, _, _, is_reference, paragraph_start, heading = unit
        if out and paragraph_start and not heading:
            a, b, page, section, ref, para, head = out[-1]
            if not head and ref == is_reference and runs_on(doc[a:b], doc[start:end]):
                out[-1] = (a, end, page, section, ref, para, False)
                continue
        out.append(unit)
    return out


def _units(pages: Sequence[CleanPage], doc: str, page_offsets: list[int], params: ChunkParams,
           count: TokenCounter) -> list[_Unit]:
    raw: list[_RawUnit] = []
    section, is_reference = "", False
    for page, base in zip(pages, page_offsets, strict=True):
        heads = {s.offset: s for s in page.sections}
        pos = 0
        for para in page.text.split("\n\n"):
            p_start = base + pos
            if pos in heads:
                head = heads[pos]
                section, is_reference = head.title, head.is_reference
                raw.append((p_start, p_start + len(para), page.number, section, is_reference, True, True))
            else:
                for i, (a, b) in enumerate(_split_sentences(para, p_start)):
                    raw.append((a, b, page.number, section, is_reference, i == 0, False))
            pos += len(para) + 2
    raw = _join_run_ons(doc, raw)
    # Hard split first: nothing longer than max_chars reaches the token counter or a chunk.
    raw = [
        (pa, pb, page_no, sec, ref, para and i == 0, head and i == 0)
        for a, b, page_no, sec, ref, para, head in raw
        for i, (pa, pb) in enumerate(_char_pieces(doc, a, b, params.max_chars))
    ]
    counts = count([doc[a:b] for a, b, *_ in raw])
    units: list[_Unit] = []
    for (a, b, page_no, sec, ref, para, head), n in zip(raw, counts, strict=True):
        if n <= params.max_tokens:
            units.append(_Unit(a, b, n, page_no, sec, ref, para, head))
            continue
        for i, (wa, wb, wn) in enumerate(_word_windows(doc, a, b, params.max_tokens, count)):
            units.append(_Unit(wa, wb, wn, page_no, sec, ref, para and i == 0, False))
    return units


def chunk_pages(
    pages: Sequence[CleanPage],
    *,
    params: ChunkParams | None = None,
    count_tokens: TokenCounter | None = None,
) -> list[ChunkSpec]:
    """Chunks of the document (see the module docstring for the algorithm and offsets)."""
    params = params or ChunkParams()
    count = count_tokens or _model_token_counter()
    page_offsets: list[int] = []
    pos = 0
    for page in pages:
        page_offsets.append(pos)
        pos += len(page.text) + len(PAGE_JOINER)
    doc = PAGE_JOINER.join(p.text for p in pages)
    units = _units(pages, doc, page_offsets, params, count)
    page_base = dict(zip((p.number for p in pages), page_offsets, strict=True))

    chunks: list[ChunkSpec] = []

    def emit(group: list[_Unit]) -> None:
        first, last = group[0], group[-1]
        text = doc[first.start : last.end]
        base = page_base[first.page]
        # The page of the chunk's last character: a unit joined across a page break ends
        # on the page after the one it starts on.
        last_page = pages[bisect.bisect_right(page_offsets, last.end - 1) - 1].number
        # Joining units with their original separators adds no word pieces, so the sum is exact.
        chunks.append(ChunkSpec(
            ordinal=len(chunks), text=text, section_title=first.section[:300], page_start=first.page,
            page_end=last_page, char_start=first.start - base, char_end=first.start - base + len(text),
            token_count=sum(u.tokens for u in group), is_reference=first.is_reference,
        ))

    group: list[_Unit] = []
    tokens = 0
    for unit in units:
        new_section = unit.heading or (group and unit.is_reference != group[0].is_reference)
        too_long = bool(group) and unit.end - group[0].start > params.max_chars
        if group and (new_section or too_long or tokens + unit.tokens > params.max_tokens):
            if new_section:
                emit(group)
                group, tokens = [], 0
            else:
                cut = len(group)
                # Paragraph-first: end at the last paragraph start if the chunk stays half full.
                para_cuts = [i for i, u in enumerate(group) if u.paragraph_start and i > 0]
                if unit.paragraph_start:
                    cut = len(group)
                elif para_cuts and sum(u.tokens for u in group[: para_cuts[-1]]) >= params.max_tokens // 2:
                    cut = para_cuts[-1]
                head, tail = group[:cut], group[cut:]
                emit(head)
                at_paragraph = (tail[0].paragraph_start if tail else unit.paragraph_start)
                overlap: list[_Unit] = []
                if not at_paragraph and params.overlap_tokens:
                    budget = params.overlap_tokens
                    for u in reversed(head):
                        if u.heading or u.tokens > budget:
                            break
                        overlap.insert(0, u)
                        budget -= u.tokens
                # The overlap must never push the new chunk over budget.
                while overlap and (sum(u.tokens for u in overlap + tail) + unit.tokens > params.max_tokens
                                   or unit.end - overlap[0].start > params.max_chars):
                    overlap.pop(0)
                group = overlap + tail
                tokens = sum(u.tokens for u in group)
                if group and (tokens + unit.tokens > params.max_tokens
                              or unit.end - group[0].start > params.max_chars):
                    emit(group)
                    group, tokens = [], 0
        group.append(unit)
        tokens += unit.tokens
    if group:
        emit(group)
    return chunks


def chunk_text_from_pages(pages: Sequence[CleanPage], *, page_start: int, page_end: int,
                          char_start: int, char_end: int) -> str:
    """The exact text a chunk's page and offset fields point at."""
    texts = [p.text for p in pages if page_start <= p.number <= page_end]
    return PAGE_JOINER.join(texts)[char_start:char_end]
