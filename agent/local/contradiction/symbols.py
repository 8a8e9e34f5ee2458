"""A value given to a symbol elsewhere in the passage: "A pair is kept only if it is in the
top-k lists. ... Here we set k = 2." says that a pair is kept only if it is in the top-2
lists. Papers state a setting by a symbol in one sentence and its value in another; a claim
gives the value where the symbol stood ("kept if it falls in the top-5 lists"), so the
sentence is read with the value in the symbol's place (used by agent.local.premise_check
for the number cue only)."""

from __future__ import annotations

import re

from agent.local.text import split_sentences

# A symbol: one letter other than the words "a" and "I", or a Greek letter.
_SYMBOL = r"[b-zB-HJ-Z\u03b1-\u03c9]"
_VALUE = r"\d+(?:\.\d+)?"
_BINDINGS = [
    # "k = 2", "τ is set to 0.01", "N was set to 100"
    re.compile(rf"(?<![\w\-/])(?P<sym>{_SYMBOL})\s*(?:=|(?:is|was|are|were)\s+set\s+to)\s*(?P<val>{_VALUE})"
               r"(?![\w.]*\d)(?!\s*[-+*/^])"),
    # "we set k to 2"
    re.compile(rf"\bset\s+(?P<sym>{_SYMBOL})\s+to\s+(?P<val>{_VALUE})(?![\w.]*\d)"),
]
# How many sentences apart the symbol's use and its value may stand.
_REACH = 2


def _bindings(sentence: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for pattern in _BINDINGS:
        for m in pattern.finditer(sentence):
            out.setdefault(m.group("sym"), set()).add(m.group("val"))
    return out


def bound_readings(sentence: str, passage: str) -> list[tuple[str, str]]:
    """(the sentence read with a symbol's value in its place, the passage's text from the one
    to the other) for each symbol the sentence uses that the passage gives exactly one value
    (in a sentence at most _REACH sentences away; the sentence does not give it itself)."""
    sentences = split_sentences(passage)
    here = next((i for i, s in enumerate(sentences) if sentence and sentence in s), None)
    if here is None:
        return []
    given: dict[str, set[str]] = {}
    where: dict[str, list[int]] = {}
    for i, s in enumerate(sentences):
        for sym, values in _bindings(s).items():
            given.setdefault(sym, set()).update(values)
            where.setdefault(sym, []).append(i)
    own = _bindings(sentences[here])
    out = []
    for sym, values in given.items():
        use = re.compile(rf"(?<![\w]){re.escape(sym)}(?![\w])")
        if len(values) != 1 or sym in own or not use.search(sentence):
            continue
        near = [i for i in where[sym] if 0 < abs(i - here) <= _REACH]
        if not near:
            continue
        first, last = sorted((here, near[0]))
        out.append((use.sub(next(iter(values)), sentence), " ".join(sentences[first:last + 1])))
    return out
