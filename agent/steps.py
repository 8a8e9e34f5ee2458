"""The loop's step records: what it writes to RunStep.input / RunStep.output, one pydantic
model per step kind, stored with a schema version and read back with `step_read` (issue 16:
typed steps instead of guessed dicts). Built on the role results of agent.types.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from agent.types import AuditResult, CitationRef, Draft, Plan, Source, Verdict

# Bump when a step model changes shape; RunStep.schema_version stores the version a row
# was written with. Version 1 is the shape the loop has written since its first commit.
STEP_SCHEMA_VERSION = 1


class Step(BaseModel):
    """One record of the loop. The fields named in INPUT go to RunStep.input, the rest to output.

    Input and output share one namespace, so a reader writes `step.verdict`, not
    `step.output["verdict"]`. The plan, audit and generate records extend the role's
    result; its `usage` is left out of the columns because RunStep keeps usage in columns
    of its own (read back, it is zero).
    """

    KIND: ClassVar[str] = ""
    INPUT: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        unknown = set(cls.INPUT) - set(cls.model_fields)
        if unknown:
            raise TypeError(f"{cls.__name__}.INPUT names no field: {sorted(unknown)}")

    def columns(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """(input, output) as JSON-ready dicts, the two columns of a RunStep row."""
        data = self.model_dump(mode="json", exclude={"usage"})
        return {name: data.pop(name) for name in self.INPUT}, data

    @classmethod
    def from_columns(cls, data_in: dict[str, Any], data_out: dict[str, Any]) -> Step:
        return cls.model_validate({**data_out, **data_in})


class PlanStep(Step, Plan):
    KIND = "plan"
    INPUT = ("question",)

    question: str


class SourceBrief(BaseModel):
    """A retrieved chunk as a retrieve step records it (the text stays in the Chunk row)."""

    chunk_id: int
    document: str = ""
    page: int = 1
    score: float = 0.0
    query: str = ""

    @classmethod
    def of(cls, source: Source) -> SourceBrief:
        return cls(chunk_id=source.chunk_id, document=source.file_name or source.document_title,
                   page=source.page, score=round(source.score, 4), query=source.query)


class RetrieveStep(Step):
    KIND = "retrieve"
    INPUT = ("queries", "k")

    queries: list[str]
    k: int
    # Each query's hits in rank order (before the merge across queries).
    per_query: dict[str, list[SourceBrief]] = Field(default_factory=dict)

    def chunk_ids(self) -> list[int]:
        """Every chunk found, each once, query by query in rank order."""
        return list(dict.fromkeys(h.chunk_id for hits in self.per_query.values() for h in hits))


class AuditStep(Step, AuditResult):
    KIND = "audit"
    INPUT = ("sources", "can_retry")

    sources: list[int]  # chunk ids audited, in marker order
    can_retry: bool


class ReformulateStep(Step):
    """The retry: new sub-queries written from what the audit found missing."""

    KIND = "reformulate"
    INPUT = ("missing", "tried")

    missing: list[str] = Field(default_factory=list)
    tried: list[str] = Field(default_factory=list)
    sub_queries: list[str] = Field(default_factory=list)  # only the new ones


class GenerateStep(Step, Draft):
    KIND = "generate"
    INPUT = ("sources", "verdict")

    sources: list[int]
    verdict: Verdict | None = None  # None when the configuration does not audit


class VerifyStep(Step):
    KIND = "verify"
    INPUT = ("sentences",)

    sentences: int  # in the draft
    kept: int
    dropped: list[str] = Field(default_factory=list)
    citations: list[CitationRef] = Field(default_factory=list)


class RouteDecision(StrEnum):
    KB_ONLY = "kb_only"
    WEB = "web"


class RouteStep(Step):
    """Web search (agent.web): whether this run stays on the collection or also searches the web, and why.

    Recorded only where a web search provider is configured, after the audit and retries.
    """

    KIND = "route"
    INPUT = ("verdict", "enabled_for_collection", "allowed_for_question")

    verdict: Verdict | None = None
    enabled_for_collection: bool = False
    allowed_for_question: bool = False
    decision: RouteDecision = RouteDecision.KB_ONLY
    reason: str = ""


class WebPageBrief(BaseModel):
    """One page the web step tried: fetched (with its size and passages) or refused (with why)."""

    url: str
    title: str = ""
    query: str = ""
    fetched: bool = False
    reason: str = ""  # why it was refused or failed
    final_url: str = ""
    address: str = ""
    bytes: int = 0
    sha256: str = ""
    fetched_at: str = ""
    passages: int = 0


class WebSearchStep(Step):
    KIND = "web_search"
    INPUT = ("queries", "provider")

    queries: list[str]
    provider: str = ""
    errors: list[str] = Field(default_factory=list)  # the provider's failures, per query
    pages: list[WebPageBrief] = Field(default_factory=list)
    # The web passages handed to the audit (negative chunk ids), best first.
    sources: list[SourceBrief] = Field(default_factory=list)


STEP_MODELS: dict[str, type[Step]] = {
    m.KIND: m for m in (PlanStep, RetrieveStep, AuditStep, ReformulateStep, GenerateStep, VerifyStep,
                        RouteStep, WebSearchStep)
}


def step_read(kind: str, data_in: dict[str, Any], data_out: dict[str, Any], *, schema_version: int) -> Step:
    """A stored step as its model; ValueError (pydantic's ValidationError is one) if it is not one."""
    if schema_version != STEP_SCHEMA_VERSION or kind not in STEP_MODELS:
        raise ValueError(f"no reader for a {kind!r} step of schema version {schema_version}")
    return STEP_MODELS[kind].from_columns(data_in, data_out)
