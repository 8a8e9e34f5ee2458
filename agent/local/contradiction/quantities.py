"""Number clashes: the same word next to another number, on the same side ("8 heads" / "16 heads")."""

from __future__ import annotations

import re

from agent.local.text import LABEL_NUMBER, STOPWORDS, numbers, stem, words

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


# "section 3.2", "Table 4", "[101]": a part of the paper or a reference, not a value (as
# agent.local.text.numbers reads them, in any case).
_LABEL = re.compile(LABEL_NUMBER.pattern, re.IGNORECASE)


def _number_neighbours(text: str) -> dict[str, tuple[set[str], set[str]]]:
    """Each number of the text with the content words right before it and right after it
    ("the 4000 warmup steps" -> ({...}, {warmup, step})); labels and references are no numbers."""
    ws = [w for w in words(_LABEL.sub(" ", text)) if w not in STOPWORDS]
    out: dict[str, tuple[set[str], set[str]]] = {}
    for i, w in enumerate(ws):
        if NUMBER_TOKEN.match(w.rstrip(".")):
            before, after = out.setdefault(w.rstrip(".").replace(",", ""), (set(), set()))
            before.update(stem(x) for x in ws[max(0, i - 2):i] if not NUMBER_TOKEN.match(x))
            after.update(stem(x) for x in ws[i + 1:i + 3] if not NUMBER_TOKEN.match(x))
    return out


_UNIT_WORDS = 3  # a counted noun and the words before it: "8 parallel attention layers"


def _units(text: str) -> dict[str, set[str]]:
    """What each number of the text counts or measures: the words right after it, up to the
    first stop word, number or punctuation, at most three ("32 snippets", "8 P100 GPUs", "8
    parallel attention layers, or heads"), or after its "of" ("15% of all WordPiece tokens",
    "80% of the time"); a number followed by neither ("by about 15% on X") has none."""
    raw = re.findall(r"[\w\-.%@]+|[^\w\s]", _LABEL.sub(" ", text))
    raw = [w.rstrip(".") or w for w in raw]
    out: dict[str, set[str]] = {}
    for i, w in enumerate(raw):
        if not NUMBER_TOKEN.match(w):
            continue
        j = i + 1
        if j < len(raw) and raw[j].lower() == "of":
            j += 1
            while j < len(raw) and raw[j].lower() in STOPWORDS:
                j += 1
        unit: set[str] = set()
        while (j < len(raw) and len(unit) < _UNIT_WORDS and re.match(r"\w", raw[j])
               and raw[j].lower() not in STOPWORDS and not NUMBER_TOKEN.match(raw[j])):
            unit.add(stem(raw[j].lower()))
            j += 1
        if unit:
            out.setdefault(w.replace(",", ""), set()).update(unit)
    return out


def _is_year(value: str) -> bool:
    return bool(re.fullmatch(r"(?:19|20)\d\d", value))


# A comma between a digit and a group of exactly three digits: a thousands separator.
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


# A rank written as one word ("top-5", "top-two"): the number is the rank's, as in "top 5".
_RANK = re.compile(r"\b(top|bottom)-(?=\d)", re.IGNORECASE)


def number_substitution(claim: str, sentence: str, *, ranks: bool = False) -> bool:
    """Whether the sentence replaces a number of the claim (substituted_numbers)."""
    return bool(substituted_numbers(claim, sentence, ranks=ranks))


def substituted_numbers(claim: str, sentence: str, *, ranks: bool = False) -> set[str]:
    """The claim gives a number the sentence lacks, and the sentence puts another number
    next to the same word ("8 heads" against "16 heads"; "28.4 BLEU" against "41.0 BLEU";
    "four experts" against "two experts"). With `ranks`, a rank written as one word is a
    number too ("the top-5 lists" against "the top-2 lists"): the premise check reads it so
    for a sentence read with a symbol's value (contradiction.symbols), whose paper the
    premise names; elsewhere "top-16" in another paper's sentence would clash with any top N.
    substituted_numbers: the claim's values the sentence replaces so ({"8"} above)."""
    # A thousands separator joins one number ("1,024 tokens"), which words() would read as two.
    claim, sentence = _THOUSANDS.sub("", spell_digits(claim)), _THOUSANDS.sub("", spell_digits(sentence))
    if ranks:
        claim, sentence = _RANK.sub(r"\1 ", claim), _RANK.sub(r"\1 ", sentence)
    claim_nums = _number_neighbours(claim)
    out: set[str] = set()
    if not claim_nums:
        return out
    sent_nums = _number_neighbours(sentence)
    claim_units, sent_units = _units(claim), _units(sentence)
    present = numbers(sentence)
    for value, (before, after) in claim_nums.items():
        if value in present or value.rstrip("%") in present:
            continue
        for other, (other_before, other_after) in sent_nums.items():
            # The same word on the same side: what is counted ("8 heads" / "16 heads") or what
            # the value is of ("a dropout of 0.1"); "indexing [101]" or "described in section
            # 3.2" holds no value of "8 parallel attention heads".
            same_slot = before & other_before or after & other_after
            # Two numbers that each say what they count are the same quantity only when
            # they count the same thing: "32 snippets retrieved" gives no count of "all four
            # retrievers", "80% of the time" no share "of all WordPiece tokens".
            units, other_units = claim_units.get(value, set()), sent_units.get(other, set())
            if units and other_units and not units & other_units:
                continue
            # Numbers of one kind only: a share against a share, a year against a year
            # ("the 2022 World Cup" is not contradicted by "13 goals at World Cups").
            if (other != value and same_slot and ("%" in other) == ("%" in value)
                    and _is_year(other) == _is_year(value)):
                out.add(value)
                break
    return out
