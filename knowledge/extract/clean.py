"""Cleaning extracted text into pages, and the types every format returns, without Django.

The result of any extractor is an `Extracted`: a list of `CleanPage`s, the cleaned text of each
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

import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

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


_JUNK_TITLE = re.compile(r"^(?:untitled|microsoft word|document\d*|slide \d+)|\.(?:pdf|docx?|tex|dvi)$", re.IGNORECASE)


def plausible_title(text: str) -> str:
    """`text` as a title (whitespace collapsed) if it reads like one, else ""."""
    title = " ".join(text.split())
    words = title.split()
    letters = sum(c.isalpha() for c in title)
    if not 1 <= len(words) <= 40 or len(title) > 300 or letters < 0.5 * len(title) or _JUNK_TITLE.search(title):
        return ""
    return title


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
