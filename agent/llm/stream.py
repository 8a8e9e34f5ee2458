"""Streaming the answer as it is written: the run page's preview (agent.llm.roles)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from agent import prompts

# Where the answer being written goes (the run's preview), for the current run only: a
# context variable, so a run executed in this thread never writes into another's.
_ANSWER_SINK: ContextVar[Callable[[str], None] | None] = ContextVar("answer_sink", default=None)

_ANSWER_KEY = re.compile(r'"answer"\s*:\s*\[')
_TEXT_VALUE = re.compile(r'"text"\s*:\s*"((?:[^"\\]|\\.)*)(\\?)("?)')
_INLINE_MARKER = re.compile(r"\s*\[\d+(?:\s*[,;-]\s*\d+)*\]")


@contextmanager
def streaming_answer(sink: Callable[[str], None] | None) -> Iterator[None]:
    """Within the block, the LLM call that writes the answer streams its sentences to `sink`."""
    token = _ANSWER_SINK.set(sink)
    try:
        yield
    finally:
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


def answer_preview(done: Sequence[str] = ()) -> Callable[[str], None] | None:
    """The run page's preview of the answer being written (None when no run listens): the
    sentences of earlier calls (`done`), then this call's as they come."""
    sink = _ANSWER_SINK.get()
    if sink is None:
        return None
    last = [""]

    def on_text(raw: str) -> None:
        text = " ".join([*done, partial_answer_text(raw)]).strip()
        if text != last[0]:
            last[0] = text
            sink(text)

    return on_text
