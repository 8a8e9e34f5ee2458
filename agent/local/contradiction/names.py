"""When two names may be one thing (aliases, acronyms, Roman numerals)."""

from __future__ import annotations

import re

# Roman numerals name versions and types as digits do ("type II" / "type 2").
_ROMAN_VALUE = {"i": "1", "ii": "2", "iii": "3", "iv": "4", "v": "5", "vi": "6", "vii": "7", "viii": "8", "ix": "9",
                "x": "10"}
_ROMAN = re.compile(r"^(?:" + "|".join(sorted(_ROMAN_VALUE, key=len, reverse=True)) + r")$")


def alias(a: str, b: str) -> bool:
    """Two names that may be one thing: equal (a Roman numeral read as its digits), one
    inside the other ("bm25" / "bm25-based", "llama" / "llama-2", "rct" / "crct"), or one the other's letters in order with
    the same first letter (an acronym or contraction: "sbert" / "sentence-bert")."""
    # A plural is the same name ("RCTs" / "RCT"; acronyms are not stemmed).
    a, b = (_ROMAN.sub(lambda m: _ROMAN_VALUE[m.group(0)], x.lower()).removesuffix("s") or x for x in (a, b))
    # A zero typed for the letter O ("Fox0" / "FoxO").
    if a == b or a.replace("0", "o") == b.replace("0", "o"):
        return True
    short, long_ = sorted((a, b), key=len)
    if short in long_:
        return True
    if short[0] != long_[0]:
        return False
    rest = iter(long_)
    return all(ch in rest for ch in short)


def acronym_of(short: str, name: str) -> bool:
    """`short` abbreviates the hyphenated `name` by the initials of its parts, the last part
    kept whole or not ("sbert" / "sentence-bert", "rrr" / "rewrite-retrieve-read")."""
    parts = [x for x in re.split(r"[-_]", name.lower()) if x]
    if len(parts) < 2 or "-" in short or len(short) < 2:
        return False
    initials = "".join(x[0] for x in parts)
    return short.lower() in (initials, initials[:-1] + parts[-1])
