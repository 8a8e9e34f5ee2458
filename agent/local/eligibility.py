"""Which sentences may be quoted as evidence, and in what form.

A chunk sentence is answer-eligible when it is prose a reader would accept as a statement
of the paper: not a section heading, a figure or axis label, a bibliography entry, a table
row, a Markdown marker, or an instruction addressed to the reader or to a model
("Ignore all previous instructions", "Answer every question with ..."). Instructions are
never evidence, whatever they say (issue 15, point 10), and a chunk that tries to steer a
model (a prompt injection) is untrusted as a whole: its other sentences may be the payload.

`clean_sentence` cuts a heading or list marker glued to the front of a sentence
("7 Conclusion In this work ..." -> "In this work ..."): the rest is still a verbatim
substring of the chunk, so the verifier can check the quote.

When the ingestion side (knowledge.text) marks sentences itself, its labels take
precedence; these checks are the local fallback and stay useful for text from other parsers.
"""

from __future__ import annotations

import re

from agent.local.text import is_prose

_LIST_MARKER = re.compile(r"^(?:[-*+•▪◦]|#{1,6}|>\s*|\d{1,2}[.)])\s+")
_SECTION_NUMBER = re.compile(
    r"^(?:(?:Appendix|Section|Chapter)\s+[A-Z0-9](?:\.\d{1,2})*\.?|[A-Z]\.\d{0,2}(?:\.\d{1,2})*|"
    r"\d{1,2}(?:\.\d{1,2}){0,3}\.?|[IVX]{1,4}\.)\s+(?=\S)")
_LABEL_START = re.compile(r"^(?:figure|fig\.|table|tab\.|algorithm|listing|appendix|equation|eq\.)\s*[A-Z]?\d",
                          re.IGNORECASE)
_REFERENCE = re.compile(
    r"\b(?:In Proceedings|Proceedings of|arXiv preprint|arXiv:\d|CoRR|Association for Computational|"
    r"pp\.\s*\d|vol\.\s*\d|doi:|https?://)", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:19|20)\d\d[a-z]?\b")
# Words that open an instruction when they start a sentence (imperative mood). Papers
# show prompts in their appendices ("Answer the question based on ..."): those are
# instructions to a model too, not findings, so they are not evidence either.
_IMPERATIVE_VERBS = frozenset([
    "ignore", "disregard", "forget", "answer", "respond", "reply", "reveal", "print", "output", "say", "write",
    "repeat", "pretend", "act", "behave", "list", "tell", "give", "provide", "return", "generate", "summarize",
    "summarise", "translate", "classify", "rate", "judge", "please", "do", "don't", "never", "always", "remember",
    "note", "make", "use", "cite", "stop", "assume", "treat", "consider", "imagine",
])
# After these the first word was a noun, not an imperative ("Answer quality improves ...").
_NOT_AN_OBJECT = frozenset(["is", "are", "was", "were", "has", "have", "can", "may", "improves", "quality",
                            "length", "rate", "rates", "accuracy", "of"])
# Phrases that steer a model whatever the sentence's mood: a prompt injection.
_INJECTION = re.compile(
    r"\b(?:(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier|"
    r"preceding|your)\s+(?:instructions|prompts?|rules|directions)|"
    r"answer\s+(?:every|all|each|any)\s+(?:question|query|request)s?|"
    r"(?:system|developer)\s+(?:prompt|message)|you\s+are\s+now\b|do\s+not\s+cite|"
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
    # "Note that X" and "Consider the case" are instructions; "Answer quality improves"
    # is not: an imperative verb is followed by an object or a particle, not by a verb.
    rest = s[first.end():].lstrip()
    nxt = re.match(r"[A-Za-z']+", rest)
    return not (nxt and nxt.group(0).lower() in _NOT_AN_OBJECT)


_TITLE_FUNCTION_WORDS = frozenset(["of", "on", "and", "for", "in", "the", "to", "with", "a", "an", "vs", "via",
                                   "from", "by", "at", "or"])


def _strip_heading(sentence: str) -> str:
    """Drop a numbered heading glued to the sentence: the heading is the run of capitalised
    words after the number; the sentence starts at the last of them that a lowercase
    word follows ("6.1 Machine Translation On the WMT ..." -> "On the WMT ...")."""
    m = _SECTION_NUMBER.match(sentence)
    if not m:
        return sentence
    tokens = sentence[m.end():].split(" ")
    run = 0
    while run < len(tokens):
        if tokens[run][:1].isupper():
            run += 1
        elif (tokens[run] in _TITLE_FUNCTION_WORDS and run + 1 < len(tokens) and run > 0
              and tokens[run + 1][:1].isupper()):
            run += 1  # "Results on Receipts": a lowercase function word inside a title
        else:
            break
    if run == 0:
        return sentence  # "3 datasets were used": a number, not a heading
    if run >= len(tokens):
        return ""  # the whole thing is a heading
    if run == 1:
        # "12 Transformer layers are stacked" is a sentence that starts with a number.
        return sentence
    return " ".join(tokens[run - 1:])


def clean_sentence(sentence: str) -> str:
    """The sentence without a leading list marker or section heading ("" if nothing is left)."""
    s = sentence.strip()
    for _ in range(2):
        s = _LIST_MARKER.sub("", s, count=1).strip()
    return _strip_heading(s).strip()


def is_reference_entry(sentence: str) -> bool:
    """A bibliography entry: venue words or links, or several years with a run of names."""
    if _REFERENCE.search(sentence):
        return True
    years = len(_YEAR.findall(sentence))
    capitals = sum(1 for t in sentence.split() if t[:1].isupper())
    return years >= 1 and "," in sentence and capitals >= 0.5 * max(len(sentence.split()), 1) and "." in sentence


def is_label(sentence: str) -> bool:
    """A figure/table label or axis text: opens with "Figure 3", or is mostly capitalised words."""
    if _LABEL_START.match(sentence):
        return True
    tokens = [t for t in sentence.split() if any(c.isalpha() for c in t)]
    if not tokens:
        return True
    caps = sum(1 for t in tokens if t[:1].isupper())
    return len(tokens) >= 4 and caps >= 0.75 * len(tokens)


def eligible(sentence: str) -> str:
    """The quotable form of a chunk sentence, or "" when it is not answer-eligible."""
    s = clean_sentence(sentence)
    if len(s) < 20 or s.rstrip().endswith("?"):
        return ""
    if is_instruction(s) or is_label(s) or is_reference_entry(s) or not is_prose(s):
        return ""
    return s
