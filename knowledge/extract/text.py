"""Plain text and Markdown (and the dispatch to HTML): one "page" each (page 1), sections from
headings; without Django."""

from __future__ import annotations

import re

from knowledge.extract.clean import (
    CLEANER_VERSION,
    REFERENCE_TITLES,
    CleanPage,
    Extracted,
    ExtractError,
    SectionStart,
    normalise_unicode,
    plausible_title,
)
from knowledge.extract.html import _html_blocks

# ---------------------------------------------------------------------------
# Markdown, plain text and HTML: one "page" each (page 1), sections from headings
# ---------------------------------------------------------------------------


_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def extract_text(text: str, *, media_type: str = "text/plain", max_chars: int = 20_000_000) -> Extracted:
    """Markdown, plain text or HTML as a single page; headings become sections."""
    if "\x00" in text:
        # Upload checks only the head of a large file; a NUL anywhere means binary data.
        raise ExtractError(
            "binary", "This file contains binary data (NUL bytes), so it is not a text file and cannot be ingested."
        )
    if len(text) > max_chars:
        raise ExtractError(
            "too_much_text", f"This file holds more than {max_chars:,} characters of text, over the limit."
        )
    if media_type == "text/html":
        blocks = _html_blocks(text)
    else:
        blocks = _text_blocks(normalise_unicode(text), markdown=media_type == "text/markdown")
    parts: list[str] = []
    sections: list[SectionStart] = []
    offset = 0
    in_references = False
    for block, level in blocks:
        block = block.strip()
        if not block:
            continue
        if level:
            in_references = block.lower().rstrip(":") in REFERENCE_TITLES
            sections.append(SectionStart(title=block[:300], offset=offset, level=level, is_reference=in_references))
        parts.append(block)
        offset += len(block) + 2
    body = "\n\n".join(parts)
    if not body.strip():
        raise ExtractError("no_text", "This file contains no text.")
    parser = {"text/html": "html", "text/markdown": "markdown"}.get(media_type, "text")
    # The first top-level heading is the document's title (a Markdown "# ...", an HTML <h1>).
    title = next((plausible_title(s.title) for s in sections if s.level == 1), "")
    return Extracted(pages=[CleanPage(1, body, sections)], parser=parser, parser_version=CLEANER_VERSION, page_count=1,
                     metadata={"title": title} if title else {})


def _text_blocks(text: str, *, markdown: bool) -> list[tuple[str, int]]:
    blocks: list[tuple[str, int]] = []
    current: list[str] = []
    in_code = False

    def flush() -> None:
        if current:
            blocks.append((" ".join(s.strip() for s in current) if not in_code else "\n".join(current), 0))
            current.clear()

    for line in text.split("\n"):
        if markdown and line.strip().startswith("```"):
            flush()
            in_code = not in_code
            continue
        if in_code:
            current.append(line.rstrip())
            continue
        m = _MD_HEADING.match(line) if markdown else None
        if m:
            flush()
            blocks.append((m.group(2).strip(), len(m.group(1))))
        elif not line.strip():
            flush()
        elif markdown and re.match(r"^\s*(?:[-*+]|\d+\.)\s+", line) and current:
            # A list item is its own paragraph, so a citation shows just that item.
            flush()
            current.append(line)
        else:
            current.append(line)
    flush()
    return blocks
