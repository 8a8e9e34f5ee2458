"""Steps in order: a claim that puts a named step after (or before) another ("X was trained
with PPO after supervised fine-tuning") against a sentence that puts another named step in
that place ("trained using supervised fine-tuning (SFT) followed by Direct Preference
Optimization (DPO)"): the same sequence with another filler, so the claim's step is not the one
the evidence gives."""

from __future__ import annotations

import re

from agent.local.contradiction.names import acronym_of, alias
from agent.local.contradiction.terms import content
from agent.local.text import anchor_terms

_PART = r"[^,;:()\[\]]{2,90}?"
# (earlier, later): "B after A", "A followed by B", "A and then B", "A before B", "A, then B".
_LATER_FIRST = re.compile(rf"(?P<later>{_PART})\s+(?:after|following)\s+(?P<earlier>{_PART})(?=[,;:.()\[\]]|$)",
                          re.IGNORECASE)
_EARLIER_FIRST = re.compile(rf"(?P<earlier>{_PART})\s*,?\s+(?:followed by|and then|then|before)\s+"
                            rf"(?P<later>{_PART})(?=[,;:.\[\]]|$)", re.IGNORECASE)
# A step named only by a time or a count ("after 10 epochs", "after two days") is no step.
_TIME = re.compile(r"^\s*(?:the\s+)?(?:\d[\d.,]*|one|two|three|four|five|ten|a few|several)\s+\w+\s*$",
                   re.IGNORECASE)


# A citation marker says nothing of the steps; a parenthesis names one ("(SFT)"): kept as words.
_CITATION = re.compile(r"\s*\[[^\]]*\]")
_PAREN = re.compile(r"\(([^()]{1,40})\)")


def _steps(text: str) -> list[tuple[str, str]]:
    text = _PAREN.sub(r" \1 ", _CITATION.sub("", text))
    out = []
    for pattern in (_LATER_FIRST, _EARLIER_FIRST):
        for m in pattern.finditer(text):
            earlier, later = m.group("earlier").strip(), m.group("later").strip()
            if not (_TIME.match(earlier) or _TIME.match(later)):
                out.append((earlier, later))
    return out


def _names(part: str) -> set[str]:
    return {a for a in anchor_terms(part) if not re.fullmatch(r"[\d.,]+", a)}


def _same_step(a: str, b: str) -> bool:
    """Two step phrases name one step: they share a content word other than a verb of
    training or using, or a name of one is an alias or an acronym of a name of the other
    ("SFT" / "supervised fine-tuning")."""
    generic = {"train", "use", "model", "step", "stage", "data", "dataset"}
    if (set(content(a)) & set(content(b))) - generic:
        return True
    words_a = "-".join(re.findall(r"[a-z]+", a.lower()))
    words_b = "-".join(re.findall(r"[a-z]+", b.lower()))
    return any(acronym_of(n, words_b) for n in _names(a)) or any(acronym_of(n, words_a) for n in _names(b))


def _only_in(part: str, other_text: str, other_part: str) -> set[str]:
    """The names of `part` that `other_text` does not hold in any form."""
    held = anchor_terms(other_text)
    words_other = "-".join(re.findall(r"[a-z]+", other_part.lower()))
    return {n for n in _names(part)
            if not any(alias(n, h) for h in held) and not acronym_of(n, words_other)}


def swapped_step(claim: str, sentence: str) -> bool:
    """The claim and the sentence order two steps, one step is the same in both and in the same
    place, and in the other place the claim names a step the sentence nowhere names while
    the sentence names one the claim does not."""
    claim_steps = _steps(claim)
    if not claim_steps:
        return False
    for s_earlier, s_later in _steps(sentence):
        for c_earlier, c_later in claim_steps:
            for same_c, same_s, other_c, other_s in ((c_earlier, s_earlier, c_later, s_later),
                                                     (c_later, s_later, c_earlier, s_earlier)):
                if not _same_step(same_c, same_s):
                    continue
                # The claim's step in the other place: the names of its phrase nearest the
                # order word that the sentence does not hold at all.
                missing = _only_in(other_c, sentence, other_s)
                rival = _only_in(other_s, claim, other_c)
                if missing and rival:
                    return True
    return False
