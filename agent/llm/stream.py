"""Streaming the answer as it is written: the run page's preview (agent.llm.roles).

The preview reads as the verified answer will: the words a line break cut in the stored text
("regres- sion", which a model copies from its sources) are written whole by the same rule and
evidence as the verifier's (agent.verify.line_break_joiner over the call's sources and their
documents' whole vocabularies), except a word still being written at the end of the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from agent import prompts
from agent.types import Source
from agent.verify import DocumentVocabulary, line_break_joiner
from agent.verify.joining import document_of

# Where the answer being written goes (the run's preview), for the current run only: a
# context variable, so a run executed in this thread never writes into another's.
_ANSWER_SINK: ContextVar[Callable[[str], None] | None] = ContextVar("answer_sink", default=None)
# The retrieved documents' whole vocabularies (the retriever's `vocabulary`), for the same run.
_VOCABULARY: ContextVar[DocumentVocabulary | None] = ContextVar("answer_vocabulary", default=None)

_ANSWER_KEY = re.compile(r'"answer"\s*:\s*\[')
_TEXT_VALUE = re.compile(r'"text"\s*:\s*"((?:[^"\\]|\\.)*)(\\?)("?)')
_INLINE_MARKER = re.compile(r"\s*\[\d+(?:\s*[,;-]\s*\d+)*\]")
# A word a line break cut at the very end of a sentence still being written ("regres- si"):
# its second part may not be whole yet; and its first part alone, the break just written.
_PENDING_BREAK = re.compile(r"[^\W_][\w.\-/]*-\s[\w.\-/]*$")
_PENDING_FIRST_PART = re.compile(r"[^\W_][\w.\-/]*-$")


@contextmanager
def streaming_answer(sink: Callable[[str], None] | None,
                     vocabulary: DocumentVocabulary | None = None) -> Iterator[None]:
    """Within the block, the LLM call that writes the answer streams its sentences to `sink`;
    `vocabulary` (a document's whole vocabulary by its id, as the verifier gets it) joins the
    words a line break cut."""
    token = _ANSWER_SINK.set(sink)
    words = _VOCABULARY.set(vocabulary)
    try:
        yield
    finally:
        _VOCABULARY.reset(words)
        _ANSWER_SINK.reset(token)


def partial_answer_text(raw: str) -> str:
    """The answer sentences in a partial `AnswerOut` JSON reply, the last one possibly cut.

    `{"needs":[...],"premise":{...},"answer":[{"text":"The base model has 6 la` gives
    "The base model has 6 la". Sentence numbers written inline ("[3]") are left out: they are
    the prompt's numbering, not the citations the reader will get.
    """
    key = _ANSWER_KEY.search(raw)
    if key is None:
        return ""
    texts = []
    for match in _TEXT_VALUE.finditer(raw, key.end()):
        body = match.group(1)
        try:
            text = json.loads(f'"{body}"')
        except ValueError:
            # A \u escape cut in the middle: show what came before it.
            text = json.loads('"' + re.sub(r"\\u[0-9a-fA-F]{0,3}$", "", body) + '"')
        text = _INLINE_MARKER.sub("", prompts.unescape_data(text)).strip()
        if text:
            texts.append(text)
    return " ".join(texts)


def _writing(raw: str) -> bool:
    """Whether the last answer sentence of a partial reply is still being written (its string
    not closed yet)."""
    key = _ANSWER_KEY.search(raw)
    values = list(_TEXT_VALUE.finditer(raw, key.end())) if key is not None else []
    return bool(values) and not values[-1].group(3)


def answer_preview(done: Sequence[str] = (), sources: Sequence[Source] = ()) -> Callable[[str], None] | None:
    """The run page's preview of the answer being written (None when no run listens): the
    sentences of earlier calls (`done`), then this call's as they come; the words a line break
    cut joined by the evidence of `sources` (the call's), as the verifier will join them."""
    sink = _ANSWER_SINK.get()
    if sink is None:
        return None
    last = [""]
    join = line_break_joiner(sources, _VOCABULARY.get())
    documents = [document_of(s) for s in sources]

    def on_text(raw: str) -> None:
        text = " ".join([*done, partial_answer_text(raw)]).strip()
        if _writing(raw):
            # A cut word whose second part is still coming is shown once it is whole, so the
            # preview never shows the stored "regres- si" ("bag-of-" is no break: shown).
            pending = _PENDING_FIRST_PART if raw.endswith(("- ", "-\\n")) else _PENDING_BREAK
            text = pending.sub("", text).rstrip()
        text = join(text, documents)  # unchanged when no line break cut a word
        if text != last[0]:
            last[0] = text
            sink(text)

    return on_text
