"""Models shared by the agent's roles (planner, auditor, reformulator, generator, verifier).

Pure pydantic, no Django: the local (offline) and the LLM implementations of every role
take and return these, so the loop, the tests and the benchmarks do not care which one ran.

Contract notes for implementers:
- Citation markers: `[n]` in a sentence refers to the n-th Source (1-based) of the list the
  generator was given. The verifier maps markers to chunk ids and drops any marker outside
  that list.
- Quotes are always checked against the chunk text (whitespace- and case-normalised,
  see agent.verify.find_quote); an implementation may set `verified`, the verifier
  re-checks it anyway.
- Every role result carries `usage` (zero for local roles) so the run can record LLM
  calls, tokens and cost per step.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Usage(BaseModel):
    """LLM calls, tokens and cost of one step (all zero for the local roles)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class Source(BaseModel):
    """One retrieved chunk, exactly as it was retrieved (the text a citation shows)."""

    model_config = ConfigDict(frozen=True)

    chunk_id: int
    document_id: int | None = None
    document_title: str = ""
    file_name: str = ""  # the uploaded file name (benchmarks match on its stem)
    # The short name the paper's text gives what it presents ("E5"), when its title has none
    # (agent.local.clarify.short_name); how a rephrasing names the paper.
    document_name: str = ""
    page: int = 1  # first page of the chunk, 1-based
    page_end: int = 1
    section: str = ""
    text: str
    score: float = 0.0
    # The (sub-)query that retrieved it, for the refusal's "what was searched".
    query: str = ""
    # Web evidence (agent.web): the page's URL and when it was fetched (ISO 8601). A web
    # source has a negative chunk_id: it lives only in this run, not in the collection.
    url: str = ""
    fetched_at: str = ""
    # Read only to widen the auditor's choice of the answering sentence (RunConfig.pool,
    # RunConfig.sentence_pool): below a query's top k, so the premise check does not read it.
    pool: bool = False
    # Found only by the search for what the question presupposes (RunConfig.premise_search,
    # agent.local.premise_check.premise_search): the premise check reads it, the choice of the
    # answering sentences does not (it is also `pool`).
    premise_search: bool = False

    @property
    def from_web(self) -> bool:
        return bool(self.url)


class Complexity(StrEnum):
    SIMPLE = "simple"
    MULTI_PART = "multi_part"
    COMPARISON = "comparison"


class Plan(BaseModel):
    complexity: Complexity = Complexity.SIMPLE
    # The facts the answer needs, each a short statement or question.
    facts: list[str] = Field(default_factory=list)
    sub_queries: list[str] = Field(min_length=1, max_length=3)
    # A presupposition the question takes for granted ("Why did X use Y?" presumes X used
    # Y); empty when there is none. The auditor checks it against the evidence.
    premise: str = ""
    # Every presupposition of the question, `premise` first ("SBERT pools with MAX by
    # default. Why was MAX preferred over MEAN?" presupposes both statements). Each one is
    # checked for a contradiction; a plan that sets only `premise` (an LLM planner, a
    # stored step) has it as its one presupposition.
    premises: list[str] = Field(default_factory=list)
    # Set when the question cannot be answered as asked: "vague" (no paper, result or
    # term to search for: "what about the results?") or "whole_document" (summarise or
    # compare whole papers, which an extractive backend cannot do). The loop then asks
    # the user to clarify instead of answering.
    clarify: Literal["", "vague", "whole_document"] = ""
    usage: Usage = Field(default_factory=Usage)

    @model_validator(mode="after")
    def _premise_first(self) -> Plan:
        # `premise` and `premises` say the same thing: the first presupposition is `premise`.
        listed = [p for p in dict.fromkeys(p.strip() for p in self.premises) if p]
        if self.premise and (not listed or listed[0] != self.premise):
            listed = [self.premise, *(p for p in listed if p != self.premise)]
        self.premises = listed
        self.premise = listed[0] if listed else ""
        return self


class SupportLabel(StrEnum):
    SUPPORTED = "supported"
    PARTIAL = "partial"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


class Verdict(StrEnum):
    SUFFICIENT = "SUFFICIENT"
    PARTIALLY_SUFFICIENT = "PARTIALLY_SUFFICIENT"
    INSUFFICIENT_RETRY = "INSUFFICIENT_RETRY"
    INSUFFICIENT_REFUSE = "INSUFFICIENT_REFUSE"
    FALSE_PREMISE = "FALSE_PREMISE"
    CLARIFY = "CLARIFY"  # the question must be made specific before it can be answered


class SupportingSentence(BaseModel):
    chunk_id: int
    quote: str  # verbatim from the chunk text
    label: SupportLabel
    score: float = 0.0
    verified: bool = False
    quote_start: int = -1  # offset of the quote in the chunk text, -1 if not found


class FactAudit(BaseModel):
    fact: str
    label: SupportLabel = SupportLabel.UNSUPPORTED
    sentences: list[SupportingSentence] = Field(default_factory=list)


class PremiseCheck(BaseModel):
    premise: str = ""
    contradicted: bool = False
    # The sentence that contradicts the premise and where it is.
    chunk_id: int | None = None
    quote: str = ""
    reason: str = ""
    # False when no retrieved sentence asserts the premise: the answer may not assume it.
    confirmed: bool = True
    # A name the premise gives with its version ("Llama 3.1") that no retrieved passage
    # mentions: the question is about something the collection does not hold.
    unknown: list[str] = Field(default_factory=list)
    # How closely the best relevant sentence that neither contradicts the premise nor leaves
    # out its numbers speaks to it (agent.local.premise_check.check_premise; 0 when none):
    # what the waiver of an unconfirmed premise weighs (AuditorParams.premise_waive_support).
    support: float = 0.0


class Conflict(BaseModel):
    """Two retrieved sentences that disagree about one fact: neither is stated as fact."""

    fact: str
    chunk_ids: list[int] = Field(default_factory=list)
    quotes: list[str] = Field(default_factory=list)
    cue: str = ""


class AuditResult(BaseModel):
    facts: list[FactAudit] = Field(default_factory=list)
    premise: PremiseCheck = Field(default_factory=PremiseCheck)
    conflicts: list[Conflict] = Field(default_factory=list)
    verdict: Verdict
    missing: list[str] = Field(default_factory=list)
    reason: str = ""
    # With CLARIFY: the question asked of each paper whose evidence answers it differently
    # ("What learning rate did the authors of X use?"), best first (agent.local.clarify).
    suggestions: list[str] = Field(default_factory=list)
    # The ids of the documents each suggestion is about: asking it is limited to them.
    suggestion_documents: dict[str, list[int]] = Field(default_factory=dict)
    # A question about "they" that names no paper, answered (or refused) from the one paper
    # the evidence points to (agent.local.clarify.resolving_paper): how the answer names it.
    paper: str = ""
    usage: Usage = Field(default_factory=Usage)


class Reformulation(BaseModel):
    sub_queries: list[str] = Field(default_factory=list, max_length=3)
    usage: Usage = Field(default_factory=Usage)


class Outcome(StrEnum):
    """How a run ended: the one list, used by the roles, Run.outcome and the benchmark."""

    ANSWER = "ANSWER"
    PARTIAL = "PARTIAL"
    REFUSAL = "REFUSAL"
    FALSE_PREMISE = "FALSE_PREMISE"
    CLARIFY = "CLARIFY"

    @property
    def label(self) -> str:
        return _OUTCOME_LABELS[self]


_OUTCOME_LABELS = {
    Outcome.ANSWER: "Answer",
    Outcome.PARTIAL: "Partial answer",
    # "Not answered" on the badge, the history filter and the API schema alike.
    Outcome.REFUSAL: "Not answered",
    Outcome.FALSE_PREMISE: "False premise",
    Outcome.CLARIFY: "Needs clarification",
}


class QuoteRef(BaseModel):
    """A verbatim span of the n-th source that backs (part of) a draft sentence."""

    source: int  # the n of [n], 1-based
    text: str


class DraftSentence(BaseModel):
    text: str  # without markers
    citations: list[int] = Field(default_factory=list)  # the n of each [n], 1-based
    # Optional verbatim span of the cited chunk that backs the sentence. After verification the
    # words a line break cut are written whole ("Chat- GPT" -> "ChatGPT",
    # knowledge.text.join_line_breaks); agent.verify.quote_span still finds it in the chunk.
    quote: str = ""
    # Per-citation spans (a sentence resting on sentences of several sources); when set,
    # the verifier checks these instead of `quote`.
    evidence: list[QuoteRef] = Field(default_factory=list)


class Draft(BaseModel):
    outcome: Outcome
    sentences: list[DraftSentence] = Field(default_factory=list)
    missing_note: str = ""
    # Concrete rephrasings the user can pick (CLARIFY, and requests the backend cannot do).
    suggestions: list[str] = Field(default_factory=list)
    suggestion_documents: dict[str, list[int]] = Field(default_factory=dict)  # as AuditResult's
    # What the generator changed before verification (e.g. a model's sentence replaced by the
    # sentence it cites), listed with the verifier's own notes on the verify step.
    notes: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)


_REPLACED = "replaced by the sentence it cites: "
_BECAUSE = " [because: "


def replaced_note(text: str, why: str) -> str:
    """The Draft note of a sentence the generator replaced by the sentence it cites."""
    return f"{_REPLACED}{text}{_BECAUSE}{why}]"


def parse_replaced_note(note: str) -> tuple[str, str] | None:
    """(the replaced sentence, the verifier's reason) of a replaced_note, else None."""
    if not note.startswith(_REPLACED) or _BECAUSE not in note:
        return None
    text, _, why = note[len(_REPLACED):].rpartition(_BECAUSE)
    return text, why.removesuffix("]")


class CitationRef(BaseModel):
    marker: int
    chunk_id: int
    quote: str = ""
    quote_start: int = -1
    verified: bool = False


class Answer(BaseModel):
    """A verified draft: only sentences whose citations hold, markers renumbered 1..n."""

    outcome: Outcome
    sentences: list[DraftSentence] = Field(default_factory=list)
    citations: list[CitationRef] = Field(default_factory=list)
    missing_note: str = ""
    suggestions: list[str] = Field(default_factory=list)
    suggestion_documents: dict[str, list[int]] = Field(default_factory=dict)  # as AuditResult's
    dropped: list[str] = Field(default_factory=list)  # why each removed sentence/marker went

    @property
    def text(self) -> str:
        parts = []
        for s in self.sentences:
            markers = "".join(f"[{n}]" for n in s.citations)
            parts.append(f"{s.text} {markers}".strip() if markers else s.text)
        return " ".join(parts)
