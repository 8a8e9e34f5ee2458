from __future__ import annotations

import pytest

from knowledge.sniff import HTML, MARKDOWN, PDF, TEXT, sniff


@pytest.mark.parametrize(
    "head, name, expected",
    [
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "paper.pdf", PDF),
        (b"%PDF-1.4\n1 0 obj", "renamed.txt", PDF),  # by content, not by name
        (b"\x00\x01junk before the header\n%PDF-1.5\n1 0 obj", "x.pdf", PDF),  # readers allow a preamble
        # Grounded's own docs/ingestion.md mentions the magic bytes in prose.
        (b"# Ingestion\n\nDecided by content: `%PDF-` in the first kilobyte is a PDF.\n", "ingestion.md", MARKDOWN),
        (b"<!doctype html><html><body>x</body></html>", "page.txt", HTML),
        (b"plain words", "notes", TEXT),
    ],
)
def test_it_decides_the_type_by_content(head, name, expected):
    assert sniff(head, name=name, whole=head if expected != PDF else None).media_type == expected
