"""What a sentence asserts: the numbers and names it states (agent.verify)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from agent.local.text import stem

_NUM = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s?(%|percent\b|[kKMB]\b)?"
)
SPELLED = {w: i for i, w in enumerate(
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
            if w.lower() in SPELLED and w.lower() not in ("one", "zero"):
                # "one" is a pronoun as often as a number ("the one that...").
                out.append(Quantity(Decimal(SPELLED[w.lower()]), False, w))
    return out


def same_quantity(a: Quantity, b: Quantity) -> bool:
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
    return [q.text for q in quantities(sentence) if not any(same_quantity(q, h) for h in have)]


_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-_/.]*[A-Za-z0-9]|[A-Za-z0-9]")
# Capitalised words that name nothing (sentence openers, connectives written in title case).
_NOT_NAMES = frozenset(
    ["i", "a", "an", "the", "this", "that", "these", "those", "it", "its", "they", "their", "we", "our", "in", "on", "at", "for", "of", "by", "with", "from", "to", "as", "and", "or", "but", "both", "each", "however", "moreover", "thus", "therefore", "while", "when", "where", "which", "what", "who", "how", "table", "figure", "section", "appendix", "eq", "equation"]
)


# A number and the unit it counts, written as one word ("300-word", "7.2-point"), or with its
# scale ("300K", "1.5B"): no name.
_NUMBER_UNIT = re.compile(r"\d[\d.,]*(?:-[a-z]+|[kKMB])")


def names(text: str) -> list[str]:
    """Names and identifiers the text states: acronyms and mixed-case or digit-bearing tokens
    ("BLEU", "SBERT", "GPT-4", "d_model"), and capitalised words after the first word."""
    out: dict[str, None] = {}
    tokens = _TOKEN.findall(text)
    for i, raw in enumerate(tokens):
        token = raw.strip(".-/")
        if not token or token.lower() in _NOT_NAMES or token.isdigit() or _NUMBER_UNIT.fullmatch(token):
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


# A hyphen at a PDF line break inside a name: "GPT-3.5- Turbo" is "GPT-3.5-Turbo".
_SPLIT_NAME = re.compile(r"(?<=\w)- (?=[A-Za-z0-9])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def _acronyms(text: str) -> set[str]:
    """Initials of runs of capitalised words: "Retrieval-Augmented Generation for Large
    Language Models" gives "rag", "llm", "llms" (and the other sub-runs): a paper's title
    spells out the acronym a question uses."""
    runs: list[str] = []
    current: list[str] = []
    prev_end = -1
    for m in _WORD.finditer(text):
        capital = m.group()[0].isupper()
        glued = prev_end >= 0 and re.fullmatch(r"[\s-]+", text[prev_end:m.start()]) is not None
        if capital and current and glued:
            current.append(m.group()[0])
        else:
            if len(current) >= 2:
                runs.append("".join(current))
            current = [m.group()[0]] if capital else []
        prev_end = m.end()
    if len(current) >= 2:
        runs.append("".join(current))
    out: set[str] = set()
    for initials in (r.lower() for r in runs):
        for i in range(len(initials)):
            for j in range(i + 2, len(initials) + 1):
                out.update({initials[i:j], initials[i:j] + "s"})
    return out


def _text_forms(text: str) -> set[str]:
    bag: set[str] = set()
    for raw in _TOKEN.findall(_SPLIT_NAME.sub("-", text)):
        token = raw.strip(".-/").lower()
        if not token:
            continue
        bag.update({token, token.replace("_", ""), token.replace("-", ""), stem(token)})
        for part in re.split(r"[-_/]", token):
            if part:
                bag.update({part, stem(part)})
    return bag | _acronyms(text)


# A quote that speaks of the paper's own work ("we", "our model", "this work") is about the
# subject the paper is about, which it may not name in that sentence.
_SELF_REFERENCE = re.compile(
    r"\b(?:we|our|us|this (?:paper|work|study|article|model|method|approach|system)|the proposed)\b",
    re.IGNORECASE)


def _lends_question_names(evidence: str, question: str, chunk: str) -> set[str]:
    """The question's name forms a quote may stand for without naming them: when the quote
    speaks of the paper's own work ("we"), or names nothing the question does not (its subject
    is then the chunk's), and the cited chunk mentions them. A quote that names other things
    lends nothing: it is about them (a baseline, a formulation the paper contrasts with)."""
    if not question:
        return set()
    asked = _text_forms(question)
    others = [n for n in names(evidence) if not _name_forms(n) & asked]
    if others and not _SELF_REFERENCE.search(evidence):
        return set()
    return asked & _text_forms(chunk)


def missing_names(sentence: str, context: str, *, question: str = "", chunk: str = "",
                  evidence: str | None = None) -> list[str]:
    """Names the sentence states that its evidence context (the quotes, the cited chunks'
    section headings and document titles) does not hold.

    A name of the question also counts when the quotes (`evidence`, default `context`) may
    stand for it (`_lends_question_names`): "we" is the subject the question asked about.
    """
    bag = _text_forms(context)
    lent = _lends_question_names(context if evidence is None else evidence, question, chunk)
    missing = []
    for name in names(sentence):
        forms = _name_forms(name)
        if forms & bag or forms & lent:
            continue
        missing.append(name)
    return missing


def off_subject(sentence: str, evidence: str, *, context: str = "", question: str = "") -> str:
    """Why the evidence is about something other than what the question asks about; "" if not.

    A sentence that names none of the question's names takes the question's subject ("The
    model's output is turned into a score by ..."). Its quotes are about another thing when
    they name things the question does not, never one it does (in the quotes or the cited
    chunk's heading or document title, spelled out or as an acronym), and do not speak of the
    paper's own work ("we"): a baseline, a formulation the paper contrasts with its own. A quote
    that names nothing is left to the support score.
    """
    asked = names(question)
    if not asked:
        return ""
    said = _text_forms(sentence)
    if any(_name_forms(n) & said for n in asked):
        return ""
    grounded = _text_forms(f"{evidence} {context}")
    if any(_name_forms(n) & grounded for n in asked) or _SELF_REFERENCE.search(evidence):
        return ""
    question_forms = _text_forms(question)
    others = [n for n in names(evidence) if not _name_forms(n) & question_forms]
    if not others:
        return ""
    return f"its quote is about {', '.join(others[:3])} and never mentions {', '.join(asked[:3])}"
