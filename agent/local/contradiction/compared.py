"""Names a sentence sets beside its subject to compare them: a baseline, a competitor, the
other side of "versus". Another name there is a second system, not a rival filler of the
claim's slot ("We compare our method against the BERT reranker of [10]" says nothing
against "the method reranks with T5")."""

from __future__ import annotations

import re

from agent.local.contradiction.terms import name_stems

# Words that put what follows them beside the sentence's subject for comparison.
_COMPARING = re.compile(
    r"\b(?:compar(?:e|es|ed|ing|ison|isons)|against|versus|vs\.?|than|unlike|outperform(?:s|ed|ing)?"
    r"|contrast(?:s|ed|ing)?|competitors?|baselines?\s+(?:such\s+as|like|of|including))\s+",
    re.IGNORECASE)
# Names right before "baseline(s)" ("the BM25 baseline", "BERT and T5 baselines").
_BEFORE_BASELINE = re.compile(r"((?:[\w\-\.+/]+\s+){1,4})baselines?\b", re.IGNORECASE)
# Where what is compared ends: the end of a clause that is not a list.
_STOP = re.compile(r"[;:.()]\s|\b(?:which|that|where|while|whereas|but)\b", re.IGNORECASE)
_REACH = 8  # words after a comparing word that may name what is compared


def compared_names(sentence: str) -> set[str]:
    """The name stems (and their parts) the sentence names as what is compared: up to
    _REACH words after a comparing word ("compare X against A, B and C", "A vs B", "better
    than A", "unlike A"), and the words before "baseline" ("the BM25 baseline")."""
    out: set[str] = set()
    for m in _COMPARING.finditer(sentence):
        rest = sentence[m.end():]
        stop = _STOP.search(rest)
        span = " ".join(rest[:stop.start() if stop else len(rest)].split()[:_REACH])
        # The first word of the span is a name too when capitalised ("than BERT").
        out |= name_stems(f"x {span}")
    for m in _BEFORE_BASELINE.finditer(sentence):
        out |= name_stems(f"x {m.group(1)}")
    return out


def compares(text: str) -> bool:
    """Whether the text itself compares (a claim about a baseline or "A versus B" may be
    denied by another name in that place)."""
    return bool(_COMPARING.search(text) or _BEFORE_BASELINE.search(text))



