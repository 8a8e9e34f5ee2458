"""Text extraction, one module per format, without Django: `pdf` (pypdf, page by page), `text`
(plain text and Markdown, one page), `html` (its blocks; `text.extract_text` makes the page),
and `clean` (the cleaning of PDF pages and the types every format returns: `Extracted`,
`CleanPage`, `SectionStart`, `ExtractError`).

The public names are re-exported here: `from knowledge import extract`.
"""

from knowledge.extract.clean import (
    CLEANER_VERSION,
    REFERENCE_TITLES,
    CleanPage,
    Extracted,
    ExtractError,
    SectionStart,
    clean_pages,
    normalise_unicode,
    plausible_title,
)
from knowledge.extract.pdf import FirstPageRuns, extract_pdf, extract_pdf_pages, pdf_parser_version
from knowledge.extract.text import extract_text

__all__ = [
    "CLEANER_VERSION",
    "REFERENCE_TITLES",
    "CleanPage",
    "ExtractError",
    "Extracted",
    "FirstPageRuns",
    "SectionStart",
    "clean_pages",
    "extract_pdf",
    "extract_pdf_pages",
    "extract_text",
    "normalise_unicode",
    "pdf_parser_version",
    "plausible_title",
]
