"""Finding a quote in a chunk, and whether a quote is answer-eligible evidence (agent.verify)."""

from __future__ import annotations

import re

from knowledge.text import collapse_spaces, is_lead_in, quotable, sentence_kind, sentence_spans, strip_marks
from knowledge.text.hyphens import normalise, quote_span

__all__ = ["clean_quote", "eligibility", "find_quote", "neutralise_markers", "normalise", "quote_span", "strip_markers"]

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
# An answer-eligible quote has at least this many words of prose ...
MIN_QUOTE_WORDS = 6
# ... or is a short complete sentence: at least this many words, a capital first letter, a
# full stop, a function word and a word in lower case that is not one ("We used
# warmup_steps = 4000.", "The default is MEAN."). Headings, labels and cut-off pieces miss one.
MIN_SHORT_SENTENCE_WORDS = 3


# ---------------------------------------------------------------------------
# Finding quotes
# ---------------------------------------------------------------------------


def find_quote(quote: str, text: str) -> int:
    """Offset of `quote` in `text` (case/whitespace-insensitive), or -1 if it is not there."""
    span = quote_span(quote, text)
    return span[0] if span else -1


_PROMPT_TAG = re.compile(r"</?(?:document|documents|evidence|question)\b[^>]*>", re.IGNORECASE)


def clean_quote(quote: str) -> str:
    """A model's quote without the prompt's own markup (small models copy the opening
    `<document id="3" title=...>` tag along with the sentence) or wrapping quotation marks."""
    text = _PROMPT_TAG.sub(" ", quote)
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) > 2 and text[0] in "\"'“" and text[-1] in "\"'”":
        text = text[1:-1].strip()
    return text


def strip_markers(text: str) -> tuple[str, list[int]]:
    """Split an LLM sentence "... [1][3]" into its text and its markers."""
    markers: list[int] = []
    for group in _MARKER.findall(text):
        markers.extend(int(n) for n in group.split(","))
    clean = _MARKER.sub("", text)
    return re.sub(r"\s+([.,;:])", r"\1", re.sub(r"\s+", " ", clean)).strip(), markers


def neutralise_markers(text: str) -> str:
    """Chunk text may contain "[12]" reference markers; never let them read as citations."""
    return _MARKER.sub(lambda m: "(ref. " + m.group(1) + ")", text)


# ---------------------------------------------------------------------------
# Answer-eligible evidence: knowledge.text.quotable, at the level of a quote
# ---------------------------------------------------------------------------

_SECTION_NUMBER = re.compile(r"^\s*(?:[A-Z]|\d+)(?:\.\d+)*\.?\s+(?=[A-Z])")
_CAPTION_LABEL = re.compile(r"^\s*(?:fig(?:ure)?|table|tab|algorithm|listing|eq(?:uation)?)\.?\s*\d+[a-z]?\s*[:.]?",
                            re.IGNORECASE)
_FUNCTION_WORDS = frozenset([
    "the", "a", "an", "of", "to", "in", "on", "at", "by", "for", "with", "from", "as", "and", "or", "but",
    "is", "are", "was", "were", "be", "been", "has", "have", "had", "we", "our", "it", "its", "this", "that",
    "these", "those", "which", "than", "not", "no", "can", "into", "each", "all", "both",
])
_WORDISH = re.compile(r"[A-Za-z][A-Za-z\-']+")
# Why a chunk sentence is not evidence, by knowledge.text.sentence_kind.
_KIND_REASONS = {
    "heading": "a section heading", "caption": "a caption label", "figure": "table or figure residue, not prose",
    "table": "table or figure residue, not prose", "equation": "an equation, not prose",
    "line_numbers": "table or figure residue, not prose", "reference": "a bibliography entry",
    "front_matter": "front matter, not a statement of the paper", "footnote": "a footnote glued into a sentence",
    "question": "a question, which states no fact", "instruction": "an instruction, not evidence",
    "example": "an example printed in the paper, not a statement of it", "fragment": "a fragment, not a sentence",
}
_LEAD_IN = "a lead-in to what follows, which states nothing"
# Kinds a quote may run over at its start without being that kind: the heading or list mark
# printed in front of the sentence it quotes ("3.1 Encoder Stacks The encoder is ...").
_LEADING_KINDS = frozenset(["heading", "fragment"])


def _span_reason(text: str) -> str:
    """Why a span of eligible sentence text states nothing a claim can rest on, or ""."""
    tokens = text.split()
    wordy = [t for t in tokens if _WORDISH.search(t) and sum(c.isalpha() for c in t) >= 2]
    if _CAPTION_LABEL.match(text) and len(tokens) <= 8:
        return "a caption label"
    if _SECTION_NUMBER.match(text) and len(tokens) <= 8 and not re.search(r"[.!?]$", text):
        return "a section heading"
    if is_lead_in(text):
        return _LEAD_IN
    function_words = sum(1 for t in tokens if t.lower().strip(",.;:()") in _FUNCTION_WORDS)
    short = len(wordy) < MIN_QUOTE_WORDS
    # A run-in heading ("Training Data and Batching.") capitalises every word but the small ones.
    lower_content = any(t[:1].islower() and t.lower().strip(",.;:()") not in _FUNCTION_WORDS for t in wordy)
    complete = text[:1].isupper() and text.endswith((".", "!")) and function_words >= 1 and lower_content
    if short and not (complete and len(wordy) >= MIN_SHORT_SENTENCE_WORDS):
        return "a fragment, not a sentence"
    if len(wordy) < 0.5 * len(tokens) or function_words < (1 if short else 2):
        # "big 6 1024 4096 16 0.3 300K 4.33 26.4 213", "(2014) [37] semi-supervised 92.1
        # Transformer (4 layers)": table rows, whose columns the quote does not name. Prose
        # has function words; rows and labels have almost none.
        return "table or figure residue, not prose"
    if text.endswith("?"):
        return "a question, which states no fact"
    return ""


def _sentence_reason(sentence: str) -> tuple[str, str]:
    """(the quotable form of a sentence, why it is not evidence when that is "")."""
    form = quotable(sentence)
    if form:
        return form, ""
    kind = sentence_kind(strip_marks(sentence))
    if kind == "fragment" and _CAPTION_LABEL.match(sentence):
        return "", "a caption label"
    if kind == "fragment" and is_lead_in(strip_marks(sentence)):
        return "", _LEAD_IN
    return "", _KIND_REASONS.get(kind, f"{kind}, not prose")


def eligibility(quote: str, chunk: str = "") -> str:
    """"" when the quote is answer-eligible evidence, else why not: the one definition
    (knowledge.text.quotable, which the index, the auditor and the model's numbered sentences
    use) at the level of a quote, which may be a span of a sentence.

    1. Each chunk sentence the quote lies in (`chunk`: the cited chunk's text; without it the
       quote is taken as a sentence of its own) must be quotable, and the quote must lie in
       its quotable form: a list mark or a heading printed in front of it may be quoted along
       (it is cut off first), any other text that is not evidence may not (a caption, figure or
       table text, a question, an instruction, a lead-in that ends in ":").
    2. A quote of whole quotable sentences is evidence: quotable has decided. A quote of part
       of one must state something as a span: a lead-in ("... are as follows:") states nothing,
       nor does a heading, a caption label or a fragment of a few words (at least
       MIN_QUOTE_WORDS words of prose, or a short complete sentence), a table row or a question.

    The span rules are why delegating to quotable alone is not enough: a model quotes part of
    a sentence ("We do not put any special markup"), which quotable, judging sentences, calls
    a fragment; and they would wrongly drop a whole sentence quotable accepts ("Lumen learns
    one weight for every vocabulary term.": one function word, which a span of table text has).
    """
    text = quote.strip()
    where = quote_span(text, chunk) if chunk else None
    if where is None:
        return _sentence_reason(collapse_spaces(text))[1]
    start, end = where
    parts: list[str] = []
    # Whether every part is a whole quotable sentence (then quotable has decided).
    whole = True
    last_why = ""
    for a, b in sentence_spans(chunk):
        if b <= start or a >= end:
            continue
        sentence = chunk[a:b]
        form, why = _sentence_reason(collapse_spaces(sentence))
        inside = quote_span(form, sentence) if form else None
        if inside is None:
            # Not evidence: only a heading or a list mark in front of the quoted sentence may
            # be quoted along with it.
            if parts or sentence_kind(collapse_spaces(sentence)) not in _LEADING_KINDS:
                return why or "a fragment, not a sentence"
            last_why = why
            continue
        lo, hi = a + inside[0], a + inside[1]
        if max(start, lo) < min(end, hi):
            parts.append(chunk[max(start, lo):min(end, hi)])
            whole = whole and start <= lo and end >= hi
    if not parts:
        return last_why or _sentence_reason(collapse_spaces(text))[1] or "a fragment, not a sentence"
    return "" if whole else _span_reason(collapse_spaces(" ".join(parts)))
