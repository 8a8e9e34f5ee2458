"""Negation scope: which of a text's terms a "not" / "without" / "n't" covers."""

from __future__ import annotations

import re

from agent.local.text import NEGATIONS, STOPWORDS, stem, words

_SCOPE = 5  # content words after a negation that it covers
CLAUSE_END = re.compile(r"[,;:()]|\b(?:but|while|whereas|although)\b")


def negated_stems(text: str) -> set[str]:
    """Stems inside the scope of a negation: up to _SCOPE content words after it, within its clause."""
    out: set[str] = set()
    for clause in CLAUSE_END.split(text):
        ws = words(clause)
        for i, w in enumerate(ws):
            # "with and without X", "whether or not": both polarities, so no negation.
            if i >= 2 and ws[i - 1] in ("and", "or") and ws[i - 2] == "with" and w == "without":
                continue
            if i >= 1 and ws[i - 1] == "or" and w == "not":
                continue
            if w in NEGATIONS or w.endswith("n't"):
                taken = 0
                for nxt in ws[i + 1:]:
                    if nxt in STOPWORDS or nxt in NEGATIONS:
                        continue
                    out.add(stem(nxt))
                    for part in re.split(r"[-_]", nxt):
                        if len(part) > 1:
                            out.add(stem(part))
                    taken += 1
                    if taken >= _SCOPE:
                        break
    return out
