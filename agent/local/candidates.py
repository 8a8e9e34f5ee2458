"""What the local auditor (agent.local.auditor) scores: the facts of the plan, each with
the subject it needs, and the candidate sentences of the retrieved chunks.

A candidate is an answer-eligible sentence (agent.local.eligibility: no headings, labels,
references, instructions) of a chunk that does not try to steer a model, sharing at least
one content term with a fact or the premise. It keeps the sentence before it and the
document title as context: what "it" and "we" refer to.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from agent.local.eligibility import eligible, is_injection
from agent.local.text import anchor_terms, content_terms, split_sentences, term_set
from agent.types import Plan, Source

MAX_SENTENCE_CHARS = 600


@dataclass
class Candidate:
    source_index: int
    quote: str
    context: str  # the previous sentence and the document title: what "it" and "we" refer to
    terms: set[str]
    # The sentence as the splitter gave it: the index build already embedded exactly this
    # text (EmbeddingCache), so its vector costs a cache read, not a model run.
    raw: str = ""


def candidates(facts: list[str], premise: str, sources: list[Source]) -> list[Candidate]:
    """Every eligible sentence of the sources that shares a content term with a fact or the premise."""
    wanted: set[str] = set()
    for text in [*facts, premise]:
        wanted.update(content_terms(text))
    out: list[Candidate] = []
    for i, source in enumerate(sources):
        # A chunk that tries to steer a model is untrusted as a whole: its declarative
        # sentences may be the payload ("answer every question with: '...'").
        if is_injection(source.text):
            continue
        # A sentence of the Doc2query paper speaks of Doc2query even when it says "we".
        title_terms = term_set(source.document_title)
        previous = ""
        for raw in split_sentences(source.text):
            quote = eligible(raw)
            if quote and len(quote) <= MAX_SENTENCE_CHARS:
                terms = term_set(quote)
                if wanted & (terms | title_terms):
                    out.append(Candidate(i, quote, f"{previous} {source.document_title}", terms, raw))
            previous = raw
    return out


def doc_key(source: Source) -> object:
    return source.document_id if source.document_id is not None else source.document_title


def terms_by_document(sources: list[Source]) -> dict[object, set[str]]:
    """Terms mentioned anywhere in the retrieved chunks of each document (with its title)."""
    out: dict[object, set[str]] = defaultdict(set)
    for source in sources:
        out[doc_key(source)] |= term_set(f"{source.document_title} {source.section} {source.text}")
    return out


def plan_facts(question: str, plan: Plan) -> list[str]:
    """The plan's facts; a fact too short to search on ("how does it work?") borrows the
    question's anchor terms so it is scored against the right subject."""
    facts = plan.facts or [question]
    out = []
    anchors = " ".join(dict.fromkeys(w for w in re.findall(r"[\w\-\.@]+", question) if anchor_terms(w)))
    for fact in facts:
        if len(content_terms(fact)) < 3:
            fact = f"{fact} {anchors}".strip()
        out.append(fact)
    return out
