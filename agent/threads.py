"""Follow-up questions: the types of the rewrite role and its factory.

A follow-up ("and how many layers does it have?", "what about BERT?") means nothing to a
search index on its own. The rewrite role turns it into a standalone question from the
thread's earlier turns; the loop then answers that question like any other, and the run
page shows it as "Searched as: ...". Two implementations, like every role:
agent.local.rewriter.LocalRewriter (offline, deterministic) and
agent.llm_rewriter.LLMRewriter (one bounded structured call).

Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agent.types import Usage

# How many earlier turns a rewrite sees: the subject of a follow-up is almost always in the
# last one or two, and every turn is prompt tokens for the LLM implementation.
HISTORY_TURNS = 3


@dataclass(frozen=True)
class Turn:
    """One earlier turn of a thread, as the rewrite sees it."""

    question: str  # as the user typed it
    searched_as: str = ""  # its standalone form (the question itself for a first turn)
    answer: str = ""
    titles: tuple[str, ...] = ()  # titles of the documents its answer cited, in marker order

    @property
    def standalone(self) -> str:
        return self.searched_as or self.question


@dataclass
class Rewrite:
    question: str  # the standalone question to search and answer
    changed: bool = False  # False: the follow-up already stood on its own
    usage: Usage = field(default_factory=Usage)


@runtime_checkable
class Rewriter(Protocol):
    def rewrite(self, question: str, history: Sequence[Turn]) -> Rewrite:
        """`question` as a standalone question, given the earlier turns (oldest first)."""
        ...


def build_rewriter(backend: str = "local", *, client: Any = None) -> Rewriter:
    """The rewrite role for a backend, as agent.configs.build_roles picks the others."""
    from agent.local.rewriter import LocalRewriter

    if backend == "local":
        return LocalRewriter()
    if backend in ("openai", "embedded"):
        from agent.llm import LLMClient
        from agent.llm_rewriter import LLMRewriter

        return LLMRewriter(client or LLMClient.from_settings(), local=LocalRewriter())
    raise ValueError(f"Unknown LLM backend {backend!r}: use local, openai or embedded.")
