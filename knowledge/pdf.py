"""Text extraction and cleaning: PDF page by page (pypdf), and Markdown, plain text, HTML.

Pure domain code, no Django. The result is a list of `CleanPage`s: the cleaned text of each
page plus the section headings that start on it. Chunk offsets (knowledge.chunking) point
into `CleanPage.text`, so a citation can show the exact passage and open the PDF at its page.

Cleaning, in order (see `clean_pages`):
1. Unicode NFKC (ligatures such as "ﬁ" become "fi"), drop soft hyphens, zero-width and
   control characters.
2. Drop running headers and footers: a line among the first or last three of a page whose
   shape (digits folded) repeats on many pages; and bare page numbers there.
3. Join words hyphenated across line breaks ("repre-" + "sentation"). The hyphen is kept
   only when the document itself spells the word with a hyphen elsewhere and never without
   ("pre-trained"), so compound words survive.
4. Rebuild paragraphs from lines (a short line ending a sentence closes a paragraph),
   headings on their own paragraph; paragraphs are separated by a blank line.
5. Detect section headings ("3.1 Problem Formalization", "Abstract", "References").
"""

from __future__ import annotations

import logging
import re
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from io import BytesIO
from pathlib import Path

from knowledge.metadata import infer_metadata
from knowledge.text import normalise
from knowledge.text.sentences import NAMED_SECTIONS

# Bump when cleaning or section detection changes: extracted text is cached per version.
CLEANER_VERSION = "4"

REFERENCE_TITLES = {"references", "bibliography", "literature cited", "works cited", "reference"}
_NAMED_SECTIONS = NAMED_SECTIONS | REFERENCE_TITLES
_NUMBERED_HEADING = re.compile(
    r"^(?P<num>(?:[1-9]\d?|[A-H])(?:\.\d{1,2}){0,3})\.?\s+(?P<title>[A-Z][^\n]{1,90})$"
)
_ROMAN_HEADING = re.compile(r"^(?P<num>(?:I|II|III|IV|V|VI|VII|VIII|IX|X))\.\s+(?P<title>[A-Z][A-Z \-:,&]{2,80})$")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?[-\u2013]?\s*\d{1,4}\s*[-\u2013]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_ARXIV_STAMP = re.compile(r"^arXiv:\d{4}\.\d{4,5}(?:v\d+)?\s+\[[\w.\-]+\]\s+\d{1,2}\s+\w{3}\s+\d{4}$")
_HYPHEN_END = re.compile(r"([A-Za-z]+)-$")
_WORD_START = re.compile(r"^([a-z][A-Za-z]*)")
_TRAILING_FUNCTION_WORDS = {
    "a", "an", "the", "of", "to", "in", "on", "for", "with", "and", "or", "such", "that", "this", "is", "are",
    "by", "as", "at", "from", "be", "we", "our", "its", "their", "which",
}
_SENTENCE_END = re.compile(r"[.!?:;][\"'\u201d\u2019)\]]*$")


class ExtractError(Exception):
    """A file that cannot be turned into text; `message` is for the person who uploaded it."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class SectionStart:
    title: str
    offset: int  # into CleanPage.text
    level: int = 1
    is_reference: bool = False


@dataclass
class CleanPage:
    number: int  # 1-based, as a PDF viewer counts
    text: str
    sections: list[SectionStart] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "number": self.number,
            "text": self.text,
            "sections": [[s.title, s.offset, s.level, s.is_reference] for s in self.sections],
        }

    @classmethod
    def from_json(cls, data: dict) -> CleanPage:
        return cls(
            number=data["number"],
            text=data["text"],
            sections=[SectionStart(t, o, lv, ref) for t, o, lv, ref in data.get("sections", [])],
        )


@dataclass
class Extracted:
    pages: list[CleanPage]
    parser: str
    parser_version: str
    page_count: int
    # What the raw text says about the file before cleaning drops it (the arXiv stamp in the
    # margin of page 1): knowledge.metadata.infer_metadata's result.
    metadata: dict = field(default_factory=dict)


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


_JUNK_TITLE = re.compile(r"^(?:untitled|microsoft word|document\d*|slide \d+)|\.(?:pdf|docx?|tex|dvi)$", re.IGNORECASE)


def plausible_title(text: str) -> str:
    """`text` as a title (whitespace collapsed) if it reads like one, else ""."""
    title = " ".join(text.split())
    words = title.split()
    letters = sum(c.isalpha() for c in title)
    if not 1 <= len(words) <= 40 or len(title) > 300 or letters < 0.5 * len(title) or _JUNK_TITLE.search(title):
        return ""
    return title


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


# ---------------------------------------------------------------------------
# Cleaning
# ---------------------------------------------------------------------------


def normalise_unicode(text: str) -> str:
    return normalise(text)


def _shape(line: str) -> str:
    # Running headers differ only in their page number ("6 J. Wang, ..." / "8 J. Wang, ...").
    # and may carry it before or after the text ("Manuscript submitted to ACM 1").
    shape = re.sub(r"\d+", "#", re.sub(r"\s+", " ", line.strip().lower()))
    return re.sub(r"^#\s+|\s+#$", "", shape)


def _running_lines(pages: list[list[str]], edge: int = 3) -> set[str]:
    """Shapes of lines that repeat at the top or bottom of many pages."""
    if len(pages) < 3:
        return set()
    counts: Counter[str] = Counter()
    for lines in pages:
        non_empty = [ln for ln in lines if ln.strip()]
        candidates = {_shape(ln) for ln in non_empty[:edge] + non_empty[-edge:]}
        counts.update(c for c in candidates if c and c != "#")
    threshold = max(3, int(0.3 * len(pages)))
    return {shape for shape, n in counts.items() if n >= threshold and len(shape) > 3}


def _strip_edges(lines: list[str], running: set[str], edge: int = 3) -> list[str]:
    keep = list(lines)
    n = len(keep)
    for i in list(range(min(edge, n))) + list(range(max(0, n - edge), n)):
        line = keep[i].strip()
        if not line:
            continue
        if _PAGE_NUMBER.match(line) or _shape(line) in running or _ARXIV_STAMP.match(line):
            keep[i] = ""
    return [ln for ln in keep if ln.strip()]


def _vocabulary(pages: list[list[str]]) -> tuple[set[str], set[str]]:
    """Words of the document, and the first parts ("pre-", "self-") of hyphenated
    compounds written on one line."""
    words: set[str] = set()
    compounds: set[str] = set()
    for lines in pages:
        for line in lines:
            for token in re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*", line):
                low = token.lower()
                if "-" in low:
                    compounds.add(low.split("-", 1)[0] + "-")
                else:
                    words.add(low)
    return words, compounds


def _dehyphenate(lines: list[str], words: set[str], compounds: set[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        while i + 1 < len(lines):
            m = _HYPHEN_END.search(line)
            nxt = lines[i + 1].lstrip()
            w = _WORD_START.match(nxt)
            if not m or not w:
                break
            left, right = m.group(1), w.group(1)
            joined = (left + right).lower()
            keep_hyphen = f"{left.lower()}-" in compounds and joined not in words
            glue = "-" if keep_hyphen else ""
            line = line[: m.start()] + left + glue + right
            rest = nxt[len(right):]
            # The rest of the next line stays on this line, so the word is whole.
            line = line + rest.rstrip()
            i += 1
        out.append(line)
        i += 1
    return out


def _heading(line: str) -> tuple[str, int] | None:
    """(title, level) if the line looks like a section heading."""
    text = line.strip()
    if not text or len(text) > 100:
        return None
    low = text.lower().rstrip(":. ")
    if low in _NAMED_SECTIONS and text[0].isupper():
        return text.rstrip(":. "), 1
    m = _NUMBERED_HEADING.match(text)
    if m:
        title = m.group("title").strip()
        words = title.split()
        digits = sum(ch.isdigit() for ch in title)
        if (
            len(words) <= 12
            and digits <= 2
            and not _SENTENCE_END.search(title.rstrip(":"))
            and not re.search(r"[=<>%@]|\s[a-z]\s|,$", title)
            # A last word like "such" or "the" means a sentence wrapped onto this line.
            and words[-1].lower() not in _TRAILING_FUNCTION_WORDS
            and sum(w[0].isupper() for w in words if w[0].isalpha()) >= max(1, len(words) // 3)
        ):
            level = m.group("num").count(".") + 1
            return f"{m.group('num')} {title}", level
    m = _ROMAN_HEADING.match(text)
    if m:
        return f"{m.group('num')}. {m.group('title').strip()}", 1
    return None


def _plausible_number(title: str, numbering: dict[str, int]) -> bool:
    """Whether a numbered heading fits the numbering seen so far, and note it if it does.

    Section numbers rise one at a time; a "heading" numbered far ahead of the last one is a
    figure or axis label that happens to start with a number ("20 Total Retrieved Documents
    (~4K tokens)" after "1 Introduction"). Letters (appendices) and Roman numerals pass.
    """
    top = title.split(".", 1)[0].split(" ", 1)[0]
    if not top.isdigit():
        return True
    number, last = int(top), numbering.get("top", 0)
    if not last <= number <= last + 2:
        return False
    numbering["top"] = number
    return True


def _paragraphs(lines: list[str], numbering: dict[str, int] | None = None) -> list[tuple[str, tuple[str, int] | None]]:
    """Group lines into paragraphs; each heading is a paragraph of its own.

    `numbering` carries the last top-level section number from page to page."""
    numbering = {} if numbering is None else numbering
    lengths = [len(ln) for ln in lines if len(ln) > 20]
    typical = statistics.median(lengths) if lengths else 60
    paragraphs: list[tuple[str, tuple[str, int] | None]] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            paragraphs.append((" ".join(current), None))
            current.clear()

    for line in lines:
        line = re.sub(r"\s+", " ", line).strip()
        if not line:
            flush()
            continue
        head = _heading(line)
        if head and not _plausible_number(head[0], numbering):
            head = None
        if head:
            flush()
            paragraphs.append((line, head))
            continue
        if line[:1] in "•●▪◦\u2013" and current:
            flush()
        current.append(line)
        # A line clearly shorter than the column that ends a sentence ends its paragraph.
        if _SENTENCE_END.search(line) and len(line) < 0.8 * typical:
            flush()
    flush()
    return paragraphs


def clean_pages(raw_pages: Sequence[str]) -> list[CleanPage]:
    """Clean the raw text of each page (see the module docstring); page numbers are 1-based."""
    split = [normalise_unicode(text).split("\n") for text in raw_pages]
    running = _running_lines(split)
    stripped = [_strip_edges(lines, running) for lines in split]
    words, compounds = _vocabulary(stripped)
    pages: list[CleanPage] = []
    in_references = False
    numbering: dict[str, int] = {}
    for number, lines in enumerate(stripped, start=1):
        parts: list[str] = []
        sections: list[SectionStart] = []
        offset = 0
        for text, head in _paragraphs(_dehyphenate(lines, words, compounds), numbering):
            if head:
                title, level = head
                bare = re.sub(r"^[\dA-Z.IVX]+\s+", "", title).lower() if title[:1].isdigit() or " " in title else title.lower()
                if title.lower() in REFERENCE_TITLES or bare in REFERENCE_TITLES:
                    in_references = True
                elif in_references and (level == 1 or title[:1].isalpha()):
                    # A top-level heading after the references (an appendix) ends them.
                    in_references = False
                sections.append(SectionStart(title=title, offset=offset, level=level, is_reference=in_references))
            parts.append(text)
            offset += len(text) + 2
        pages.append(CleanPage(number=number, text="\n\n".join(parts), sections=sections))
    return pages


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


class _HTMLText(HTMLParser):
    _BLOCK = {"p", "div", "li", "tr", "br", "section", "article", "pre", "blockquote", "table", "ul", "ol", "dd", "dt"}
    _SKIP = {"script", "style", "noscript", "template", "head"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[tuple[str, int]] = []
        self.buffer: list[str] = []
        self.level = 0
        self.skip = 0

    def _flush(self) -> None:
        text = re.sub(r"\s+", " ", "".join(self.buffer)).strip()
        if text:
            self.blocks.append((text, self.level))
        self.buffer = []
        self.level = 0

    def handle_starttag(self, tag: str, attrs: list) -> None:  # type: ignore[override]
        if tag in self._SKIP:
            self.skip += 1
        elif re.fullmatch(r"h[1-6]", tag):
            self._flush()
            self.level = int(tag[1])
        elif tag in self._BLOCK:
            self._flush()

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP:
            self.skip = max(0, self.skip - 1)
        elif re.fullmatch(r"h[1-6]", tag) or tag in self._BLOCK:
            self._flush()

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.buffer.append(data)


def _html_blocks(text: str) -> list[tuple[str, int]]:
    parser = _HTMLText()
    parser.feed(normalise_unicode(text))
    parser.close()
    parser._flush()
    return parser.blocks
