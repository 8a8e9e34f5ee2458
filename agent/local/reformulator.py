"""Local reformulator: new sub-queries from the facts the audit found missing.

Each missing fact becomes a keyword query: its anchor terms first (names, acronyms, numbers
are what BM25 finds best), then its remaining content words, without question words. An
unconfirmed premise is searched as its own statement. A query already tried is never sent
again. Limit: no synonyms or related terms are added (offline, without a thesaurus), so a
fact worded differently from the paper is not found by rewording.
"""

from __future__ import annotations

import re

from agent.local.text import STOPWORDS, anchor_terms
from agent.types import AuditResult, Plan, Reformulation

# How the auditor names an unconfirmed premise among the missing facts.
PREMISE_PREFIX = "confirmation of the premise that "
_QUESTION_WORDS = {"what", "how", "which", "who", "why", "when", "where", "does", "did", "do", "is", "are"}


def _keywords(fact: str) -> str:
    tokens = re.findall(r"[\w\-\.@%]+", fact)
    anchors = [t.strip(".") for t in tokens if anchor_terms(t)]
    rest = [t.strip(".") for t in tokens if t.lower() not in STOPWORDS and t.lower() not in _QUESTION_WORDS
            and t not in anchors and len(t) > 2]
    return " ".join(dict.fromkeys(anchors + rest))


class KeywordReformulator:
    def reformulate(self, question: str, plan: Plan, audit: AuditResult, tried: list[str]) -> Reformulation:
        seen = {t.strip().lower() for t in tried}
        queries: list[str] = []
        for fact in audit.missing or plan.facts:
            fact = fact.removeprefix(PREMISE_PREFIX)
            for candidate in (_keywords(fact), _keywords(f"{fact} {question}")):
                if candidate and candidate.lower() not in seen and candidate not in queries:
                    queries.append(candidate)
                    seen.add(candidate.lower())
                    break
            if len(queries) == 3:
                break
        return Reformulation(sub_queries=queries)
