"""Chunks of real papers from ../shared/data/papers for retrieval tests (no database).

Plain pypdf text, page by page, cut into overlapping windows of words: the retrieval tests
need real scientific prose, not the ingestion pipeline's exact chunking.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache

from tests.conftest import paper


@lru_cache(maxsize=16)
def _page_tokens(name: str) -> tuple[tuple[str, ...], ...]:
    """The words of each page of a paper: pypdf's text is read once per paper, whatever the
    windows the tests cut from it (a few seconds a paper)."""
    import pypdf

    # pypdf warns about every font it cannot fully parse; the text is fine.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    reader = pypdf.PdfReader(str(paper(name)))
    pages = []
    for page in reader.pages:
        tokens = re.sub(r"\s+", " ", page.extract_text() or "").split(" ")
        pages.append(tuple(t for t in tokens if t))
    return tuple(pages)


@lru_cache(maxsize=16)
def paper_chunks(name: str, *, words: int = 120, stride: int = 100) -> tuple[str, ...]:
    chunks: list[str] = []
    for tokens in _page_tokens(name):
        for start in range(0, max(len(tokens) - words + stride, 1), stride):
            window = tokens[start : start + words]
            if len(window) >= 20:
                chunks.append(" ".join(window))
    return tuple(chunks)
