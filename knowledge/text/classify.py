"""What kind of text a sentence is, and whether it may serve as evidence in an answer.

Extraction from PDF keeps figure legends, axis ticks, table cells, equations, line numbers
and bibliography entries in the text stream (a reader skips them; a splitter cannot). They
stay in the chunk, so a citation still shows the page as it is, but only prose is quoted as
an answer or offered as a closest passage: `is_answer_eligible`.

Pure rules over the sentence's tokens, checked by reading samples from the 25 shared
papers (bench/evidence_text.py prints a sample).
"""

from __future__ import annotations

import re
from typing import Literal

from knowledge.text.sentences import _SECTION_NUMBER, NAMED_SECTIONS, split_heading

SentenceKind = Literal[
    "prose", "heading", "figure", "table", "equation", "line_numbers", "reference", "front_matter", "fragment"
]

# An axis tick or a table cell: a number with an optional unit or ordinal suffix.
_TICK = re.compile(r"^[-+~±(]?\d+(?:[.,]\d+)?(?:%|[kKMBx\u00d7]|st|nd|rd|th)?[)]?$")
# A number glued to a capitalised word, as axis ticks run into their label ("75Accuracy",
# "0.5Recall"). One digit alone is more often a footnote mark ("2Specifically").
_GLUED_LABEL = re.compile(r"(?:\d\d|\.\d)[A-Z][a-z]{2,}")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_YEAR = re.compile(r"\b(?:19|20)\d\d[a-z]?\b")
_VENUE = re.compile(
    r"\b(?:In Proceedings|Proceedings of|Proc\.|arXiv preprint|arXiv:\s?\d{4}\.\d{4,5}|CoRR|abs/\d{4}|"
    r"Association for Computational Linguistics|Conference on|Workshop on|Transactions on|Journal of|"
    r"pages?\s+\d+\s*[-\u2013]\s*\d+|pp\.\s*\d+|doi\.org|doi:|URL https?://|Vol\.|volume \d+)",
)
_AUTHOR_INITIALS = re.compile(r"\b[A-Z][a-z]+,\s(?:[A-Z]\.\s?){1,3}(?:,|and\b)|\b(?:[A-Z]\.\s){1,2}[A-Z][a-z]+,")
# Comparison, set, arrow and operator symbols (U+2190-U+22FF) and TeX residue.
_MATH = re.compile(r"[=<>^_{}|\u2190-\u22ff]")
_SYMBOLIC = re.compile(r"[\u0370-\u03ff\u0300-\u036f\u2190-\u22ff]")
_SENTENCE_END = re.compile(r"[.!?:;][\"'\u201d\u2019)\]]*$")
# Words nearly every English sentence has at least one of; a label or legend has none.
_FUNCTION_WORDS = frozenset([
    "a", "an", "the", "of", "to", "in", "for", "and", "with", "that", "on", "by", "is", "are", "was", "were", "be",
    "been", "we", "it", "this", "as", "from", "at", "our", "which",
])
_WORD = re.compile(r"^[A-Za-z][a-z]+(?:[-'][A-Za-z]+)*[,.;:)]*$")


def _numbered_heading(text: str) -> bool:
    """A section number and a short title: "3.1 Training Details", "4.3 Selecting which
    tokens to recompute", "3.2 Why is caching insufficient?", "B.2 Data Sets."."""
    number = _SECTION_NUMBER.match(text)
    if not number:
        return False
    words = text[number.end():].split()
    if not 1 <= len(words) <= 12 or not words[0][:1].isupper():
        return False
    if re.search(r"[?:]$", text) or not _SENTENCE_END.search(text):
        return True
    # A title ending in a period is short and mostly capitalised.
    return len(words) <= 6 and sum(w[:1].isupper() for w in words) > len(words) // 2


def _tick_run(tokens: list[str], least: int = 3) -> bool:
    run = 0
    for token in tokens:
        run = run + 1 if _TICK.match(token) else 0
        if run >= least:
            return True
    return False


def _counting_run(tokens: list[str], least: int = 4) -> bool:
    """Line numbers of a review copy: consecutive integers ("041 042 043 044")."""
    run, previous = 0, None
    for token in tokens:
        value = int(token) if token.isdigit() and len(token) <= 4 else None
        run = run + 1 if value is not None and previous is not None and value == previous + 1 else (
            1 if value is not None else 0)
        previous = value
        if run >= least:
            return True
    return False


def sentence_kind(sentence: str) -> SentenceKind:
    """The kind of a sentence (see the module docstring); "prose" is what answers quote."""
    text = " ".join(sentence.split())
    tokens = text.split()
    if not tokens:
        return "fragment"
    if text.lower().rstrip(":. ") in NAMED_SECTIONS or _numbered_heading(text) or split_heading(text):
        return "heading"
    if _counting_run(tokens):
        return "line_numbers"
    if _tick_run(tokens) or _GLUED_LABEL.search(text):
        return "figure"
    if _EMAIL.search(text):
        return "front_matter"
    signals = bool(_YEAR.search(text)) + bool(_VENUE.search(text)) + bool(_AUTHOR_INITIALS.search(text))
    if signals >= 2 and (_VENUE.search(text) or _AUTHOR_INITIALS.search(text)):
        return "reference"
    words = sum(1 for t in tokens if _WORD.match(t))
    numeric = sum(1 for t in tokens if any(c.isdigit() for c in t))
    maths = len(_MATH.findall(text))
    if len(tokens) < 3:
        # "Fig. 3.", "1.", "Dot-Prod.", "...": too short to state anything a reader can check.
        return "fragment"
    if len(tokens) <= 6 and not _SENTENCE_END.search(text) and sum(t[:1].isupper() for t in tokens) > len(tokens) // 2:
        # An unnumbered heading: "Background and Related Work".
        return "heading"
    function = sum(1 for t in tokens if t.lower().strip("(),;") in _FUNCTION_WORDS)
    # Formula residue: tokens holding Greek letters, combining marks or maths symbols.
    symbolic = sum(1 for t in tokens if _SYMBOLIC.search(t))
    if symbolic >= 4 and symbolic >= 0.2 * len(tokens):
        return "equation"
    # Inline symbols in a sentence with its function words ("we use dk = dv = 64") are prose.
    if maths and (words < 0.3 * len(tokens) or (maths >= 3 and words < 0.5 * len(tokens) and function < 2)):
        return "equation"
    if len(tokens) >= 4 and function < 2 and (numeric > 0.34 * len(tokens) or words < 0.4 * len(tokens)):
        return "table"
    if len(tokens) >= 3 and words == 0:
        return "table"
    if not _SENTENCE_END.search(text) and not function:
        # No closing punctuation and no function word: a legend or an axis title.
        return "figure"
    return "prose"


def is_answer_eligible(sentence: str) -> bool:
    """Whether a sentence may be quoted as an answer or shown as evidence: prose only."""
    return sentence_kind(sentence) == "prose"
