"""The offline rewrite role: a follow-up made standalone by rules (agent.threads).

Steps:
1. The subject of the thread is the name the previous standalone question asks about: its
   longest run of name-like words (capitalised, an acronym, or letters with digits, e.g.
   "the Transformer", "BERT-large", "GPT-4"), with a leading "the" kept. When the question
   names nothing, the title of the first document its answer cited stands in.
2. "what about X?" / "how about X?" asks the previous question again about X: the subject
   is replaced by X (or X is appended when there was no subject to replace).
3. Otherwise a leading "and"/"also"/"so" is dropped, pronouns that point back ("it", "its",
   "they", "their", "them", "this model", "that paper", ...) become the subject; a short
   follow-up that names nothing and has no pronoun ("how many layers?") gets the subject
   appended.
4. A follow-up that names its own subject and points back to nothing, or names it before
   its first pronoun ("What is BERT and how is it trained?"), is returned as it is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.threads import Rewrite, Turn

_WORD = re.compile(r"[A-Za-z0-9][\w\-.]*[A-Za-z0-9]|[A-Za-z0-9]")
_LEAD = re.compile(r"^\s*(?:(?:and|also|so|ok(?:ay)?|then|but|now|well)\b[\s,]*)+", re.IGNORECASE)
_WHAT_ABOUT = re.compile(r"^\s*(?:and\s+|so\s+)?(?:what|how)\s+about\s+(?P<subject>.+?)\s*[?.!]*\s*$",
                         re.IGNORECASE)
_NOUNS = r"(?:model|models|paper|papers|method|methods|approach|architecture|system|network|one|work|study|dataset)"
_DEMONSTRATIVE = re.compile(rf"\b(?:this|that|these|those|the\s+same)\s+{_NOUNS}\b", re.IGNORECASE)
_POSSESSIVE = re.compile(r"\b(?:its|their)\b", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(?:it|they|them)\b", re.IGNORECASE)
# Words that start a question capitalised without naming anything.
_FUNCTION = {
    "how", "what", "which", "who", "whom", "whose", "when", "where", "why", "does", "do", "did", "is", "are",
    "was", "were", "can", "could", "should", "would", "will", "has", "have", "had", "in", "on", "for", "of",
    "the", "a", "an", "and", "or", "to", "by", "with", "compared", "according", "i", "list", "name", "give",
    "describe", "explain", "tell", "show", "summarise", "summarize",
}
SHORT_FOLLOW_UP = 6  # words: shorter follow-ups that name nothing are taken to continue the thread


def _name_like(word: str, first: bool) -> bool:
    if word.lower() in _FUNCTION:
        return False
    if any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word):
        return True
    if len(word) >= 2 and sum(ch.isupper() for ch in word) >= 2:
        return True  # BERT, RoBERTa, ColBERT
    return word[:1].isupper() and not first


def subject_of(question: str) -> str:
    """The longest run of name-like words in the question ("the Transformer"), or ""."""
    words = list(_WORD.finditer(question))
    best: tuple[int, int] | None = None
    i = 0
    while i < len(words):
        if not _name_like(words[i].group(), first=i == 0):
            i += 1
            continue
        j = i
        while j + 1 < len(words) and _name_like(words[j + 1].group(), first=False) \
                and question[words[j].end():words[j + 1].start()] in (" ", "-"):
            j += 1
        if best is None or j - i > best[1] - best[0]:
            best = (i, j)
        i = j + 1
    if best is None:
        return ""
    start = words[best[0]].start()
    if best[0] > 0 and words[best[0] - 1].group().lower() == "the":
        start = words[best[0] - 1].start()
    return question[start:words[best[1]].end()]


def _names_something(text: str) -> bool:
    return any(_name_like(m.group(), first=k == 0) for k, m in enumerate(_WORD.finditer(text)))


def _names_before_pointing_back(text: str) -> bool:
    """The text names something before its first pronoun (which then refers to that name)."""
    pointers = [m.start() for rx in (_DEMONSTRATIVE, _POSSESSIVE, _PRONOUN) for m in rx.finditer(text)]
    if not pointers:
        return False
    first = min(pointers)
    return any(_name_like(m.group(), first=k == 0) for k, m in enumerate(_WORD.finditer(text)) if m.end() <= first)


def _finish(text: str, original: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = text[:1].upper() + text[1:]
    if original.rstrip().endswith("?") and not text.endswith("?"):
        text = text.rstrip(".!") + "?"
    return text


class LocalRewriter:
    def rewrite(self, question: str, history: Sequence[Turn]) -> Rewrite:
        question = question.strip()
        if not history:
            return Rewrite(question=question)
        last = history[-1]
        previous = last.standalone
        subject = subject_of(previous)
        fallback = subject or (last.titles[0] if last.titles else "")
        about = _WHAT_ABOUT.match(question)
        if about:
            new = about["subject"].strip()
            text = previous.replace(subject, new, 1) if subject else f"{previous.rstrip(' ?.!')} for {new}"
            return Rewrite(question=_finish(text, previous), changed=True)
        body = _LEAD.sub("", question)
        if _names_before_pointing_back(body):
            # "What is BERT and how is it trained?": its pronoun points at its own subject.
            return Rewrite(question=_finish(body, question), changed=body != question)
        if not fallback:
            return Rewrite(question=_finish(body, question), changed=body != question)
        text = _DEMONSTRATIVE.sub(fallback, body)
        text = _POSSESSIVE.sub(f"{fallback}'s", text)
        text = _PRONOUN.sub(fallback, text)
        if text == body and not _names_something(body) and len(_WORD.findall(body)) <= SHORT_FOLLOW_UP:
            text = f"{body.rstrip(' ?.!')} in {fallback}"
        elif text == body and body == question:
            return Rewrite(question=question)
        return Rewrite(question=_finish(text, question), changed=True)
