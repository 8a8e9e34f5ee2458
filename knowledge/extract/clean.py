"""Cleaning extracted text into pages, and the types every format returns, without Django.

The result of any extractor is an `Extracted`: a list of `CleanPage`s, the cleaned text of each
page plus the section headings that start on it. Chunk offsets (knowledge.chunking) point
into `CleanPage.text`, so a citation can show the exact passage and open the PDF at its page.

Cleaning, in order (see `clean_pages`):
1. Unicode NFKC (ligatures such as "ﬁ" become "fi"), drop soft hyphens, zero-width and
   control characters.
2. Drop running headers and footers: a line among the first or last three of a page whose
   shape (digits folded) repeats on many pages; and bare page numbers there.
3. Move footnote links ("3https://...") printed between the lines of a sentence to the end
   of the page. Join words hyphenated across line breaks and page breaks ("repre-" +
   "sentation"). The hyphen is kept only when the document itself spells the word with a
   hyphen elsewhere and never without ("pre-trained"), so compound words survive, and in
   hyphenated names ("XOR-" + "RETRIEVE", "GPT-" + "4").
4. Rebuild paragraphs from lines (a short line ending a sentence closes a paragraph),
   headings on their own paragraph; paragraphs are separated by a blank line.
5. Detect section headings ("3.1 Problem Formalization", "Abstract", "References").
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from knowledge.text import normalise
from knowledge.text.sentences import NAMED_SECTIONS

# Bump when cleaning or section detection changes: extracted text is cached per version.
CLEANER_VERSION = "5"

REFERENCE_TITLES = {"references", "bibliography", "literature cited", "works cited", "reference"}
_NAMED_SECTIONS = NAMED_SECTIONS | REFERENCE_TITLES
_NUMBERED_HEADING = re.compile(
    r"^(?P<num>(?:[1-9]\d?|[A-H])(?:\.\d{1,2}){0,3})\.?\s+(?P<title>[A-Z][^\n]{1,90})$"
)
_ROMAN_HEADING = re.compile(r"^(?P<num>(?:I|II|III|IV|V|VI|VII|VIII|IX|X))\.\s+(?P<title>[A-Z][A-Z \-:,&]{2,80})$")
_PAGE_NUMBER = re.compile(r"^(?:page\s+)?[-\u2013]?\s*\d{1,4}\s*[-\u2013]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_ARXIV_STAMP = re.compile(r"^arXiv:\d{4}\.\d{4,5}(?:v\d+)?\s+\[[\w.\-]+\]\s+\d{1,2}\s+\w{3}\s+\d{4}$")
# A line that ends in a hyphen after a word or a number ("repre-", "GPT-3.5-").
_HYPHEN_END = re.compile(r"\b([A-Za-z0-9]+)-$")
# After a suspended hyphen ("short- and long-term", "20- or 30-document") the line break stays.
# A footnote that is a link, on a line of its own: "3https://pubmed.ncbi.nlm.nih.gov/",
# "2 http://anserini.io/".
_FOOTNOTE_LINK = re.compile(r"^\s*\d{1,2}\s?(?:https?://|www\.)\S*(?:\s+\d{1,2}\s?(?:https?://|www\.)\S*)*\s*$")
# The rest of a link wrapped onto the next line: one token with a slash, no sentence in it.
_LINK_REST = re.compile(r"^\s*[\w.~%#?=&-]*/[\w./~%#?=&-]*\s*$")
_SUSPENDED = frozenset(["and", "or", "to", "nor", "vs"])
_CAPTION_LINE = re.compile(r"(?:Figure|Fig\.|Table|Tab\.)\s*[A-Z]?\d")
# The word after a line-end hyphen: a lower-case continuation, or a capitalised or numbered
# part of a hyphenated name ("XOR-" + "RETRIEVE", "GPT-" + "4").
_WORD_START = re.compile(r"^([a-z][A-Za-z]*|[A-Z][A-Za-z]*|\d+(?:\.\d+)?)")
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


def _vocabulary(pages: list[list[str]]) -> tuple[set[str], set[str], set[str]]:
    """Words of the document, the first parts ("pre-", "self-") of hyphenated compounds
    written on one line, and those compounds whole ("multihop-rag"), all lower-cased."""
    words: set[str] = set()
    compounds: set[str] = set()
    hyphenated: set[str] = set()
    for lines in pages:
        previous = ""
        for line in lines:
            tokens = re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*", line)
            if _HYPHEN_END.search(previous.rstrip()):
                # The second half of a word broken at the line end ("deed" of "in-" + "deed")
                # is not a word the document writes.
                tokens = tokens[1:]
            previous = line
            for token in tokens:
                low = token.lower()
                if "-" in low:
                    compounds.add(low.split("-", 1)[0] + "-")
                    hyphenated.add(low)
                else:
                    words.add(low)
    return words, compounds, hyphenated


@dataclass
class _Vocabulary:
    words: set[str]
    compounds: set[str]
    hyphenated: set[str]

    def glue(self, left: str, right: str) -> str | None:
        """What joins "left-" at a line end to "right" at the start of the next line: "" or "-",
        or None when the line break stays: a suspended hyphen ("short-" + "and long-term").

        A lower-case continuation ("repre-" + "sentation") is a word broken by the line: the
        hyphen goes, unless the document writes the first part as a prefix elsewhere
        ("pre-trained"), never writes the joined word, and writes the second part as a word or
        the compound on one line ("pre-" + "train" stays "pre-train" beside "pre-trained";
        "in-" + "deed" becomes "indeed"). A capital or a
        digit after the break ("XOR-" + "RETRIEVE", "Retrieval-" + "Augmented", "GPT-" + "4")
        is a hyphenated name, unless the document writes it joined elsewhere and never
        hyphenated ("MI-" + "RAGE" is "MIRAGE", "Tensor-" + "Flow" is "TensorFlow").
        """
        joined = (left + right).lower()
        if right.lower() in _SUSPENDED:
            return None
        if not (left[-1].isalpha() and right[:1].isalpha()) or not right[:1].islower():
            # A number on either side ("GPT-" + "4", "30-" + "document") keeps its hyphen too.
            joined_elsewhere = (joined in self.words and f"{left}-{right}".lower() not in self.hyphenated
                                and left[-1].isalpha() and right[:1].isalpha())
            return "" if joined_elsewhere else "-"
        compound = f"{left}-{right}".lower()
        if f"{left.lower()}-" not in self.compounds or joined in self.words:
            return ""
        known = right.lower() in self.words or any(h.startswith(compound) for h in self.hyphenated)
        return "-" if known else ""


def _dehyphenate(lines: list[str], vocabulary: _Vocabulary) -> list[str]:
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
            glue = vocabulary.glue(left, right)
            if glue is None:
                break
            line = line[: m.start()] + left + glue + right
            rest = nxt[len(right):]
            # The rest of the next line stays on this line, so the word is whole.
            line = line + rest.rstrip()
            i += 1
        out.append(line)
        i += 1
    return out


def _join_page_breaks(pages: list[list[str]], vocabulary: _Vocabulary) -> None:
    """A word hyphenated across a page break ("... a simple regres-" / "sion function ...")
    is made whole on the page where it starts; the next page starts after it (in place). A
    hyphenated name ("In-" / "Context RALM: ...") takes its whole line along."""
    for before, after in itertools.pairwise(pages):
        if not before or not after:
            continue
        m = _HYPHEN_END.search(before[-1].rstrip())
        w = _WORD_START.match(after[0].lstrip())
        glue = vocabulary.glue(m.group(1), w.group(1)) if m and w else None
        if glue is None:
            continue
        left, right = m.group(1), w.group(1)
        # The word's closing punctuation comes along ("mem-" / "ory. Other ..." ends "memory.").
        right += re.match(r"[.,;:!?)\]\"'\u201d\u2019]*", after[0].lstrip()[len(right):]).group()
        rest = after[0].lstrip()[len(right):].lstrip()
        if not right[:1].islower():
            if left[:1].islower() or _CAPTION_LINE.match(after[0].lstrip()):
                # A lower-case word's hyphen before a capital is no name: the next page starts
                # with a float ("autoregres-" / "Figure 1. Training ..."), and the word's rest
                # comes after it.
                continue
            # A name ("In-" / "Context RALM: ..."): the next page's text would start with a
            # capital, which no sentence runs on into, so the whole line comes along.
            right, rest = after[0].lstrip(), ""
        before[-1] = before[-1].rstrip()[: m.start()] + left + glue + right
        if rest:
            after[0] = rest
        else:
            del after[0]


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


def _footnote_lines(lines: list[str]) -> list[bool]:
    """Which lines are footnote links, or the wrapped rest of one ("io/en/master/.")."""
    flags: list[bool] = []
    for line in lines:
        wrapped = bool(flags) and flags[-1] and bool(_LINK_REST.match(line))
        flags.append(bool(_FOOTNOTE_LINK.match(line)) or wrapped)
    return flags


_ENDS_SENTENCE = re.compile(r"(?<!\bal)(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bcf)[a-z0-9)\]%][.!?][\"'\u201d\u2019)]?$")


def _place_notes(lines: list[str], notes: list[str]) -> list[str]:
    """Footnote links printed at the foot of a column sit between the lines of a sentence that
    runs on into the next column: they get a paragraph of their own after the page's last
    full sentence, so no sentence is cut by them (and one running on to the next page still
    runs on)."""
    if not notes:
        return lines
    ends = [i for i, line in enumerate(lines) if _ENDS_SENTENCE.search(line.rstrip())]
    at = ends[-1] + 1 if ends else 0
    return [*lines[:at], "", *notes, "", *lines[at:]]


def clean_pages(raw_pages: Sequence[str]) -> list[CleanPage]:
    """Clean the raw text of each page (see the module docstring); page numbers are 1-based."""
    split = [normalise_unicode(text).split("\n") for text in raw_pages]
    running = _running_lines(split)
    stripped = [_strip_edges(lines, running) for lines in split]
    vocabulary = _Vocabulary(*_vocabulary(stripped))
    is_note = [_footnote_lines(lines) for lines in stripped]
    notes = [[ln for ln, note in zip(lines, flags, strict=True) if note] for lines, flags in zip(stripped, is_note, strict=True)]
    stripped = [[ln for ln, note in zip(lines, flags, strict=True) if not note]
                for lines, flags in zip(stripped, is_note, strict=True)]
    _join_page_breaks(stripped, vocabulary)
    stripped = [_place_notes(lines, page_notes) for lines, page_notes in zip(stripped, notes, strict=True)]
    pages: list[CleanPage] = []
    in_references = False
    numbering: dict[str, int] = {}
    for number, lines in enumerate(stripped, start=1):
        parts: list[str] = []
        sections: list[SectionStart] = []
        offset = 0
        for text, head in _paragraphs(_dehyphenate(lines, vocabulary), numbering):
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
