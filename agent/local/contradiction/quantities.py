"""Number clashes: the same word next to another number ("8 heads" / "16 heads")."""

from __future__ import annotations

import re

from agent.local.text import STOPWORDS, numbers, stem, words

NUMBER_TOKEN = re.compile(r"^\d+(?:[.,]\d+)*%?$")
# Counts are often spelled out ("two experts", "top-two"): read them as digits so "four of
# eight experts" meets "8 experts ... routes each token to two of them". "one" is left out:
# it is a pronoun as often as a count ("the one that", "one of").
_SPELLED = {w: str(i) for i, w in enumerate(
    ["zero", "_", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
     "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]) if w != "_"}
# Not "hundred" or "thousand": they are scale words ("several hundred hours"), not counts.
_SPELLED.update({"thirty": "30", "forty": "40", "fifty": "50"})
_SPELLED_RE = re.compile(r"\b(" + "|".join(_SPELLED) + r")\b", re.IGNORECASE)


def spell_digits(text: str) -> str:
    """The text with spelled-out counts written as digits ("two experts" -> "2 experts")."""
    return _SPELLED_RE.sub(lambda m: _SPELLED[m.group(1).lower()], text)


def _number_neighbours(text: str) -> dict[str, set[str]]:
    """Each number of the text with the content words right next to it ("4000 warmup steps")."""
    ws = [w for w in words(text) if w not in STOPWORDS]
    out: dict[str, set[str]] = {}
    for i, w in enumerate(ws):
        if NUMBER_TOKEN.match(w.rstrip(".")):
            near = {stem(x) for x in ws[max(0, i - 2):i] + ws[i + 1:i + 3] if not NUMBER_TOKEN.match(x)}
            out.setdefault(w.rstrip(".").replace(",", ""), set()).update(near)
    return out


def _is_year(value: str) -> bool:
    return bool(re.fullmatch(r"(?:19|20)\d\d", value))


def number_substitution(claim: str, sentence: str) -> bool:
    """The claim gives a number the sentence lacks, and the sentence puts another number
    next to the same word ("8 heads" against "16 heads"; "28.4 BLEU" against "41.0 BLEU";
    "four experts" against "two experts")."""
    claim, sentence = spell_digits(claim), spell_digits(sentence)
    claim_nums = _number_neighbours(claim)
    if not claim_nums:
        return False
    sent_nums = _number_neighbours(sentence)
    present = numbers(sentence)
    for value, near in claim_nums.items():
        if value in present or value.rstrip("%") in present:
            continue
        for other, other_near in sent_nums.items():
            # Numbers of one kind only: a share against a share, a year against a year
            # ("the 2022 World Cup" is not contradicted by "13 goals at World Cups").
            if (other != value and near & other_near and ("%" in other) == ("%" in value)
                    and _is_year(other) == _is_year(value)):
                return True
    return False
