"""The support check: does a sentence's verified, eligible evidence support it (agent.verify)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from agent.local.text import content_terms, coverage, term_set
from agent.verify.claims import missing_names, missing_numbers, off_subject
from agent.verify.pairing import mispaired_numbers
from agent.verify.quotes import find_quote, normalise
from agent.verify.scope import wider_subject
from agent.verify.slots import misslotted_numbers

# Calibrated by bench/calibrate_verifier.py on SciFact train claims (calibration split:
# claim id % 5 in 0,1,2; best balanced accuracy, SUPPORT vs NEI, with at most 20% of NEI
# accepted). Held out (id % 5 in 3,4; docs/benchmarks.md): 69% of SUPPORT and 16% of NEI
# claims clear it on the score alone, 52% and 7% with the number and name checks.
SUPPORT_MIN = 0.53
# Weight of key-term coverage in the support score (the rest is embedding similarity);
# the local auditor's calibrated weight (agent.local.scoring.W_COVERAGE).
W_COVERAGE = 0.5

EmbedFn = Callable[[Sequence[str]], np.ndarray]

_embed_lock = threading.Lock()
_default_embed: EmbedFn | None = None


def default_embed() -> EmbedFn:
    """The local sentence embedder (no database: the verifier embeds a handful of texts)."""
    global _default_embed
    with _embed_lock:
        if _default_embed is None:
            from agent.local.embed import get_embed

            _default_embed = get_embed()
        return _default_embed


def support_score(sentence: str, evidence: str, *, context: str = "", embed: EmbedFn | None = None) -> float:
    """W_COVERAGE * share of the sentence's key terms found in the evidence (+ context, e.g.
    the document title) + (1 - W_COVERAGE) * cosine similarity of the two embeddings."""
    terms = content_terms(sentence)
    cov = coverage(terms, term_set(f"{evidence} {context}"))
    vecs = (embed or default_embed())([sentence, evidence])
    sim = float(vecs[0] @ vecs[1])
    return W_COVERAGE * cov + (1 - W_COVERAGE) * sim


def _copied(sentence: str, quotes: Sequence[str]) -> bool:
    """The sentence is one of its quotes (or a span of one), give or take punctuation."""
    s = re.sub(r"[^\w%]+", " ", normalise(sentence)).strip()
    if not s:
        return False
    return any(s in re.sub(r"[^\w%]+", " ", normalise(q)).strip() for q in quotes)


@dataclass
class SupportResult:
    ok: bool
    reason: str = ""
    score: float | None = None
    details: dict = field(default_factory=dict)


def support(sentence: str, quotes: Sequence[str], *, context: str = "", question: str = "", chunk: str = "",
            allow_question_numbers: bool = False, embed: EmbedFn | None = None,
            support_min: float = SUPPORT_MIN) -> SupportResult:
    """Whether verified, eligible `quotes` support `sentence` (the rules in the module doc).

    `context`: the cited documents' titles and sections; `chunk`: the cited chunks' text;
    `allow_question_numbers`: a premise correction restates the question's own numbers.
    """
    evidence = " ".join(quotes)
    text = sentence
    # A sentence that embeds its quote verbatim ("the source says "..."") asserts the quote;
    # only the rest of it is checked.
    embedded = False
    for q in quotes:
        pos = find_quote(q, text)
        if pos >= 0 and len(q) > 20:
            text = (text[:pos] + " " + text[pos + len(q):]).strip()
            embedded = True
    if allow_question_numbers and embedded and not question:
        # A premise correction quoting its evidence, checked without the question: the rest
        # restates the premise it denies, which only the question could vouch for.
        return SupportResult(True, "premise correction quoting its evidence")
    numbers = missing_numbers(text, evidence, allowed=question if allow_question_numbers else "")
    if numbers:
        return SupportResult(False, f"states {', '.join(numbers)}, which its quoted evidence does not")
    # A premise correction restates the premise it denies: its numbers may be paired wrongly.
    mispaired = [] if allow_question_numbers else mispaired_numbers(text, quotes)
    if mispaired:
        return SupportResult(False, f"pairs {'; '.join(mispaired)}")
    # ... and stays in its slot: not the end of a range as "the" value, not a gain as a score.
    misslotted = [] if allow_question_numbers else misslotted_numbers(text, quotes)
    if misslotted:
        return SupportResult(False, f"states {'; '.join(misslotted)}")
    # A premise correction restates the question's names as well as its numbers.
    absent = missing_names(text, f"{evidence} {context} {question if allow_question_numbers else ''}",
                           question=question, chunk=chunk, evidence=evidence)
    if absent:
        return SupportResult(False, f"names {', '.join(absent)}, which its quoted evidence does not")
    elsewhere = "" if allow_question_numbers else off_subject(text, evidence, context=context, question=question)
    if elsewhere:
        return SupportResult(False, elsewhere)
    copied = _copied(sentence, quotes)
    # A premise correction restates the question's own subject.
    wider = "" if allow_question_numbers else wider_subject(sentence, quotes, question=question,
                                                             written=not copied, chunk=chunk)
    if wider:
        return SupportResult(False, wider)
    if copied or len(content_terms(text)) <= 1:
        return SupportResult(True, "copied from its quote")
    # A premise correction quoting its evidence restates the question's premise, which the
    # question vouches for: its words count as held, so a short quote ("The default is X.")
    # is not outweighed by the longer premise it is set against.
    vouched = f"{context} {question}" if allow_question_numbers and embedded else context
    score = support_score(sentence, evidence, context=vouched, embed=embed)
    if score < support_min:
        return SupportResult(False, f"support score {score:.2f} below {support_min:.2f}", score)
    return SupportResult(True, "", score)
