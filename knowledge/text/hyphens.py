"""Words a line break cut, joined when text is quoted; and the one quote locator, which finds a
quote in the stored text whichever way its hyphens were written.

Ingestion joins most words a line break cut ("repre-" / "sentation", knowledge.extract.clean),
but not those whose second part starts with a capital ("Chat-" / "GPT", "MS-" / "MARCO") or
that a column or page break cut: the stored chunk text keeps "Chat- GPT", "regres- sion".
Fixing that at ingestion changes chunk text and boundaries, which moves answers
(docs/benchmarks.md, "Clean text with a control ingest (stop 29)"). So the stored text stays as
it is, and the words are joined where a reader sees them: an answer's sentences and its quotes
(agent.verify's verifier, after every citation has been checked against the stored text).

Whether "X- Y" is one word ("ChatGPT", "regression") or a compound broken at its own hyphen
("MS-MARCO", "pre-trained", "30B-Instruct") is decided by evidence, not by a word list:
1. the texts at hand (the cited document's chunks first, then all retrieved ones): the joined
   form and the hyphenated form are counted where they are written whole, on one line; the
   more frequent wins, a tie keeps the hyphen (the document writes the compound so);
2. no evidence: a part that holds a hyphen of its own is a compound broken at one of its hyphens
   ("end- to-end": the hyphen stays); two lower-case words are a syllable break and are joined
   (as ingestion does); a name before a word the texts write on its own is a compound ("BM25-
   based"); anything else (a name before a name) is left as it is stored.
A suspended hyphen ("pre- and post-training", "first- or second-order") is never touched.
The evidence decides only whether a break is joined: the word keeps the two halves as printed,
their case included ("ZERO- SCROLLS", set in capitals on that line, is "ZEROSCROLLS" although the
paper elsewhere writes "ZeroSCROLLS"), so a quote is the printed words with the line break
mended and nothing else changed, and the reader finds them so on the page.

`quote_span` locates a quote in a text as a reader would: case, whitespace and hyphens between
word characters aside ("pretrained", "pre-trained" and "pre- trained" are the same text), so a
quote with its words joined still finds, and highlights, the stored words it came from.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

# "X- Y": a word, its hyphen, one whitespace character, the next word. The right part may carry
# its own hyphens or slashes ("end- to-end", "3.5- turbo-16k", "BioASQ- Y/N").
_BREAK = re.compile(r"(?<![\w\-])(?P<left>[^\W_](?:[\w.\-/]*[^\W_])?)-\s(?P<right>[^\W_][\w]*(?:[-./][^\W_][\w]*)*)")
# A suspended hyphen: the first word's second part is shared with the word after the conjunction.
_SUSPENDED = frozenset(["and", "or", "nor", "to", "vs", "versus", "as", "than", "but", "then"])
# A word as it is written whole: letters and digits joined by hyphens, dots or slashes.
_WORD = re.compile(r"[^\W_](?:[\w.\-/]*[^\W_])?")


class Vocabulary(Counter):
    """How often each word form (case-folded) is written whole in some texts. A compound also
    counts its runs of two or more parts ("state-of-the-art" counts "state-of", "of-the", ...),
    so "In- Context" finds the "in-context" of "in-context-learning"."""

    @classmethod
    def of(cls, texts: Iterable[str]) -> Vocabulary:
        vocab = cls()
        for text in texts:
            for word in _WORD.findall(text):
                low = word.casefold()
                vocab[low] += 1
                parts = low.split("-")
                if 2 < len(parts) <= 8:
                    for i in range(len(parts)):
                        for j in range(i + 2, len(parts) + 1):
                            if j - i < len(parts):
                                vocab["-".join(parts[i:j])] += 1
        return vocab


def _glue(left: str, right: str, evidence: Sequence[Vocabulary]) -> str | None:
    """"" to join, "-" to keep the hyphen, None to leave the break as it is."""
    joined, hyphened = f"{left}{right}".casefold(), f"{left}-{right}".casefold()
    for vocab in evidence:
        j, h = vocab.get(joined, 0), vocab.get(hyphened, 0)
        if j or h:
            return "" if j > h else "-"
    if "-" in left or "-" in right:
        # A compound broken at one of its own hyphens ("end- to-end", "state-of- the-art").
        return "-"
    first = right.split("-", 1)[0]
    if left.isalpha() and left.islower() and first.isalpha() and first.islower():
        return ""
    if not left.islower() and first.isalpha() and first.islower() and any(v.get(first.casefold()) for v in evidence):
        # A name before a word the texts write on its own ("BM25- based"): a compound.
        return "-"
    return None


def line_broken(text: str) -> bool:
    """Whether a line break may have cut a word in `text` (a hyphen before a space or newline):
    the cheap test before reading any vocabulary."""
    return "- " in text or "-\n" in text


def join_line_breaks(text: str, evidence: Sequence[Vocabulary]) -> str:
    """`text` with each word a line break cut ("Chat- GPT", "MS- MARCO") written whole as the
    evidence says it is written ("ChatGPT", "MS-MARCO"), each half in its printed case; see the
    module docstring."""
    if not line_broken(text):
        return text

    def fix(m: re.Match) -> str:
        left, right = m.group("left"), m.group("right")
        if right.split("/", 1)[0].casefold() in _SUSPENDED or (left.isdigit() and right[:1].isdigit()):
            return m.group(0)
        glue = _glue(left, right, evidence)
        return m.group(0) if glue is None else f"{left}{glue}{right}"

    return _BREAK.sub(fix, text)


# ---------------------------------------------------------------------------
# Finding a quote in a text (the verifier, the citation panel, the PDF viewer, the API)
# ---------------------------------------------------------------------------


def _normalise_with_map(text: str) -> tuple[str, list[int]]:
    """Lower-cased text with whitespace runs collapsed, and each output char's input offset."""
    out: list[str] = []
    offsets: list[int] = []
    prev_space = True
    for i, ch in enumerate(text):
        if ch.isspace():
            if not prev_space:
                out.append(" ")
                offsets.append(i)
            prev_space = True
            continue
        out.append(ch.lower())
        offsets.append(i)
        prev_space = False
    if out and out[-1] == " ":
        out.pop()
        offsets.pop()
    return "".join(out), offsets


def normalise(text: str) -> str:
    """Lower case, whitespace runs collapsed to one space: how quotes are compared."""
    return _normalise_with_map(text)[0]


# A hyphen between word characters, with the space a line break left after it ("pre- trained").
_WORD_HYPHEN = re.compile(r"(?<=[^\W_])- ?(?=[^\W_])")


def _without_hyphens(text: str, offsets: list[int]) -> tuple[str, list[int]]:
    keep = [True] * len(text)
    for match in _WORD_HYPHEN.finditer(text):
        for k in range(match.start(), match.end()):
            keep[k] = False
    return "".join(c for c, k in zip(text, keep, strict=True) if k), [o for o, k in zip(offsets, keep, strict=True) if k]


def quote_span(quote: str, text: str, hint: int = -1) -> tuple[int, int] | None:
    """Where `quote` sits in `text` as (start, end) offsets into `text`, or None: the one quote
    locator of the portal (the verifier, the citation panel's highlight, the PDF viewer, the
    API's quote_start/quote_end).

    Compared case- and whitespace-insensitively; on a miss, hyphens between word characters
    aside in both (a quote whose line-break hyphens were joined, `join_line_breaks`, still finds
    the stored words). `hint` is an offset recorded earlier (Citation.quote_start): the
    occurrence that starts there wins, so a quote that occurs twice marks the one that was
    audited, and a stale hint falls back to the first occurrence rather than marking wrong words.
    """
    q, _ = _normalise_with_map(quote)
    if not q:
        return None
    hay, offsets = _normalise_with_map(text)

    def forms() -> Iterator[tuple[str, str, list[int]]]:
        yield q, hay, offsets
        # Only a miss needs the form without hyphens.
        yield (_without_hyphens(q, list(range(len(q))))[0], *_without_hyphens(hay, offsets))

    if hint >= 0:
        for needle, haystack, where in forms():
            at = bisect.bisect_left(where, hint)
            if needle and at < len(haystack) and where[at] == hint and haystack.startswith(needle, at):
                return where[at], where[at + len(needle) - 1] + 1
    for needle, haystack, where in forms():
        pos = haystack.find(needle) if needle else -1
        if pos >= 0:
            return where[pos], where[pos + len(needle) - 1] + 1
    return None
