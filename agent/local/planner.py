"""Rule-based planner: complexity, facts, 1-3 sub-queries and the question's premise.

1. Split the question into sentences; a declarative sentence before the question is a
   premise the question takes for granted ("BEIR includes a docT5query baseline. How...").
2. A comparison ("X and Y both ...", "between X and Y", "X vs Y", "compare X with Y",
   "Did each of them ...: X and Y") yields one sub-query per side, each with the shared topic.
3. Otherwise each interrogative clause ("..., and how ...?") becomes a fact and a sub-query.
4. "Why does X do Y?" / "Since X, ..." / "Following X, ..." presuppose X: that is the premise.
"""

from __future__ import annotations

import re

from agent.local.text import content_terms
from agent.types import Complexity, Plan

_WH = r"(?:what|how|which|who|whom|when|where|why|did|does|do|is|are|was|were|can|could|has|have)"
_CLAUSE_SPLIT = re.compile(rf",?\s+and\s+(?={_WH}\b)|;\s+", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
_COMPARISONS = [
    re.compile(r"^how\s+(?:do|does|did)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+(?:differ|compare)\b(?P<rest>.*)$", re.IGNORECASE),
    re.compile(r"^(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+both\b(?P<rest>.*)$", re.IGNORECASE),
    re.compile(r"\bbetween\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)(?P<rest>[?.,].*|$)", re.IGNORECASE),
    re.compile(r"^(?P<pre>.*?)\b(?P<a>[\w\-\. ]+?)\s+(?:vs\.?|versus)\s+(?P<b>[\w\-\. ]+)(?P<rest>.*)$", re.IGNORECASE),
    re.compile(r"\bcompare\s+(?P<a>.+?)\s+(?:with|to|and)\s+(?P<b>.+?)(?P<rest>[?.,].*|$)", re.IGNORECASE),
    re.compile(r"^(?P<pre>.*?):\s+(?P<a>[^:]+?)\s+and\s+(?P<b>(?:the\s+)?[^:.]+?)\.\s*(?P<rest>.*)$", re.IGNORECASE),
]
_WHY_PREMISE = re.compile(
    r"^why\s+(?:did|does|do|was|were|is|are|has|have)\s+(?P<body>.+?)\??$", re.IGNORECASE
)
_SINCE_PREMISE = re.compile(r"^(?:since|given that|because|as)\s+(?P<body>[^,]+),", re.IGNORECASE)
_FOLLOWING = re.compile(r"^following\s+[^,]+,\s*(?P<body>.+)$", re.IGNORECASE)


def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" ,;")


def _side(text: str) -> str:
    text = re.sub(r"^(?:the|a|an|both|how do|how does|did|does)\s+", "", _clean(text), flags=re.IGNORECASE)
    return text


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") or bool(re.match(rf"^{_WH}\b", sentence, re.IGNORECASE))


def _topic(text: str, drop: str = "") -> str:
    """The content words of `text`, without those of `drop`: the shared part of a comparison."""
    dropped = set(content_terms(drop + " compare comparison differ difference"))
    kept = [w for w in re.findall(r"[\w\-\.@']+", text) if content_terms(w) and content_terms(w)[0] not in dropped]
    return " ".join(kept[:12])


def _premise(sentences: list[str]) -> str:
    # A stated claim ("X reportedly costs 25% more. Why ...?") is the premise to check first.
    for s in sentences:
        if not _is_question(s):
            m = _FOLLOWING.match(s.strip())
            return _clean(m.group("body") if m else s).rstrip(".")
    for s in sentences:
        m = _WHY_PREMISE.match(s.strip())
        if m:
            return _clean(m.group("body"))
        m = _SINCE_PREMISE.match(s.strip())
        if m:
            return _clean(m.group("body"))
    return ""


class RulePlanner:
    def plan(self, question: str) -> Plan:
        q = _clean(question)
        sentences = [s for s in _SENTENCES.split(q) if s]
        asks = [s for s in sentences if _is_question(s)] or [q]
        statements = [s for s in sentences if not _is_question(s)]
        premise = _premise(sentences)

        for pattern in _COMPARISONS:
            m = pattern.search(q)
            if not m:
                continue
            a, b = _side(m.group("a")), _side(m.group("b"))
            if not a or not b or len(a.split()) > 8 or len(b.split()) > 8:
                continue
            topic = _topic(q, drop=f"{a} {b}")
            subs = [_clean(f"{a} {topic}"), _clean(f"{b} {topic}")]
            facts = [_clean(f"{a}: {topic}"), _clean(f"{b}: {topic}")]
            return Plan(complexity=Complexity.COMPARISON, facts=facts, sub_queries=subs, premise="")

        # Each interrogative clause is a fact; the declarative context rides along with the first.
        clauses: list[str] = []
        for ask in asks:
            clauses.extend(_clean(c) for c in _CLAUSE_SPLIT.split(ask) if _clean(c))
        facts = clauses[:3] if clauses else [q]
        context = " ".join(statements)
        if len(facts) == 1 and not statements:
            return Plan(complexity=Complexity.SIMPLE, facts=facts, sub_queries=[q], premise=premise)
        subs: list[str] = []
        if statements:
            # A multi-hop question: the statement names one document, the question another.
            subs.append(_clean(context))
            subs.append(_clean(" ".join(asks)))
        else:
            subs.append(q)
            subs.extend(facts[1:])
        subs = list(dict.fromkeys(subs))[:3]
        if statements:
            facts = [_clean(context), *facts]
        return Plan(complexity=Complexity.MULTI_PART, facts=facts[:3], sub_queries=subs, premise=premise)
