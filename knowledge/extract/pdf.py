"""PDF extraction, page by page (pypdf), then cleaning (knowledge.extract.clean); without Django."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

from knowledge.extract.clean import (
    CLEANER_VERSION,
    Extracted,
    ExtractError,
    clean_pages,
    plausible_title,
)
from knowledge.metadata import infer_metadata

# ---------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------


def pdf_parser_version() -> str:
    import pypdf

    return f"{pypdf.__version__}+clean{CLEANER_VERSION}"


def extract_pdf_pages(
    source: bytes | str | Path,
    *,
    max_pages: int,
    max_chars: int,
    max_stream_bytes: int = 25_000_000,
    on_page: Callable[[int, int], None] | None = None,
    first_page: FirstPageRuns | None = None,
) -> list[str]:
    """Raw text of every page, or ExtractError with a reason a person understands.

    `first_page`, when given, collects page 1's text runs with their font sizes (the title).

    `on_page(done, total)` is called after each page (progress). Bounds: more than
    `max_pages` pages is refused before any page is read; text beyond `max_chars` in total
    stops extraction (a decompression bomb or a generated monster cannot exhaust memory).
    """
    import pypdf
    from pypdf.errors import (
        DependencyError,
        EmptyFileError,
        FileNotDecryptedError,
        LimitReachedError,
        PdfReadError,
        PyPdfError,
    )

    # pypdf logs every font it cannot fully parse; those are harmless for text extraction.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    # Every stream pypdf inflates is bounded, so a decompression bomb costs at most this
    # much memory before it is named as one (pypdf's own default is 75 MB per stream).
    limits = dict.fromkeys(
        (
            "zlib_maximum_output_length", "lzw_maximum_output_length", "run_length_maximum_output_length",
            "array_based_stream_maximum_output_length", "maximum_declared_stream_length",
        ),
        max_stream_bytes,
    )
    with pypdf.apply_configuration(**limits):
        stream = BytesIO(source) if isinstance(source, bytes) else Path(source).open("rb")  # noqa: SIM115
        try:
            try:
                reader = pypdf.PdfReader(stream, strict=False)
                if reader.is_encrypted:
                    # Many PDFs are "encrypted" only against editing, with an empty user password.
                    try:
                        opened = reader.decrypt("")
                    except (DependencyError, NotImplementedError, PyPdfError):
                        opened = 0
                    if not opened:
                        raise ExtractError(
                            "encrypted",
                            "This PDF is password-protected. Remove the password (print it to a new PDF) and upload it again.",
                        )
                total = len(reader.pages)
            except ExtractError:
                raise
            except (EmptyFileError, PdfReadError, PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
                raise ExtractError(
                    "corrupt", f"This file is damaged or not a complete PDF, so it cannot be read ({_short(exc)})."
                ) from exc
            if total == 0:
                raise ExtractError("no_pages", "This PDF has no pages.")
            if total > max_pages:
                raise ExtractError(
                    "too_many_pages",
                    f"This PDF has {total} pages; the limit is {max_pages}. Split it into smaller files.",
                )
            texts: list[str] = []
            used = 0
            for index in range(total):
                try:
                    page = reader.pages[index]
                    # extract_text() logs and swallows pypdf's decompression limit, returning "";
                    # decoding the content stream first turns a bomb into an error we can name.
                    contents = page.get_contents()
                    if contents is not None:
                        contents.get_data()
                    if index == 0 and first_page is not None:
                        first_page.height = float(page.mediabox.height)
                        first_page.bottom = float(page.mediabox.bottom)
                        text = page.extract_text(visitor_text=first_page.visit) or ""
                    else:
                        text = page.extract_text() or ""
                except LimitReachedError as exc:
                    raise ExtractError(
                        "bomb",
                        f"Page {index + 1} expands to far more data than a real page (a decompression bomb?); "
                        "the file was not ingested.",
                    ) from exc
                except FileNotDecryptedError as exc:
                    raise ExtractError("encrypted", "This PDF is password-protected.") from exc
                except (MemoryError, RecursionError) as exc:
                    raise ExtractError("bomb", f"Page {index + 1} is too large or too deeply nested to read.") from exc
                except Exception as exc:
                    raise ExtractError(
                        "corrupt", f"Page {index + 1} is damaged and cannot be read ({_short(exc)})."
                    ) from exc
                used += len(text)
                if used > max_chars:
                    raise ExtractError(
                        "too_much_text",
                        f"This file holds more than {max_chars:,} characters of text, over the limit for one document.",
                    )
                texts.append(text)
                if on_page:
                    on_page(index + 1, total)
            return texts
        finally:
            stream.close()


@dataclass
class FirstPageRuns:
    """Text runs of page 1 as pypdf draws them: (font size in points, baseline y, text)."""

    runs: list[tuple[float, float, str]] = field(default_factory=list)
    height: float = 0.0
    bottom: float = 0.0

    def visit(self, text: str, cm: Sequence[float], tm: Sequence[float], font: object, size: float) -> None:
        if not text.strip():
            return
        # The size drawn is the font size scaled by the text and page matrices.
        scale = max(abs(tm[0] * cm[0] + tm[1] * cm[2]), abs(tm[2] * cm[1] + tm[3] * cm[3]))
        self.runs.append((size * scale, tm[4] * cm[1] + tm[5] * cm[3] + cm[5], text))

    def title(self) -> str:
        """The largest text in the top 40 % of page 1: the title of nearly every paper.

        Starts at the first run in the largest size and goes on through runs in that size
        (a title wrapped over lines) or, on the same line, a smaller size (small capitals:
        "R" + "ETRIEVAL"); stops at the first smaller line (the authors). A figure lower on
        the page, whose labels can be larger, is out of the region. All 25 shared papers
        get their printed title (tests/knowledge/test_pdf_title.py)."""
        top = [r for r in self.runs if r[1] >= self.bottom + 0.6 * self.height and any(c.isalpha() for c in r[2])]
        if not top:
            return ""
        biggest = max(size for size, _, _ in top)
        parts: list[str] = []
        previous: tuple[float, str] | None = None
        for size, y, text in top:
            full = size >= 0.95 * biggest
            same_line = previous is not None and abs(previous[0] - y) < 1
            if not parts and not full:
                continue
            if parts and not (full or (same_line and size >= 0.6 * biggest)):
                break
            glue = "" if same_line and previous and not previous[1].endswith(" ") else " "
            parts.append(glue + text)
            previous = (y, text)
        return plausible_title("".join(parts))


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]


def extract_pdf(
    source: bytes | str | Path,
    *,
    max_pages: int = 2000,
    max_chars: int = 20_000_000,
    max_stream_bytes: int = 25_000_000,
    on_page: Callable[[int, int], None] | None = None,
) -> Extracted:
    first_page = FirstPageRuns()
    raw = extract_pdf_pages(
        source, max_pages=max_pages, max_chars=max_chars, max_stream_bytes=max_stream_bytes, on_page=on_page,
        first_page=first_page,
    )
    pages = clean_pages(raw)
    if sum(len(p.text.strip()) for p in pages) < 20 * max(1, min(len(raw), 3)):
        raise ExtractError(
            "no_text",
            "This PDF has no text layer (it looks like scanned images), and OCR is not available. "
            "Upload a PDF with selectable text.",
        )
    metadata = infer_metadata(raw[0] if raw else "", "")
    title = first_page.title()
    if title:
        metadata["title"] = title
    return Extracted(pages=pages, parser="pypdf", parser_version=pdf_parser_version(), page_count=len(raw),
                     metadata=metadata)
