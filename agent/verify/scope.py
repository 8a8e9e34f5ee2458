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

3. it states a count of its quote ("11 out of 17", "9 of the 12") for another subject than the
   quote's: the quote's clause opens with a name the sentence's clause does not carry ("ANCE wins
   on 9 of 12 collections, TAS-B on 7" against "TAS-B wins on 9 of 12"), or with a pronoun ("They
   both ...") whose referents, the names of the sentence before the quote in the cited chunk, do
   not include the sentence's subject. A written sentence that names no subject of its own takes
   the question's (the question's names its clause lacks). A count is a tally of one subject's
   wins or hits, the slot a model most easily hands to the subject it was asked about. A quote
   about the paper's own work ("We", "Our model") lends its count to the question's subject
   (agent.verify.claims lends names the same way); a pronoun with nothing before it in the chunk
   flags nothing.

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

from agent.verify.claims import SPELLED, _name_forms, names
from agent.verify.quotes import find_quote

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


def wider_subject(sentence: str, quotes: Sequence[str], *, question: str = "", written: bool = True,
                  chunk: str = "") -> str:
    """Why the sentence's subject speaks of more things than its evidence or the question, or of
    another thing than its quote's count; "" if it does not (the rules of the module doc).
    `written`: the sentence is not a copy of a quote; `chunk`: the cited chunks' text."""
    subject = collective_subject(sentence)
    if not subject:
        return count_for_another_subject(sentence, quotes, question=question, chunk=chunk, written=written)
    if not any(speaks_of_several(q) for q in quotes):
        return f"its subject \"{subject}\" speaks of several things, its quote of one"
    if written and question and not names(subject) and not (
            _SEVERAL_ASKED.search(question) or _coordinated_names(question)):
        return f"its subject \"{subject}\" names nothing, and the question asks about one thing"
    return count_for_another_subject(sentence, quotes, question=question, chunk=chunk, written=written)


# "11 out of 17", "9 of the 12", "three of the five": a tally of one subject's wins or hits.
# (Not a metric's cutoff, "MRR@10 of 18.8", nor a decimal or a percentage.)
_COUNT = re.compile(rf"(?<![\w@.])({_NUMBER_WORDS}|eleven|twelve)\s+(?:out\s+)?of\s+(?:the\s+)?"
                    rf"({_NUMBER_WORDS}|eleven|twelve)\b(?![.,]\d|\s?%)", re.IGNORECASE)
# Where a clause ends, before a count: its subject is after the last of these.
_CLAUSE_BREAK = re.compile(r"[;:.!?]\s|,\s+(?:while|whereas|but)\b|\b(?:while|whereas|but|than|unlike)\b",
                           re.IGNORECASE)
# A clause opening that points back at what the sentence before named ("Each input vector", "All
# models" are noun phrases of their own).
_POINTING = re.compile(r"^\W*((?:they|these|those|it|this|both|the\s+(?:two|three|former|latter))"
                       r"(?:\s+(?:both|all|two|three))?)\b", re.IGNORECASE)
_OWN_WORK = re.compile(r"^\W*(?:we|our)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _counts(text: str) -> list[tuple[tuple[str, str], str]]:
    """Each count of the text as ((n, m), the words of its clause before it)."""
    out = []
    for m in _COUNT.finditer(text):
        key = tuple(str(SPELLED.get(g.lower(), g)) for g in m.groups())
        start = 0
        for b in _CLAUSE_BREAK.finditer(text, 0, m.start()):
            start = b.end()
        out.append(((key[0], key[1]), text[start:m.start()]))
    return out


def _overlap(a: Sequence[str], b: Sequence[str]) -> bool:
    return any(_name_forms(x) & _name_forms(y) for x in a for y in b)


def _referents(quote: str, chunk: str) -> list[str]:
    """The names of the sentence before the quote in the chunk: what its opening pronoun points at."""
    pos = find_quote(quote, chunk) if chunk else -1
    if pos <= 0:
        return []
    before = [t for t in _SENTENCE_END.split(chunk[:pos].strip()) if t.strip()]
    return names(before[-1]) if before else []


def count_for_another_subject(sentence: str, quotes: Sequence[str], *, question: str = "", chunk: str = "",
                              written: bool = True) -> str:
    """Why the sentence states a count of its quotes for another subject than theirs (rule 3 of the
    module doc); "" if it does not."""
    said = _counts(sentence)
    if not said:
        return ""
    quoted = [(key, prefix, quote) for quote in quotes for key, prefix in _counts(quote)]
    for key, prefix in said:
        mine = names(prefix)
        for qkey, qprefix, quote in quoted:
            if qkey != key or _OWN_WORK.search(qprefix):
                continue
            theirs = names(qprefix)
            subject = [n for n in mine if not _overlap([n], theirs)]
            pointing = _POINTING.search(qprefix)
            if pointing:
                owners = _referents(quote, chunk)
                pointer = pointing.group(1)
            else:
                owners = [n for n in theirs if not _overlap([n], mine)]
                pointer = ""
            if not owners:
                continue
            if not subject and written:
                subject = [n for n in names(question) if not _overlap([n], mine)]
            if subject and not _overlap(subject, owners):
                whose = f'"{pointer}", i.e. ' if pointer else ""
                return (f"{' of '.join(key)} for {', '.join(subject[:3])}, where its quote gives it for "
                        f"{whose}{', '.join(owners[:3])}")
    return ""
