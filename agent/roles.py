"""The roles of the agent loop as small interfaces.

Each has a local implementation (agent/local/, offline and deterministic) and an LLM one
(agent/llm_roles.py). The loop only sees these Protocols, so tests use deterministic fakes
and the benchmark swaps implementations by configuration.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agent.types import Answer, AuditResult, Draft, Plan, Reformulation, Source

if TYPE_CHECKING:
    from knowledge.text import Vocabulary


@runtime_checkable
class Retriever(Protocol):
    def retrieve(self, query: str, *, k: int) -> list[Source]:
        """The k best chunks for the query, best first."""
        ...


@runtime_checkable
class Planner(Protocol):
    def plan(self, question: str) -> Plan:
        """Complexity, the needed facts and 1-3 sub-queries (a comparison: one per side)."""
        ...


@runtime_checkable
class Auditor(Protocol):
    def audit(self, question: str, plan: Plan, sources: list[Source], *, can_retry: bool) -> AuditResult:
        """Supporting sentences per fact, the premise check and the verdict.

        `can_retry` is False on the last pass: the auditor must then choose between the
        final verdicts (never INSUFFICIENT_RETRY).
        """
        ...


@runtime_checkable
class Reformulator(Protocol):
    def reformulate(
        self, question: str, plan: Plan, audit: AuditResult, tried: list[str]
    ) -> Reformulation:
        """New sub-queries aimed at what is missing, none equal to a query in `tried`."""
        ...


@runtime_checkable
class Generator(Protocol):
    def generate(self, question: str, sources: list[Source], audit: AuditResult | None) -> Draft:
        """A draft whose sentences cite sources as 1-based markers into `sources`.

        `audit` is None for the plain-RAG baselines: they always answer from `sources`.
        With an audit, write only from its supported sentences and follow its verdict
        (FALSE_PREMISE: the correction with its citation; INSUFFICIENT_REFUSE: a refusal;
        PARTIALLY_SUFFICIENT: a partial answer with a missing-evidence note).
        """
        ...


@runtime_checkable
class Verifier(Protocol):
    def verify(self, draft: Draft, sources: list[Source], *, question: str = "",
               vocabulary: Callable[[int], Vocabulary | None] | None = None) -> Answer:
        """Drop markers to unknown sources and sentences their cited quotes do not support.
        `vocabulary`: a cited document's whole vocabulary by its id, for the words a line break
        cut (the retriever's `vocabulary`, knowledge.vocabulary.document_vocabulary)."""
        ...
