"""Which slot a number fills: a sentence may state a number of its quotes only in the relation the
quotes state it in (agent.verify).

The presence check (`claims.missing_numbers`) and the name pairing (`pairing`) pass a sentence
that takes a number of its quote and puts it in another slot: the quote "we increase the number
of retrieved chunks from 5 to 20" holds 20, but only as the end of a sweep, not as *the* number
of chunks ("The table uses 20 retrieved chunks"); "improves nDCG by 3 points" holds 3 as a gain,
not as a score. This module reads, for every number of a text, its role and the noun it counts:

- role, from the words around it in its clause:
  START / END: the two ends of a range or change, "from X to Y", "between X and Y", "X-Y", "X to Y";
  TARGET: the value a change ends at without a start, "increases accuracy to Y";
  DELTA: a difference, "improves by X", "gains X", "+X", "X points higher", "a gain of X";
  BOUND: "up to X", "at most X", "more than X" (compatible with any role: a bound is not a value);
  VALUE: anything else;
- the noun it counts: the word right after it ("300 words", "12 layers", "11 datasets"), if any;
- percent: whether it is written as a percentage.

A sentence's number q is flagged when every occurrence of q in the quotes conflicts with it:
1. role: a VALUE where the quotes only give q as a range end, unless the sentence states the
   range's other end too; a DELTA where they give q as a value (or the reverse); a START where
   they give q as an END (or the reverse). TARGET and VALUE agree (the value a change reached),
   and so do a TARGET and an END ("rose to 20" over "from 5 to 20": the sentence states the change);
2. percent: q counts a noun in the sentence ("11 datasets") where the quotes only give it as a
   percentage ("11%"), or the reverse; the stated conversion p% = p/100 still holds;
3. noun: q counts one (plural) noun in the sentence and another in every quote occurrence ("5
   datasets" against "5 chunks"), the sentence's noun is nowhere in the quotes and the quote's
   nowhere in the sentence (a synonym the other side also uses is a paraphrase).
A number the quotes hold in no relation this module reads (a table row) flags nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.local.text import stem
from agent.verify.claims import SPELLED, Quantity, quantities, same_quantity

VALUE, START, END, TARGET, DELTA, BOUND = "value", "start", "end", "target", "delta", "bound"

_TOKEN = re.compile(
    r"(?P<num>(?<![\w.@])(?<![A-Za-z]-)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s?(?:%|percent\b)|[kKMB]\b)?)"
    r"|(?P<word>[A-Za-z][A-Za-z'_]*)"
    r"|(?P<sym>[\u2013\u2014\-/+\u00d7;:,.()\[\]])"
)
# Numbers that label rather than measure: reference markers, "Table 2", a section number.
_LABELS = re.compile(
    r"\[[\d,;\s\u2013-]+\]|\b(?:tables?|tab|figures?|fig|sections?|sec|eqs?|equations?|appendix|step)\.?\s*\d+[a-z]?\b",
    re.IGNORECASE)
# "from X to Y", "between X and Y" ("from 5 paragraphs and 30% from ..." is no range).
_DASHES = frozenset(["-", "\u2013", "\u2014"])
_RANGE_JOINERS = {"from": _DASHES | {"to", "through", "until"}, "between": _DASHES | {"and"}}
# A number "to" a number is a range or a change without its "from" ("5 to 20 chunks"); after a
# "to" it is the next step of one ("from 5 to 10 to 20").
_BARE_RANGE = frozenset(["to"])
_CLAUSE_END = frozenset([";", ":", ".", "(", ")"])
# Verbs of change (whole words): "to Y" after them is where the change ended, "by X" how much it
# changed, and a number right after one is the change ("gains 7.2 points").
_CHANGE = re.compile(
    r"^(?:increas|decreas|rais|reduc|grow|grew|grown|rise|rose|risen|drop|fall|fell|improv|boost|lower|cut|"
    r"expand|extend|shrink|shrank|climb|gain|jump|declin|scal|vary|vari|rang|go|goes|went|gone|chang|mov|push|"
    r"doubl|tripl|outperform|exceed|beat|surpass|lead|led)(?:e|es|ed|s|ing|d|ped|ping|ting|en)?$")
# Words before a number that make it a difference, not a value ("a gain of 2.1").
_DELTA_NOUNS = frozenset(["improvement", "improvements", "gain", "gains", "increase", "increases", "decrease",
                          "decreases", "drop", "drops", "reduction", "reductions", "boost", "margin", "difference",
                          "advantage", "lead", "deficit", "degradation", "loss"])
# Words after a number (or after its unit) that make it a difference ("3 points higher").
_COMPARATIVES = frozenset(["higher", "lower", "more", "less", "fewer", "better", "worse", "faster", "slower",
                           "larger", "smaller", "greater", "improvement", "gain", "increase", "decrease",
                           "reduction", "drop", "boost", "above", "below", "ahead", "behind"])
_BOUND_BEFORE = frozenset(["up to", "at most", "at least", "more than", "less than", "fewer than", "over", "under",
                           "above", "below", "exceeding", "maximum", "minimum", "max", "min", "beyond", "within",
                           "as many as", "as few as", "as much as", "no more than", "no less than", "upto",
                           "approximately", "nearly", "almost"])
_HEDGES = frozenset(["about", "around", "roughly", "only", "just", "exactly", "some", "circa", "~", "a", "an",
                     "the", "than", "of"])
# Words after a number that are no noun it counts.
_NOT_NOUNS = frozenset([*sorted(_COMPARATIVES),
    "and", "or", "to", "of", "in", "on", "at", "for", "by", "with", "from", "the", "a", "an", "is", "are", "was",
    "were", "be", "been", "than", "as", "that", "which", "while", "when", "out", "vs", "versus", "per", "times",
    "x", "fold", "percent", "points", "point", "pp", "pts", "absolute", "relative", "respectively", "each",
    "this", "these", "those", "it", "its", "we", "our", "they", "their", "both", "all", "also", "only", "over",
    "after", "before", "using", "into", "between", "among", "across", "through", "under", "above", "below",
    "then", "but", "so", "not", "no", "s",
])


@dataclass(frozen=True)
class Slot:
    quantity: Quantity
    role: str
    noun: str          # stem of the noun the number counts, "" if none
    partner: Quantity | None = None  # the other end of its range


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str


def _tokens(text: str) -> list[_Tok]:
    text = _LABELS.sub(lambda m: " " * len(m.group()), text)
    out: list[_Tok] = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup or "sym"
        raw = m.group()
        if kind == "word" and raw.lower() in SPELLED and raw.lower() not in ("one", "zero"):
            kind = "num"
        out.append(_Tok(kind, raw))
    return out


def _quantity(tok: _Tok) -> Quantity | None:
    found = quantities(tok.text)
    return found[0] if found else None


def _clauses(tokens: list[_Tok]) -> list[list[_Tok]]:
    out: list[list[_Tok]] = [[]]
    for tok in tokens:
        if tok.kind == "sym" and tok.text in _CLAUSE_END:
            out.append([])
        else:
            out[-1].append(tok)
    return [c for c in out if c]


def _words_before(clause: list[_Tok], i: int, n: int) -> list[str]:
    return [t.text.lower() for t in clause[max(0, i - n):i]]


def _prev_word(clause: list[_Tok], i: int) -> tuple[str, int]:
    """The word before token i, skipping hedges ("from about 5"), and its index."""
    j = i - 1
    while j >= 0 and clause[j].kind == "word" and clause[j].text.lower() in _HEDGES - {"of", "than"}:
        j -= 1
    if j < 0:
        return "", -1
    return clause[j].text.lower(), j


def _change_before(clause: list[_Tok], i: int, window: int = 8) -> bool:
    return any(t.kind == "word" and _CHANGE.match(t.text.lower()) for t in clause[max(0, i - window):i])


def _next_number(clause: list[_Tok], i: int, joiners: frozenset[str]) -> int | None:
    """The index of a number that a joiner ("to", "-", "and") right after token i (or after its
    noun) leads to: "5 to 20", "5-20", "5 and 20", "5 chunks to 20 chunks"."""
    j = i + 1
    if j < len(clause) and clause[j].kind == "word" and clause[j].text.lower() not in joiners:
        j += 1  # its unit or noun
    if j < len(clause) and clause[j].text.lower() in joiners:
        k = j + 1
        while k < len(clause) and clause[k].kind == "word" and clause[k].text.lower() in _HEDGES:
            k += 1
        if k < len(clause) and clause[k].kind == "num":
            return k
    return None


_UNITS = frozenset(["points", "point", "pp", "pts", "percent", "percentage", "x", "times", "fold", "absolute"])


def _delta_before(clause: list[_Tok], prev: str, p: int) -> bool:
    """A difference named before the number: "improves by", "+", "a gain of", "gains 7.2"."""
    if prev == "by":
        return _change_before(clause, p)
    if prev == "of":
        return p >= 1 and clause[p - 1].text.lower() in _DELTA_NOUNS
    return prev == "+" or bool(_CHANGE.match(prev))


def _comparative_after(clause: list[_Tok], i: int) -> bool:
    """A difference named right after the number: a comparative first or after its unit ("3
    points higher"), or a noun of change within three words ("a 4.6% absolute accuracy
    improvement", "a 5.3-point gain")."""
    words = []
    for tok in clause[i + 1:i + 5]:
        if tok.kind == "sym" and tok.text in _DASHES and not words:
            continue
        if tok.kind != "word":
            break
        words.append(tok.text.lower())
    if words and words[0] in _COMPARATIVES:
        return True
    if len(words) > 1 and words[0] in _UNITS and words[1] in _COMPARATIVES:
        return True
    return any(w in _DELTA_NOUNS for w in words[:3])


def _noun_after(clause: list[_Tok], i: int) -> str:
    """The plural noun the number counts, within three words ("5 chunks", "12 mined training
    pairs", "300-word chunks" counts words): "a 4K model" is a size, not a count."""
    j = i + 1
    if j < len(clause) and clause[j].kind == "sym" and clause[j].text in _DASHES:
        j += 1
        if j < len(clause) and clause[j].kind == "word":
            return stem(clause[j].text.lower())  # "300-word"
    for tok in clause[j:j + 3]:
        word = tok.text.lower()
        if tok.kind != "word" or word in _NOT_NOUNS:
            return ""
        if len(word) > 2 and word.endswith("s") and not word.endswith("ss"):
            return stem(word)
    return ""


def slots(text: str) -> list[Slot]:
    """Every number of the text with its role and the noun it counts."""
    out: list[Slot] = []
    for clause in _clauses(_tokens(text)):
        roles: dict[int, tuple[str, int | None]] = {}
        for i, tok in enumerate(clause):
            if tok.kind != "num" or i in roles:
                continue
            prev, p = _prev_word(clause, i)
            two = " ".join(_words_before(clause, p + 1, 2)) if p >= 0 else ""
            three = " ".join(_words_before(clause, p + 1, 3)) if p >= 0 else ""
            if prev in ("from", "between"):
                k = _next_number(clause, i, _RANGE_JOINERS[prev])
                if k is not None:
                    roles[i], roles[k] = (START, k), (END, i)
                    continue
            k = _next_number(clause, i, _DASHES)
            if k is not None and clause[i + 1].kind == "sym":
                roles[i], roles[k] = (START, k), (END, i)  # "5-20"
                continue
            k = _next_number(clause, i, _BARE_RANGE)
            if k is not None and prev != "to":
                roles[i], roles[k] = (START, k), (END, i)  # "5 to 20 chunks", "sizes of 16 to 64"
                continue
            if two in _BOUND_BEFORE or three in _BOUND_BEFORE or prev in _BOUND_BEFORE:
                roles[i] = (BOUND, None)
            elif prev == "to" and _change_before(clause, p):
                roles[i] = (TARGET, None)
            elif _delta_before(clause, prev, p) or _comparative_after(clause, i):
                roles[i] = (DELTA, None)
            else:
                roles[i] = (VALUE, None)
        for i, (role, partner) in sorted(roles.items()):
            q = _quantity(clause[i])
            if q is None:
                continue
            other = _quantity(clause[partner]) if partner is not None else None
            out.append(Slot(q, role, _noun_after(clause, i), other))
    return out


def _role_conflict(s: Slot, q: Slot, sentence_numbers: Sequence[Quantity]) -> str:
    if s.role == BOUND or q.role == BOUND or s.role == q.role:
        return ""
    if {s.role, q.role} <= {VALUE, TARGET}:
        return ""
    if s.role == TARGET and q.role == END:
        return ""  # "rose to 20" states the change the quote's "from 5 to 20" ends at
    if s.role in (VALUE, TARGET) and q.role in (START, END):
        if q.partner is not None and any(same_quantity(q.partner, n) for n in sentence_numbers):
            return ""  # the sentence states the range, in its own words
        return f"one end of a range ({'from' if q.role == START else 'to'} {s.quantity.text})"
    if DELTA in (s.role, q.role):
        return "a difference" if q.role == DELTA else "a value, not a difference"
    if {s.role, q.role} == {START, END}:
        return f"the {q.role} of its range"
    return ""


def _percent_conflict(s: Slot, q: Slot) -> str:
    if s.quantity.value != q.quantity.value or s.quantity.percent == q.quantity.percent:
        return ""
    # One side counts a noun ("11 datasets"), the other is a percentage ("11%").
    if (s.noun and not s.quantity.percent) or (q.noun and not q.quantity.percent):
        return "a percentage" if q.quantity.percent else "a count, not a percentage"
    return ""


def _noun_conflict(s: Slot, q: Slot, sentence_words: frozenset, quote_words: frozenset) -> str:
    # Either noun anywhere on the other side passes: a synonym the other side also uses
    # ("200 annotators" against "200 workers ... annotators") is a paraphrase.
    if not s.noun or not q.noun or s.noun == q.noun or s.noun in quote_words or q.noun in sentence_words:
        return ""
    return f"a number of {q.noun}"


def _stems(text: str) -> frozenset:
    return frozenset(stem(w.lower()) for w in re.findall(r"[A-Za-z]+", text))


def misslotted_numbers(sentence: str, quotes: Sequence[str], *, checks: Sequence[str] = ("role", "percent", "noun"),
                       ) -> list[str]:
    """Why the sentence states a number of its quotes in another slot, one reason per number; []
    if it does not (the rules of the module doc; `checks` picks rules for measuring)."""
    quoted = [q for text in quotes for q in slots(text)]
    if not quoted:
        return []
    said = slots(sentence)
    numbers = [s.quantity for s in said]
    sentence_words, quote_words = _stems(sentence), _stems(" ".join(quotes))
    rules = {"role": lambda s, q: _role_conflict(s, q, numbers), "percent": _percent_conflict,
             "noun": lambda s, q: _noun_conflict(s, q, sentence_words, quote_words)}
    problems: list[str] = []
    for s in said:
        same = [q for q in quoted if same_quantity(s.quantity, q.quantity)]
        if not same:
            continue
        for check in checks:
            reasons = [rules[check](s, q) for q in same]
            if all(reasons):
                problems.append(f"{s.quantity.text} where its quote gives it as {reasons[0]}")
                break
    return problems
