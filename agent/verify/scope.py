"""How many things a sentence speaks of: a claim about several things needs evidence about several
(agent.verify).

A model that copies a quote's numbers can still widen its subject: "Both models reach 31.8%"
over a quote about one model, or "They both outperform BM25 on 11 of 17 datasets" as the answer
to a question about one system, where "they" names nothing the question or the answer does. The
numbers, names and support score all pass; the subject is wrong. Two rules, for a sentence whose
subject says it is collective ("They both", "Both models", "All three systems", "The two
models", "Either of them"; a bare "They" or "These" is often the authors, and is left alone):

1. its quotes speak of one thing: none has a word that may make it plural ("both", "each", "all",
   "respectively", "they", "we", "and", "or", a number of a plural noun): the sentence claims
   for several things what the quote states for one. Dropped;
2. its subject names nothing ("They both", "Both models", "All three") while the question asks
   about one thing (no coordinated names, no "compare/both/each/between/versus/differ/all"):
   the reader cannot tell what the claim is about, and it is not about what was asked. Dropped.

A sentence copied from its quote passes rule 1 (its quote is as collective as itself), and rule 2
reads only sentences a model wrote: the document's own "Both are worse than computing average
GloVe embeddings." answers a devbench calibration question whose two things the question does not
coordinate (applied to copies, rule 2 dropped 1 of 41 gold sentences there). A sentence dropped
by either rule gives way to the sentence it cites where the local auditor would answer with it
(agent.llm.drafts.quote_when_unsupported): the quote, with its own subject, stands in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.verify.claims import names

_NUMBER_WORDS = r"(?:two|three|four|five|six|seven|eight|nine|ten|\d+)"
# The subject of a sentence speaks of several things, and says so: "They both", "Both models",
# "All three", "The two systems", "Either of them". A bare "They" or "These" is left alone: it is
# as often the authors or the annotators, whom the question may name.
_COLLECTIVE_OPENER = re.compile(
    rf"^\W*(?:(?:they|these|those|we)\s+(?:both|all)\b|both\b|all\s+(?:of\b|{_NUMBER_WORDS}\b)|either\b"
    rf"|neither\b|(?:the|these|those)\s+{_NUMBER_WORDS}\b)",
    re.IGNORECASE)
# A quote with any of these may speak of several things (so rule 1 passes): conservative, as
# nearly every sentence that coordinates two nouns has an "and".
_PLURAL_MARKER = re.compile(
    rf"\b(?:both|each|all|respectively|they|them|their|these|those|either|neither|we|our|and|or"
    rf"|{_NUMBER_WORDS}\s+\w+s)\b",
    re.IGNORECASE)
_SEVERAL_ASKED = re.compile(
    r"\b(?:compare[sd]?|comparison|both|each|between|versus|vs\.?|differ\w*|respectively)\b",
    re.IGNORECASE)
# The words of a collective subject, up to its verb: "They both", "Both models", "All three systems".
_SUBJECT = re.compile(
    rf"^\W*((?:(?:they|these|those|both|each|all|either|neither|the|of|them|{_NUMBER_WORDS})\b\s*)+"
    r"(?:[a-z][\w-]*[^s\W]s\b)?)",
    re.IGNORECASE)


def collective_subject(sentence: str) -> str:
    """The opening words of the sentence when its subject speaks of several things; "" if not."""
    if not _COLLECTIVE_OPENER.search(sentence):
        return ""
    m = _SUBJECT.match(sentence)
    return (m.group(1) if m else sentence.split(" ", 1)[0]).strip()


def _coordinated_names(text: str) -> bool:
    """Two names of the text joined by "and"/"or"/","/"vs" ("ANCE and TAS-B")."""
    found = names(text)
    if len(found) < 2:
        return False
    alternatives = "|".join(re.escape(n) for n in found)
    return re.search(rf"(?:{alternatives})\W+(?:and|or|vs\.?|versus|,)\s+(?:the\s+)?(?:{alternatives})",
                     text) is not None


def speaks_of_several(text: str) -> bool:
    return bool(_PLURAL_MARKER.search(text)) or _coordinated_names(text)


def wider_subject(sentence: str, quotes: Sequence[str], *, question: str = "", written: bool = True) -> str:
    """Why the sentence's subject speaks of more things than its evidence or the question; "" if
    it does not (the rules of the module doc). `written`: the sentence is not a copy of a quote."""
    subject = collective_subject(sentence)
    if not subject:
        return ""
    if not any(speaks_of_several(q) for q in quotes):
        return f"its subject \"{subject}\" speaks of several things, its quote of one"
    if written and question and not names(subject) and not (
            _SEVERAL_ASKED.search(question) or _coordinated_names(question)):
        return f"its subject \"{subject}\" names nothing, and the question asks about one thing"
    return ""
