"""Decide a file's type from its content, never its name (pure, no Django).

Accepted: PDF (a `%PDF-1.x` header line within the first kilobyte), HTML, Markdown and plain text (valid UTF-8 without
NUL bytes). The name only tells Markdown from plain text, which are both text anyway.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PDF = "application/pdf"
HTML = "text/html"
MARKDOWN = "text/markdown"
TEXT = "text/plain"
SUPPORTED = (PDF, HTML, MARKDOWN, TEXT)

# The header starts a line and names a version; text that merely mentions "%PDF-" (this
# project's own docs do) is not a PDF.
_PDF_HEADER = re.compile(rb"(?:\A|[\r\n])%PDF-[12]\.\d")
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>]", re.IGNORECASE | re.DOTALL)
_MARKDOWN_NAMES = (".md", ".markdown", ".mdown")


@dataclass(frozen=True)
class Sniffed:
    media_type: str | None
    reason: str = ""  # why it was refused, for a person


def sniff(head: bytes, *, name: str = "", whole: bytes | None = None) -> Sniffed:
    """The media type of a file from its first bytes (and all of it, for text checks).

    `head` is at least the first 4 KB; `whole` is the whole file when it is small enough to
    check that it really is UTF-8 (a binary file that happens to start with ASCII is not text).
    """
    # The PDF spec allows junk before the header; readers accept it within the first 1 KB.
    if _PDF_HEADER.search(head[:1024]):
        return Sniffed(PDF)
    sample = whole if whole is not None else head
    if not sample.strip():
        return Sniffed(None, "The file is empty.")
    if b"\x00" in sample:
        return Sniffed(None, _unsupported(name))
    body = sample[3:] if sample.startswith(b"\xef\xbb\xbf") else sample
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A head cut in the middle of a multi-byte character is still UTF-8.
        if whole is not None or exc.start < len(body) - 4:
            return Sniffed(None, _unsupported(name) + " Text files must be UTF-8.")
    if _HTML_START.match(body[:4096]):
        return Sniffed(HTML)
    if name.lower().endswith(_MARKDOWN_NAMES):
        return Sniffed(MARKDOWN)
    return Sniffed(TEXT)


def _unsupported(name: str) -> str:
    label = f"“{name}”" if name else "This file"
    return f"{label} is not a PDF, Markdown, HTML or plain-text file, so it cannot be ingested."
