"""Sentences addressed to a reader or a model, and text that tries to steer a model.

Instructions are never evidence, whatever they say (issue 15, point 10): papers print their
prompts ("Answer the question based on ..."), and an uploaded file may carry a prompt
injection ("Ignore all previous instructions ..."). A chunk that tries to steer a model is
untrusted as a whole (the agent drops it): its other sentences may be the payload.
"""

from __future__ import annotations

import re

# Words that open an instruction when they start a sentence (imperative mood). "Note" is
# not one of them: "Note that X" states X, and papers use it for findings.
_IMPERATIVE_VERBS = frozenset([
    "ignore", "disregard", "forget", "answer", "respond", "reply", "reveal", "print", "output", "say", "write",
    "repeat", "pretend", "act", "behave", "list", "tell", "give", "provide", "return", "generate", "summarize",
    "summarise", "translate", "classify", "rate", "judge", "please", "do", "don't", "never", "always", "remember",
    "make", "use", "cite", "stop", "assume", "treat", "consider", "imagine",
])
# After these the first word was a noun, not an imperative ("Answer quality improves ...").
_NOT_AN_OBJECT = frozenset(["is", "are", "was", "were", "has", "have", "can", "may", "improves", "quality",
                            "length", "rate", "rates", "accuracy", "of"])
# Phrases that steer a model whatever the sentence's mood: a prompt injection.
_INJECTION = re.compile(
    r"\b(?:(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|"
    r"preceding|your)\s+(?:instructions|prompts?|rules|directions)|"
    r"answer\s+(?:every|all|each|any)\s+(?:question|query|request)s?|"
    r"(?:ignore|disregard|override|reveal|print|show|repeat|output|follow)\s+(?:the\s+|your\s+|this\s+|my\s+)?"
    r"(?:new\s+)?(?:system|developer)\s+(?:prompt|message)|you\s+are\s+now\b|do\s+not\s+cite|"
    r"reveal\s+(?:the\s+)?(?:documents?|contents?|secrets?|passwords?|data|prompt)|"
    r"(?:as|you\s+are)\s+an?\s+(?:ai|language\s+model|assistant)\b)",
    re.IGNORECASE,
)
_ADDRESSED = re.compile(r"^(?:you|your)\b|\byou\s+(?:must|should|will|are\s+to|have\s+to|need\s+to)\b",
                        re.IGNORECASE)


def is_injection(text: str) -> bool:
    """The text tries to steer a model (ignore previous instructions, answer every question with ...)."""
    return bool(_INJECTION.search(text))


def is_instruction(sentence: str) -> bool:
    """A sentence addressed to the reader or a model rather than a statement of fact."""
    s = sentence.strip().lstrip("\"'\u201c\u2018(")
    if is_injection(s) or _ADDRESSED.search(s):
        return True
    first = re.match(r"[A-Za-z']+", s)
    if not first:
        return False
    word = first.group(0).lower()
    if word not in _IMPERATIVE_VERBS:
        return False
    # "Consider the case" is an instruction; "Answer quality improves" is not: an imperative
    # verb is followed by an object or a particle, not by a verb.
    rest = s[first.end():].lstrip()
    nxt = re.match(r"[A-Za-z']+", rest)
    return not (nxt and nxt.group(0).lower() in _NOT_AN_OBJECT)
