"""Local reformulator: new sub-queries from the facts the audit found missing.

Each missing fact becomes a keyword query: its anchor terms first (names, acronyms, numbers
are what BM25 finds best), then its remaining content words, without question words; the
question's names it does not repeat lead the query (a part of a multi-part question has
its subject in another part). An
unconfirmed premise is searched as its own statement. A query already tried is never sent
again. Limit: no synonyms or related terms are added (offline, without a thesaurus), so a
fact worded differently from the paper is not found by rewording.
"""

from __future__ import annotations

import re

from agent.local.candidates import without_citations
from agent.local.text import STOPWORDS, anchor_terms
from agent.types import AuditResult, Plan, Reformulation, SupportLabel

# How the auditor names an unconfirmed premise among the missing facts.
PREMISE_PREFIX = "confirmation of the premise that "
_QUESTION_WORDS = {"what", "how", "which", "who", "why", "when", "where", "does", "did", "do", "is", "are"}


def _keywords(fact: str) -> str:
    # Cited authors ("Gao et al.'s survey") name which paper is meant, not words its chunks
    # hold: in a query they match every bibliography and related-work passage citing them.
    tokens = re.findall(r"[\w\-\.@%]+", without_citations(fact))
    anchors = [t.strip(".") for t in tokens if anchor_terms(t)]
    rest = [t.strip(".") for t in tokens if t.lower() not in STOPWORDS and t.lower() not in _QUESTION_WORDS
            and t not in anchors and len(t) > 2]
    return " ".join(dict.fromkeys(anchors + rest))


def _names(question: str) -> list[str]:
    """The question's names: anchor terms and capitalised words past its first word
    ("Harrowgate" in "How is Harrowgate trained, and who annotated the manifests?"), less
    cited authors (_keywords)."""
    tokens = re.findall(r"[\w\-\.@%]+", without_citations(question))
    return list(dict.fromkeys(t.strip(".") for i, t in enumerate(tokens)
                              if anchor_terms(t) or (i > 0 and t[:1].isupper() and t.lower() not in STOPWORDS)))


def _with_subject(query: str, question: str) -> str:
    """A part of a multi-part question ("who annotated the manifests?") is searched with the
    question's names it does not repeat: its subject is in another part."""
    have = {w.lower() for w in query.split()}
    return " ".join([*(n for n in _names(question) if n.lower() not in have), query]).strip()


class KeywordReformulator:
    def reformulate(self, question: str, plan: Plan, audit: AuditResult, tried: list[str]) -> Reformulation:
        seen = {t.strip().lower() for t in tried}
        queries: list[str] = []
        # Each unanswered need as the auditor scored it (a part such as "how many GPUs was it
        # trained on?" carries the question's names there), then an unconfirmed premise.
        unanswered = [f.fact for f in audit.facts if f.label != SupportLabel.SUPPORTED]
        premises = [m for m in audit.missing if m.startswith(PREMISE_PREFIX)]
        for fact in (unanswered + premises) or audit.missing or plan.facts:
            fact = fact.removeprefix(PREMISE_PREFIX)
            for candidate in (_with_subject(_keywords(fact), question), _keywords(f"{fact} {question}")):
                if candidate and candidate.lower() not in seen and candidate not in queries:
                    queries.append(candidate)
                    seen.add(candidate.lower())
                    break
            if len(queries) == 3:
                break
        return Reformulation(sub_queries=queries)
