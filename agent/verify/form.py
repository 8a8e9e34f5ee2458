"""Sentences that assert nothing an answer may keep, whatever their citations (agent.verify).

A small model writes sentences that pass the support check because their quotes are on topic,
yet say nothing (issue #13): the question copied back, the question restated as a statement,
the same sentence twice, a sentence trailing off into another script ("1 million随机"), a run
of numbers and symbols ("19.4% & 20.9% (+19.4% & 20.9%)"). The rules, per sentence of a
claim (a model's claim may hold several sentences; `split_sentences`):

- a question (a sentence ending in "?") states no fact: the claim is dropped;
- a sentence with no word of two or more letters (only numbers and symbols) says what the
  numbers are of nowhere: the claim is dropped;
- a sentence with letters of a script (Unicode character names: CJK, CYRILLIC, ...) found
  neither in the question nor in its quoted evidence is the model drifting off its language:
  the claim is dropped (Latin is the answer's language and always allowed);
- a claim that repeats a run of REPEAT_WORDS words, or a sentence whose terms (content words
  and numbers) are all in an earlier sentence of the answer, repeats itself: dropped (the
  first is kept);
- a sentence that only restates the question is removed from its claim (the claim is dropped
  when nothing else is left): its content terms are all the question's, it states no number
  or name the question does not, it negates nothing the question does not, and the question
  is not a yes/no question (for "Does X use Y?", "X uses Y." is the answer);
- a sentence that only introduces what follows (it ends in ":" or "as follows",
  knowledge.text.is_lead_in: "The main steps are as follows:") states nothing: it is removed
  from its claim like a restatement (the claim is dropped when nothing else is left).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from agent.local.text import NEGATIONS, content_terms, split_sentences, words
from agent.verify.claims import missing_names, missing_numbers, quantities
from knowledge.text import is_lead_in

# A claim that repeats a run of this many words repeats itself ("The score is ... τ: The score is ... τ:").
REPEAT_WORDS = 6
_LETTERS = re.compile(r"[^\W\d_]{2,}")
_POLAR = re.compile(r"^(?:do|does|did|is|are|was|were|can|could|has|have|had|will|would|should|may|might|must)\b",
                    re.IGNORECASE)


def scripts(text: str) -> set[str]:
    """The scripts of the text's letters, by Unicode character name ("LATIN", "GREEK", "CJK")."""
    out: set[str] = set()
    for c in set(text):
        if c.isalpha():
            name = unicodedata.name(c, "")
            if name:
                out.add(name.split()[0])
    return out


def is_polar(question: str) -> bool:
    """A yes/no question: one of its interrogative sentences opens with an auxiliary verb."""
    return any(s.rstrip().endswith("?") and _POLAR.match(s.strip()) for s in split_sentences(question))


def _terms(text: str) -> set[str]:
    return set(content_terms(text)) | {str(q.value) for q in quantities(text)}


def restates(sentence: str, question: str) -> bool:
    """The sentence only restates the question (module doc: the rule)."""
    if not question or is_polar(question):
        return False
    if not set(content_terms(sentence)) <= set(content_terms(question)):
        return False
    if missing_numbers(sentence, question) or missing_names(sentence, question):
        return False
    negated = [w for w in words(sentence) if w in NEGATIONS or w.endswith("n't")]
    return not negated or set(negated) <= set(words(question))


def _repeats_a_run(text: str) -> bool:
    tokens = [w.lower() for w in re.findall(r"\w+", text)]
    runs = [tuple(tokens[i:i + REPEAT_WORDS]) for i in range(len(tokens) - REPEAT_WORDS + 1)]
    return len(set(runs)) < len(runs)


def form_check(text: str, *, question: str, quotes: Sequence[str], earlier: Sequence[str]) -> tuple[str, str, list[str]]:
    """(the claim's text to keep, why the whole claim is dropped or "", notes on removed sentences).

    `earlier`: the sentences of the answer already kept (a repeat of one is dropped)."""
    allowed = scripts(" ".join([question, *quotes])) | {"LATIN"}
    seen = [_terms(s) for s in earlier]
    kept: list[str] = []
    notes: list[str] = []
    if _repeats_a_run(text):
        return "", "it repeats itself", notes
    for sentence in split_sentences(text) or [text]:
        if sentence.rstrip().endswith("?"):
            return "", "a question, which states no fact", notes
        if not _LETTERS.search(sentence):
            return "", "only numbers and symbols", notes
        foreign = scripts(sentence) - allowed
        if foreign:
            return "", f"{', '.join(sorted(foreign))} characters found neither in the question nor in its quotes", notes
        terms = _terms(sentence)
        if any(terms <= other for other in seen):
            return "", "it repeats an earlier sentence", notes
        seen.append(terms)
        if restates(sentence, question):
            notes.append(f"restates the question: {sentence[:80]}")
            continue
        if is_lead_in(sentence):
            notes.append(f"only introduces what follows: {sentence[:80]}")
            continue
        kept.append(sentence)
    if not kept:
        restated = any(n.startswith("restates") for n in notes)
        return "", "it only restates the question" if restated else "it only introduces what follows", notes
    return (text if len(kept) == len(split_sentences(text) or [text]) else " ".join(kept)), "", notes
