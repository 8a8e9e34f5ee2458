"""Which sentences may be quoted as evidence, and in what form: knowledge.text's definition.

There is one definition of answer-eligible evidence, `knowledge.text.quotable` (prose only:
no heading, figure or table text, equation, bibliography entry, footnote, question, example
or instruction; a list mark or a heading glued to the front is cut off, and the rest is still
a verbatim substring of the chunk, so the verifier can check the quote). The index uses it
too (sentence vectors only for eligible sentences), and so does the verifier, at the level of
a quote that may be part of a sentence (`agent.verify.eligibility(quote, chunk)`). This module
keeps the names the local roles import.

Instructions are never evidence, whatever they say (issue 15, point 10), and a chunk that
tries to steer a model (a prompt injection, `is_injection`) is untrusted as a whole: its other
sentences may be the payload.
"""

from __future__ import annotations

import re

from knowledge.text import is_injection as _steers
from knowledge.text import is_instruction, quotable, sentence_kind, strip_marks

__all__ = ["clean_sentence", "eligible", "is_injection", "is_instruction", "is_label"]

_LABEL_START = re.compile(r"^(?:figure|fig\.|table|tab\.|algorithm|listing|appendix|equation|eq\.)\s*[A-Z]?\d",
                          re.IGNORECASE)


# "annotators spend 1-2 minutes to answer each question": a task a paper describes, not an
# order to a model. Only "... answer every question with <X>" dictates an answer.
_PURPOSE = re.compile(r"\bto\s+answer\s+(?:every|all|each|any)\s+(?:question|query|request)s?\b(?!\s+with\b)",
                      re.IGNORECASE)


def is_injection(text: str) -> bool:
    """The text tries to steer a model (knowledge.text.is_injection), a purpose clause that
    describes people answering questions ("... minutes to answer each question") aside."""
    return _steers(_PURPOSE.sub(" ", text))


def clean_sentence(sentence: str) -> str:
    """The sentence without a leading list mark or glued heading (knowledge.text.strip_marks)."""
    return strip_marks(sentence)


def eligible(sentence: str) -> str:
    """The quotable form of a chunk sentence, or "" when it is not answer-eligible."""
    return quotable(sentence)


def is_label(text: str) -> bool:
    """Whether a section name is a figure or table label rather than a title: it opens with
    "Figure 3", is figure or table text, or capitalises nearly every word of a long run
    ("Total Retrieved Documents (~4K Tokens) Accuracy")."""
    if _LABEL_START.match(text) or sentence_kind(text) in ("figure", "table", "equation", "line_numbers"):
        return True
    tokens = [t for t in text.split() if any(c.isalpha() for c in t)]
    if not tokens:
        return True
    return len(tokens) >= 4 and sum(1 for t in tokens if t[:1].isupper()) >= 0.75 * len(tokens)
