"""LLM implementations of the agent's roles (agent/roles.py), on agent.llm.LLMClient.

Calls per question are kept few, because each costs a round trip of a second or more:
- plan: no call when the rule-based planner (agent.local.planner) finds the question simple
  (one fact, no comparison): its one sub-query is the question itself, which is what a
  model would search for too. One call for comparisons and multi-part questions;
- audit: ONE batched call per pass for all facts, all sources and the premise, which also
  drafts the answer when the evidence suffices (the model has just read it all);
- reformulate: no call when the audit already named what is missing as search queries
  (it is asked to); one call otherwise;
- generate: no call when the audit's draft fits the final verdict, and none for a refusal,
  which is written deterministically from the audit (what was searched, the closest
  evidence, why it was not enough); one call otherwise (e.g. the plain-RAG baselines).
So a simple answerable question costs 1 call, a comparison 2, and each retry 1 more.

Whatever the model says is checked where a deterministic check will do: each quote must
occur in the chunk it names (agent.verify.find_quote), a source id must be one that was
shown, a "sufficient" verdict without a single verified quote is downgraded, and the last
pass never gets INSUFFICIENT_RETRY.

The wire schemas (`*Out`) are what the model fills in; they are strict-JSON-schema friendly
(no defaults that matter, plain types) and are mapped onto agent.types here.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from agent import prompts
from agent.llm import LLMClient
from agent.types import (
    AuditResult,
    Complexity,
    Draft,
    DraftSentence,
    FactAudit,
    Outcome,
    Plan,
    PremiseCheck,
    Reformulation,
    Source,
    SupportingSentence,
    SupportLabel,
    Usage,
    Verdict,
)
from agent.verify import find_quote, strip_markers

LabelName = Literal["supported", "partial", "unsupported", "contradicted"]
VerdictName = Literal[
    "SUFFICIENT", "PARTIALLY_SUFFICIENT", "INSUFFICIENT_RETRY", "INSUFFICIENT_REFUSE", "FALSE_PREMISE"
]


class ChatClient(Protocol):
    def structured(self, messages: Sequence[dict[str, Any]], schema: type[Any]) -> tuple[Any, Usage]: ...


# ---------------------------------------------------------------------------
# Wire schemas
# ---------------------------------------------------------------------------


class PlanOut(BaseModel):
    complexity: Literal["simple", "multi_part", "comparison"]
    facts: list[str]
    sub_queries: list[str]
    premise: str


class QuoteOut(BaseModel):
    source: int
    quote: str
    label: LabelName


class FactOut(BaseModel):
    fact: str
    label: LabelName
    sentences: list[QuoteOut]


class PremiseOut(BaseModel):
    # The presupposition checked: the plan's, or one the auditor found in the question.
    statement: str = ""
    contradicted: bool
    source: int
    quote: str
    reason: str


class SentenceOut(BaseModel):
    text: str
    citations: list[int]
    quote: str


class AuditOut(BaseModel):
    facts: list[FactOut]
    premise: PremiseOut
    verdict: VerdictName
    missing: list[str]
    reason: str
    # The answer drafted in the same call; empty unless the verdict lets the run answer.
    # (Defaults only help servers in JSON mode that drop fields; strict mode sends them all.)
    answer: list[SentenceOut] = Field(default_factory=list)
    missing_note: str = ""


class QueriesOut(BaseModel):
    sub_queries: list[str]


class DraftOut(BaseModel):
    outcome: Literal["ANSWER", "PARTIAL", "FALSE_PREMISE", "REFUSAL"]
    sentences: list[SentenceOut]
    missing_note: str


class ScoreOut(BaseModel):
    id: int
    score: float = Field(description="0 (irrelevant) to 10 (answers the query)")


class RerankOut(BaseModel):
    scores: list[ScoreOut]


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def _clean_queries(queries: Sequence[str], *, exclude: Sequence[str] = (), limit: int = 3) -> list[str]:
    seen = {q.strip().lower() for q in exclude}
    out: list[str] = []
    for q in queries:
        q = re.sub(r"\s+", " ", q).strip()
        if q and q.lower() not in seen:
            seen.add(q.lower())
            out.append(q)
    return out[:limit]


def _checked_quote(source_no: int, quote: str, sources: Sequence[Source]) -> tuple[Source | None, str, int]:
    """The source a model's quote names, the quote unescaped, and its offset (-1: not there)."""
    if not 1 <= source_no <= len(sources):
        return None, "", -1
    source = sources[source_no - 1]
    text = prompts.unescape_data(quote).strip()
    return source, text, find_quote(text, source.text) if text else -1


def _draft_sentences(items: Sequence[SentenceOut]) -> list[DraftSentence]:
    sentences: list[DraftSentence] = []
    for s in items:
        # Models sometimes write "[2]" in the text despite being told not to: move the
        # markers into the structured citations, where the verifier checks them.
        text, inline = strip_markers(prompts.unescape_data(s.text))
        if not text:
            continue
        citations = list(dict.fromkeys([*s.citations, *inline]))
        sentences.append(DraftSentence(text=text, citations=citations, quote=prompts.unescape_data(s.quote).strip()))
    return sentences


class DraftMemo:
    """Answers drafted by the audit call, for the generator of the same run to pick up.

    Keyed by the question and the exact sources audited, so a draft is only reused for
    the evidence it was written from. Thread-safe; entries are taken, not copied.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._drafts: dict[tuple[str, tuple[int, ...]], tuple[Verdict, list[DraftSentence], str]] = {}

    @staticmethod
    def _key(question: str, sources: Sequence[Source]) -> tuple[str, tuple[int, ...]]:
        return question, tuple(s.chunk_id for s in sources)

    def put(self, question: str, sources: Sequence[Source], verdict: Verdict, sentences: list[DraftSentence],
            missing_note: str) -> None:
        with self._lock:
            if len(self._drafts) > 256:
                # A long-lived client (a benchmark) must not grow without bound.
                self._drafts.clear()
            self._drafts[self._key(question, sources)] = (verdict, sentences, missing_note)

    def take(self, question: str, sources: Sequence[Source]) -> tuple[Verdict, list[DraftSentence], str] | None:
        with self._lock:
            return self._drafts.pop(self._key(question, sources), None)


# ---------------------------------------------------------------------------
# Roles
# ---------------------------------------------------------------------------


class LLMPlanner:
    """The model plans; with `local` set, a question that planner finds simple costs no call."""

    def __init__(self, client: ChatClient, *, local: Any = None) -> None:
        self.client = client
        self.local = local

    def plan(self, question: str) -> Plan:
        if self.local is not None:
            quick = self.local.plan(question)
            if quick.complexity == Complexity.SIMPLE and len(quick.sub_queries) == 1:
                return quick
        out, usage = self.client.structured(prompts.planner_messages(question), PlanOut)
        queries = _clean_queries(out.sub_queries) or [question.strip()[:500]]
        facts = [f.strip() for f in out.facts if f.strip()][:6] or [question.strip()]
        return Plan(complexity=Complexity(out.complexity), facts=facts, sub_queries=queries,
                    premise=out.premise.strip(), usage=usage)


class LLMAuditor:
    """One batched call per pass; every quote it returns is verified against its chunk."""

    def __init__(self, client: ChatClient, *, memo: DraftMemo | None = None) -> None:
        self.client = client
        self.memo = memo

    def audit(self, question: str, plan: Plan, sources: list[Source], *, can_retry: bool) -> AuditResult:
        out, usage = self.client.structured(
            prompts.auditor_messages(question, plan, sources, can_retry=can_retry), AuditOut
        )
        facts: list[FactAudit] = []
        dropped = 0
        for f in out.facts:
            sentences: list[SupportingSentence] = []
            for q in f.sentences:
                source, quote, start = _checked_quote(q.source, q.quote, sources)
                if source is None or start < 0:
                    # A quote that is not in the chunk it names is an invention: gone.
                    dropped += 1
                    continue
                sentences.append(SupportingSentence(chunk_id=source.chunk_id, quote=quote,
                                                    label=SupportLabel(q.label), verified=True, quote_start=start))
            label = SupportLabel(f.label)
            if not sentences and label in (SupportLabel.SUPPORTED, SupportLabel.PARTIAL, SupportLabel.CONTRADICTED):
                label = SupportLabel.UNSUPPORTED
            facts.append(FactAudit(fact=f.fact, label=label, sentences=sentences))

        stated = plan.premise or out.premise.statement.strip()
        premise = PremiseCheck(premise=stated)
        if out.premise.contradicted:
            source, quote, start = _checked_quote(out.premise.source, out.premise.quote, sources)
            if source is not None and start >= 0:
                premise = PremiseCheck(premise=stated, contradicted=True, chunk_id=source.chunk_id,
                                       quote=quote, reason=out.premise.reason)
            else:
                premise = PremiseCheck(premise=stated, reason="the model's contradicting quote was not found")

        verdict = Verdict(out.verdict)
        reason = out.reason
        supported = [f for f in facts if f.label in (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)]
        if verdict == Verdict.FALSE_PREMISE and not premise.contradicted:
            verdict = Verdict.SUFFICIENT if supported else Verdict.INSUFFICIENT_RETRY
            reason = f"{reason} (premise contradiction not backed by a verified quote)".strip()
        if verdict in (Verdict.SUFFICIENT, Verdict.PARTIALLY_SUFFICIENT) and not supported:
            verdict = Verdict.INSUFFICIENT_RETRY
            reason = f"{reason} (no verified supporting quote)".strip()
        if verdict == Verdict.SUFFICIENT and len(supported) < len(facts):
            verdict = Verdict.PARTIALLY_SUFFICIENT
        if verdict == Verdict.INSUFFICIENT_RETRY and not can_retry:
            verdict = Verdict.PARTIALLY_SUFFICIENT if supported else Verdict.INSUFFICIENT_REFUSE
        if dropped:
            reason = f"{reason} ({dropped} unverifiable quote(s) dropped)".strip()
        missing = [m.strip() for m in out.missing if m.strip()]
        if not missing and verdict in (Verdict.PARTIALLY_SUFFICIENT, Verdict.INSUFFICIENT_RETRY,
                                       Verdict.INSUFFICIENT_REFUSE):
            missing = [f.fact for f in facts if f not in supported] or list(plan.facts)
        if self.memo is not None and out.answer and verdict not in (Verdict.INSUFFICIENT_RETRY,
                                                                    Verdict.INSUFFICIENT_REFUSE):
            self.memo.put(question, sources, verdict, _draft_sentences(out.answer), out.missing_note.strip())
        return AuditResult(facts=facts, premise=premise, verdict=verdict, missing=missing,
                           reason=reason, usage=usage)


class LLMReformulator:
    def __init__(self, client: ChatClient, *, reuse_audit_queries: bool = True) -> None:
        self.client = client
        self.reuse_audit_queries = reuse_audit_queries

    def reformulate(self, question: str, plan: Plan, audit: AuditResult, tried: list[str]) -> Reformulation:
        # The audit was asked to phrase what is missing as search queries: use them when
        # they are new, and save a round trip.
        if self.reuse_audit_queries:
            queries = _clean_queries(audit.missing, exclude=tried)
            if queries:
                return Reformulation(sub_queries=queries)
        out, usage = self.client.structured(prompts.reformulator_messages(question, plan, audit, tried), QueriesOut)
        return Reformulation(sub_queries=_clean_queries(out.sub_queries, exclude=tried), usage=usage)


_OUTCOME_OF_VERDICT = {
    Verdict.SUFFICIENT: Outcome.ANSWER,
    Verdict.PARTIALLY_SUFFICIENT: Outcome.PARTIAL,
    Verdict.FALSE_PREMISE: Outcome.FALSE_PREMISE,
    Verdict.INSUFFICIENT_RETRY: Outcome.REFUSAL,
    Verdict.INSUFFICIENT_REFUSE: Outcome.REFUSAL,
}


def refusal_draft(question: str, sources: Sequence[Source], audit: AuditResult) -> Draft:
    """A refusal that says what was searched, the closest evidence and why it fell short."""
    queries = list(dict.fromkeys(s.query for s in sources if s.query)) or [question]
    sentences = [DraftSentence(text="The collection does not hold enough evidence to answer this question.")]
    sentences.append(DraftSentence(text="Searched for: " + "; ".join(f'"{q}"' for q in queries[:6]) + "."))
    closest = next((s for f in audit.facts for s in f.sentences if s.verified), None)
    if closest is not None:
        n = next(i for i, s in enumerate(sources, start=1) if s.chunk_id == closest.chunk_id)
        sentences.append(DraftSentence(text=f'The closest evidence found: "{closest.quote}"', citations=[n],
                                       quote=closest.quote))
    why = audit.reason or "no retrieved passage supports the facts the question needs"
    missing = "; ".join(audit.missing)
    sentences.append(DraftSentence(text=f"Why it is not enough: {why}" + (f" Missing: {missing}." if missing else "")))
    return Draft(outcome=Outcome.REFUSAL, sentences=sentences, missing_note=missing)


class LLMGenerator:
    def __init__(self, client: ChatClient, *, memo: DraftMemo | None = None) -> None:
        self.client = client
        self.memo = memo

    def generate(self, question: str, sources: list[Source], audit: AuditResult | None) -> Draft:
        outcome = Outcome.ANSWER if audit is None else _OUTCOME_OF_VERDICT[audit.verdict]
        if audit is not None and outcome == Outcome.REFUSAL:
            return refusal_draft(question, sources, audit)
        usage = Usage()
        memo = self.memo.take(question, sources) if self.memo is not None and audit is not None else None
        if memo is not None and _OUTCOME_OF_VERDICT[memo[0]] == outcome and memo[1]:
            # The audit call already wrote this answer from the same evidence and verdict.
            sentences, missing = memo[1], memo[2]
        else:
            out, usage = self.client.structured(
                prompts.generator_messages(question, sources, audit, outcome.value), DraftOut
            )
            sentences, missing = _draft_sentences(out.sentences), out.missing_note.strip()
        # The audit decides the outcome, not the generator: it cannot talk its way out of
        # a partial answer or into a premise correction the evidence did not show.
        if outcome == Outcome.PARTIAL and not missing and audit is not None:
            missing = "; ".join(audit.missing)
        return Draft(outcome=outcome, sentences=sentences, missing_note=missing, usage=usage)


def llm_rerank_with_usage(query: str, candidates: Sequence[Any], client: ChatClient) -> tuple[list[float], Usage]:
    """Relevance of every candidate to the query in [0, 1], in ONE call, and its usage.

    `candidates` are strings or objects with a `text` attribute (e.g. Source). A candidate
    the model forgot to score gets 0.
    """
    if not candidates:
        return [], Usage()
    texts = [c if isinstance(c, str) else str(c.text) for c in candidates]
    out, usage = client.structured(prompts.rerank_messages(query, texts), RerankOut)
    scores = [0.0] * len(texts)
    for item in out.scores:
        if 1 <= item.id <= len(texts):
            scores[item.id - 1] = max(0.0, min(10.0, float(item.score))) / 10.0
    return scores, usage


def llm_scorer(client: ChatClient, on_usage: Callable[[Usage], None] | None = None) -> Callable[
        [str, list[str]], list[float]]:
    """The grader knowledge's LLM reranker calls (knowledge.retrieval.rerank.ScoreFn): 0-10
    per passage from one call, whose prompt keeps the passages delimited as untrusted data.
    Each call's usage goes to `on_usage`, so a run that reranks with the LLM pays for it."""

    def score(query: str, passages: list[str]) -> list[float]:
        scores, usage = llm_rerank_with_usage(query, passages, client)
        if on_usage is not None:
            on_usage(usage)
        return [10.0 * s for s in scores]

    return score


def llm_scorer_from_settings() -> Callable[[str, list[str]], list[float]]:
    """settings.RERANK_LLM_SCORER: the grader knowledge's searches use when not handed one."""
    return llm_scorer(LLMClient.from_settings())


def llm_roles(client: LLMClient | None = None, *, plan_simple_locally: bool = True,
              draft_in_audit: bool = True) -> dict[str, Any]:
    """The four LLM roles on one client (from settings unless given), keyed by role name.

    `plan_simple_locally`: simple questions are planned by the rule-based planner (no call).
    `draft_in_audit`: the audit call also drafts the answer, which the generator reuses.
    """
    client = client or LLMClient.from_settings()
    memo = DraftMemo() if draft_in_audit else None
    local = None
    if plan_simple_locally:
        from agent.local.planner import RulePlanner

        local = RulePlanner()
    return {
        "planner": LLMPlanner(client, local=local),
        "auditor": LLMAuditor(client, memo=memo),
        "reformulator": LLMReformulator(client),
        "generator": LLMGenerator(client, memo=memo),
    }
