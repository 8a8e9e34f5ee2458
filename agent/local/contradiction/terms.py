"""Term sets the contradiction cues compare: content stems, all stems, name stems."""

from __future__ import annotations

import re

from agent.local.text import NEGATIONS, STOPWORDS, anchor_terms, stem, words


def content(text: str) -> list[str]:
    return [stem(w) for w in words(text) if w not in STOPWORDS and w not in NEGATIONS and len(w) > 1]


def stems(text: str) -> set[str]:
    out: set[str] = set()
    for w in words(text):
        if w in STOPWORDS or w in NEGATIONS:
            continue
        out.add(stem(w))
        if "-" in w or "_" in w:
            out.update(stem(p) for p in re.split(r"[-_]", w) if len(p) > 1)
    return out


def name_stems(text: str) -> set[str]:
    """The stems of the text's names (anchor terms) and of their parts ("in-context" -> "context")."""
    out: set[str] = set()
    for a in anchor_terms(text):
        out.add(a)
        out.update(stem(p) for p in re.split(r"[-_]", a) if len(p) > 1)
    return out
