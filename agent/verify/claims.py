"""What a sentence asserts: the numbers and names it states (agent.verify)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from agent.local.text import stem

_NUM = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s?(%|percent\b|[kKMB]\b)?"
)
_SPELLED = {w: i for i, w in enumerate(
    ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])}
_SCALE = {"k": Decimal(1000), "K": Decimal(1000), "M": Decimal(10) ** 6, "B": Decimal(10) ** 9}


@dataclass(frozen=True)
class Quantity:
    value: Decimal
    percent: bool
    text: str


def quantities(text: str, *, spelled: bool = True) -> list[Quantity]:
    """The numbers a text states, normalised ("1,000" = "1000", "28.40" = "28.4")."""
    out: list[Quantity] = []
    for m in _NUM.finditer(text):
        whole, frac, unit = m.group(1), m.group(2) or "", m.group(3) or ""
        try:
            value = Decimal(whole.replace(",", "") + frac)
        except InvalidOperation:
            continue
        if unit in _SCALE:
            value *= _SCALE[unit]
        out.append(Quantity(value.normalize(), unit in ("%", "percent"), m.group(0).strip()))
    if spelled:
        for w in re.findall(r"[A-Za-z]+", text):
            if w.lower() in _SPELLED and w.lower() not in ("one", "zero"):
                # "one" is a pronoun as often as a number ("the one that...").
                out.append(Quantity(Decimal(_SPELLED[w.lower()]), False, w))
    return out


def _same_quantity(a: Quantity, b: Quantity) -> bool:
    if a.value == b.value and a.percent == b.percent:
        return True
    if a.value == b.value:
        return True  # "25%" and "25 percent points", or a bare "25" against "25%"
    # One stated unit conversion: a percentage and its fraction (10% = 0.1).
    if a.percent and not b.percent:
        return (a.value / 100).normalize() == b.value
    if b.percent and not a.percent:
        return (b.value / 100).normalize() == a.value
    return False


def missing_numbers(sentence: str, evidence: str, *, allowed: str = "") -> list[str]:
    """Numbers the sentence states that neither the evidence nor `allowed` holds."""
    have = quantities(evidence) + quantities(allowed)
    return [q.text for q in quantities(sentence) if not any(_same_quantity(q, h) for h in have)]


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-_/.]*[A-Za-z0-9]|[A-Za-z0-9]")
# Capitalised words that name nothing (sentence openers, connectives written in title case).
_NOT_NAMES = frozenset(
    ["i", "a", "an", "the", "this", "that", "these", "those", "it", "its", "they", "their", "we", "our", "in", "on", "at", "for", "of", "by", "with", "from", "to", "as", "and", "or", "but", "both", "each", "however", "moreover", "thus", "therefore", "while", "when", "where", "which", "what", "who", "how", "table", "figure", "section", "appendix", "eq", "equation"]
)


def names(text: str) -> list[str]:
    """Names and identifiers the text states: acronyms and mixed-case or digit-bearing tokens
    ("BLEU", "SBERT", "GPT-4", "d_model"), and capitalised words after the first word."""
    out: dict[str, None] = {}
    tokens = _TOKEN.findall(text)
    for i, raw in enumerate(tokens):
        token = raw.strip(".-/")
        if not token or token.lower() in _NOT_NAMES or token.isdigit():
            continue
        has_alpha = any(c.isalpha() for c in token)
        identifier = has_alpha and (any(c.isdigit() for c in token) or "_" in token
                                    or any(c.isupper() for c in token[1:]))
        capitalised = i > 0 and token[0].isupper() and len(token) > 2
        if identifier or capitalised:
            out.setdefault(token, None)
    return list(out)


def _name_forms(name: str) -> set[str]:
    low = name.lower()
    forms = {low, low.replace("_", ""), low.replace("-", ""), stem(low)}
    return forms


def _text_forms(text: str) -> set[str]:
    bag: set[str] = set()
    for raw in _TOKEN.findall(text):
        token = raw.strip(".-/").lower()
        if not token:
            continue
        bag.update({token, token.replace("_", ""), token.replace("-", ""), stem(token)})
        for part in re.split(r"[-_/]", token):
            if part:
                bag.update({part, stem(part)})
    return bag


def missing_names(sentence: str, context: str, *, question: str = "", chunk: str = "") -> list[str]:
    """Names the sentence states that its evidence context does not hold.

    A name of the question counts when the cited chunk mentions it too: the paper's
    "we" or "our model" is the subject the question asked about.
    """
    bag = _text_forms(context)
    asked = _text_forms(question) & _text_forms(chunk) if question else set()
    missing = []
    for name in names(sentence):
        forms = _name_forms(name)
        if forms & bag or forms & asked:
            continue
        missing.append(name)
    return missing
