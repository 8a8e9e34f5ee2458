"""Citation verification: quotes checked verbatim, markers only to retrieved chunks.

Rules (DESIGN.md, step 5):
- a quote counts only if it occurs in the cited chunk's text, compared case- and
  whitespace-insensitively (hyphens at line breaks are tolerated: "perfor- mance");
- a marker that points outside the sources handed to the generator is dropped;
- a sentence whose cited chunks do not support it is dropped (a refusal's uncited framing
  sentences are kept: they state what was searched, not a fact);
- markers are taken from the draft's structured citations only, never from text: a "[3]"
  inside chunk text (papers cite their own references that way) is neutralised.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from agent.local.text import content_terms, coverage, term_set
from agent.types import Answer, CitationRef, Draft, DraftSentence, Outcome, Source

_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
# A sentence without a quote is supported when this share of its content terms is in the chunk.
SENTENCE_SUPPORT_COVERAGE = 0.6
# Outcomes whose framing sentences (what was searched, which paper is meant) state no fact.
_UNCITED_OK = (Outcome.REFUSAL, Outcome.CLARIFY)


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
    return _normalise_with_map(text)[0]


# A hyphen at a line break ("perfor- mance" once whitespace is collapsed).
_BREAK_HYPHEN = re.compile(r"(?<=[a-z])- (?=[a-z])")


def _searchable_forms(text: str) -> Iterator[tuple[str, list[int]]]:
    """The normalised text with its offset map, then (lazily: only a miss needs it) the same
    without line-break hyphens."""
    hay, offsets = _normalise_with_map(text)
    yield hay, offsets
    keep = [True] * len(hay)
    for match in _BREAK_HYPHEN.finditer(hay):
        keep[match.start()] = keep[match.start() + 1] = False
    yield "".join(c for c, k in zip(hay, keep) if k), [o for o, k in zip(offsets, keep) if k]


def quote_span(quote: str, text: str, hint: int = -1) -> tuple[int, int] | None:
    """Where `quote` sits in `text` as (start, end) offsets into `text`, or None: the one quote
    locator of the portal (the citation panel's highlight, the API's quote_start/quote_end).

    Compared as find_quote compares: case- and whitespace-insensitively, a line-break hyphen
    tolerated. `hint` is an offset recorded earlier (Citation.quote_start): the occurrence
    that starts there wins, so a quote that occurs twice marks the one that was audited,
    and a stale hint falls back to the first occurrence rather than marking wrong words.
    """
    q = normalise(quote)
    if not q:
        return None
    for hay, offsets in _searchable_forms(text):
        at = bisect.bisect_left(offsets, hint) if hint >= 0 else len(hay)
        pos = at if at < len(hay) and offsets[at] == hint and hay.startswith(q, at) else hay.find(q)
        if pos >= 0:
            return offsets[pos], offsets[pos + len(q) - 1] + 1
    return None


def find_quote(quote: str, text: str) -> int:
    """Offset of `quote` in `text` (case/whitespace-insensitive), or -1 if it is not there."""
    span = quote_span(quote, text)
    return span[0] if span else -1


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


def _supports(sentence: DraftSentence, source: Source) -> tuple[bool, str, int]:
    if sentence.quote:
        start = find_quote(sentence.quote, source.text)
        if start >= 0:
            return True, sentence.quote, start
        return False, "", -1
    terms = content_terms(sentence.text)
    ok = coverage(terms, term_set(source.text + " " + source.document_title)) >= SENTENCE_SUPPORT_COVERAGE
    return ok, "", -1


class CitationVerifier:
    """The deterministic verifier used by every configuration."""

    def verify(self, draft: Draft, sources: list[Source]) -> Answer:
        kept: list[DraftSentence] = []
        citations: list[CitationRef] = []
        by_chunk: dict[int, CitationRef] = {}
        dropped: list[str] = []
        for sentence in draft.sentences:
            if not sentence.citations:
                if draft.outcome in _UNCITED_OK:
                    kept.append(sentence.model_copy(update={"text": neutralise_markers(sentence.text)}))
                else:
                    dropped.append(f"uncited sentence: {sentence.text[:80]}")
                continue
            new_markers: list[int] = []
            for n in dict.fromkeys(sentence.citations):
                if not 1 <= n <= len(sources):
                    dropped.append(f"marker [{n}] points at no retrieved chunk")
                    continue
                source = sources[n - 1]
                ok, quote, start = _supports(sentence, source)
                if not ok:
                    dropped.append(f"[{n}] does not support: {sentence.text[:80]}")
                    continue
                ref = by_chunk.get(source.chunk_id)
                if ref is None:
                    ref = CitationRef(
                        marker=len(citations) + 1, chunk_id=source.chunk_id,
                        quote=quote, quote_start=start, verified=bool(quote),
                    )
                    by_chunk[source.chunk_id] = ref
                    citations.append(ref)
                new_markers.append(ref.marker)
            if new_markers:
                kept.append(DraftSentence(
                    text=neutralise_markers(sentence.text), citations=new_markers, quote=sentence.quote,
                ))
            elif draft.outcome in _UNCITED_OK:
                kept.append(DraftSentence(text=neutralise_markers(sentence.text)))
            else:
                dropped.append(f"sentence without a supporting citation: {sentence.text[:80]}")
        outcome = draft.outcome
        if outcome not in _UNCITED_OK and not any(s.citations for s in kept):
            # Nothing cited survived: an answer without evidence is not an answer.
            outcome = Outcome.REFUSAL
            kept = [DraftSentence(text="No sentence of the draft answer was supported by the retrieved passages.")]
            citations = []
        return Answer(
            outcome=outcome, sentences=kept, citations=citations,
            missing_note=draft.missing_note, suggestions=draft.suggestions, dropped=dropped,
        )
