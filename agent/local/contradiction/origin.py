"""Who made it: a claim that its subject invented, introduced or proposed something,
against a sentence that credits that thing to a cited work ("a multi-layer bidirectional
Transformer encoder based on the original implementation described in Vaswani et al.
(2017)"). In scientific writing a citation attached to a thing names where it comes from,
so the claim's subject did not make it."""

from __future__ import annotations

import re

from agent.local.contradiction.negation import CLAUSE_END
from agent.local.contradiction.terms import content

# A verb of making something new, and what it made (up to the end of the clause).
_MADE = re.compile(r"\b(?:invent(?:s|ed|ing)?|introduc(?:e|es|ed|ing)|propos(?:e|es|ed|ing)|creat(?:e|es|ed|ing)|"
                   r"devis(?:e|es|ed|ing)|coin(?:s|ed|ing)?|pioneer(?:s|ed|ing)?)\s+(?P<what>[^,;:()?.]+)",
                   re.IGNORECASE)
# A reference: "(Vaswani et al., 2017)", "(Robertson and Zaragoza, 2009)", "Vaswani et al.
# (2017)", "[25]", "[3, 9]".
_CITATION = re.compile(r"\(\s*[A-Z][\w\-']+(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w\-']+)?,?\s+(?:19|20)\d\d[a-z]?"
                       r"(?:\s*[;,][^)]*)?\)"
                       r"|\b[A-Z][\w\-']+(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][\w\-']+)\s+\((?:19|20)\d\d[a-z]?\)"
                       r"|\[\d+(?:\s*[,\-\u2013]\s*\d+)*\]")
# The sentence's own making ("we propose", "our new"): then the thing is the authors'.
_OWN = re.compile(r"\b(?:we|our)\s+(?:\w+\s+)?(?:invent|introduc|propos|present|creat|devis|design|develop|new|novel)",
                  re.IGNORECASE)
# Content words between the thing and its citation: "... encoder based on the original
# implementation described in Vaswani et al. (2017)" (6) credits the encoder; a citation
# further on is another thing's.
_REACH = 8


def credited_elsewhere(claim: str, sentence: str) -> bool:
    """The claim says its subject made something ("X invented the Y encoder") and the
    sentence names that thing (at least two of its first three content words, or its only
    one) with a citation after it in the same clause, within _REACH content words, and
    does not say that its authors made it."""
    m = _MADE.search(claim)
    if not m or _OWN.search(sentence):
        return False
    made = [t for t in content(m.group("what")) if t not in ("new", "novel")][:3]
    if not made:
        return False
    for cite in _CITATION.finditer(sentence):
        clause = CLAUSE_END.split(sentence[: cite.start()])[-1]
        terms = content(clause)
        held = [i for i, t in enumerate(terms) if t in made]
        if len(set(terms) & set(made)) >= min(2, len(made)) and len(terms) - 1 - max(held) <= _REACH:
            return True
    return False
