"""LLM implementations of the agent's roles (agent/roles.py), on agent.llm.LLMClient.

Built for small models on a CPU, where every prompt token is prefill time and every
completion token is generation time (issue: a real language model in the loop):
- plan: no call when the rule-based planner (agent.local.planner) finds the question simple;
  one call otherwise. The model names NEEDS (questions or slots: "number of encoder layers
  of the base model"), never values: a need, premise or query that states a number the
  question does not is dropped or stripped (`asserts_new_number`);
- audit + answer: ONE call per pass. The model never sees whole chunks: the local scorer
  (agent.local.scoring: key-term coverage + embeddings) picks the few best answer-eligible
  sentences per need (`candidate_sentences`), numbered; the model replies tersely with, per
  need, the numbers of the sentences that state it, the premise verdict with a sentence
  number, and the answer sentences, each citing sentence numbers. The quotes are filled in
  by code from the numbered sentences, so a model can never mis-quote or quote a heading;
  the verdict follows deterministically from which needs have sentences;
- reformulate: no call when the audit's missing needs are new queries; one call otherwise;
- generate: no call when the audit's answer fits the final verdict, none for a refusal
  (written from the audit); one call otherwise (e.g. the plain-RAG baselines), with the
  same numbered schema.
So a simple answerable question costs 1 call, a comparison 2, and each retry 1 more. Every
answer sentence is then checked by agent.verify (support, not presence).

Streaming: inside `streaming_answer(sink)`, the call that writes the answer is streamed and
`sink` gets the answer sentences written so far (`partial_answer_text` of the partial JSON),
for the run page to show before the answer is checked.

Wire schemas (`*Out`): agent.llm.wire.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from agent import prompts
from agent.llm.candidates import (
    Candidate,
    _clean_queries,
    _strip_new_numbers,
    asserts_new_number,
    candidate_sentences,
)
from agent.llm.client import LLMClient
from agent.llm.stream import _answer_preview
from agent.llm.wire import AnswerOut, ClaimOut, PlanOut, QueriesOut
from agent.types import (
    AuditResult,
    Complexity,
    Draft,
    DraftSentence,
    FactAudit,
    Outcome,
    Plan,
    PremiseCheck,
    QuoteRef,
    Reformulation,
    Source,
    SupportingSentence,
    SupportLabel,
    Usage,
    Verdict,
)
from agent.verify import find_quote, strip_markers

log = logging.getLogger(__name__)


class ChatClient(Protocol):
    def structured(self, messages: Sequence[dict[str, Any]], schema: type[Any], *,
                   on_text: Callable[[str], None] | None = None) -> tuple[Any, Usage]: ...



def _groups(candidates: Sequence[Candidate], sources: Sequence[Source]) -> list[tuple[Source, list[tuple[int, str]]]]:
    groups: dict[int, list[tuple[int, str]]] = {}
    for c in candidates:
        groups.setdefault(c.source, []).append((c.number, c.text))
    return [(sources[i - 1], lines) for i, lines in groups.items()]


def _draft_sentences(claims: Sequence[ClaimOut], by_number: dict[int, Candidate]) -> list[DraftSentence]:
    """Answer sentences with their quotes filled in from the numbered sentences they cite."""
    out: list[DraftSentence] = []
    for claim in claims:
        text, inline = strip_markers(prompts.unescape_data(claim.text))
        numbers = [n for n in dict.fromkeys([*claim.sentences, *inline]) if n in by_number]
        if not text or not numbers:
            continue
        evidence = [QuoteRef(source=by_number[n].source, text=by_number[n].text) for n in numbers]
        citations = list(dict.fromkeys(e.source for e in evidence))
        out.append(DraftSentence(text=text, citations=citations, quote=evidence[0].text, evidence=evidence))
    return out


def _extractive(facts: Sequence[FactAudit], sources: Sequence[Source]) -> list[DraftSentence]:
    """The supporting sentences themselves, when the model wrote no answer sentence."""
    marker = {s.chunk_id: n for n, s in enumerate(sources, start=1)}
    out: list[DraftSentence] = []
    used: set[str] = set()
    for fact in facts:
        for s in fact.sentences:
            if s.label == SupportLabel.SUPPORTED and s.quote not in used and s.chunk_id in marker:
                used.add(s.quote)
                out.append(DraftSentence(text=s.quote, citations=[marker[s.chunk_id]], quote=s.quote))
    return out


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
        quick = self.local.plan(question) if self.local is not None else None
        if quick is not None and quick.complexity == Complexity.SIMPLE and len(quick.sub_queries) == 1:
            return quick
        out, usage = self.client.structured(prompts.planner_messages(question), PlanOut)
        # Needs are questions or slots; one that states a value the question does not give
        # is the model's guess ("the base model has 12 layers"): never a fact to check.
        needs = []
        for need in out.needs:
            need = re.sub(r"\s+", " ", need).strip()
            if not need:
                continue
            if asserts_new_number(need, question):
                log.warning("planner need dropped, it states a value: %r", need)
                continue
            needs.append(need)
        needs = needs or (list(quick.facts) if quick is not None else []) or [question.strip()]
        queries = _clean_queries([_strip_new_numbers(q, question) for q in out.sub_queries])
        queries = queries or [question.strip()[:500]]
        premise = out.premise.strip()
        if asserts_new_number(premise, question):
            premise = ""
        # A model that states no premise (small ones often leave it empty) still gets the
        # question's presupposition checked: the rule planner's, taken from the question's form.
        premise = premise or (quick.premise if quick is not None else "")
        return Plan(complexity=Complexity(out.complexity), facts=needs[:4], sub_queries=queries,
                    premise=premise, usage=usage)


def _numbered_call(client: ChatClient, question: str, needs: Sequence[str], premise: str,
                   sources: Sequence[Source], embed: Any) -> tuple[AnswerOut | None, list[Candidate], Usage]:
    candidates = candidate_sentences(question, needs, premise, sources, embed=embed)
    if not candidates:
        return None, [], Usage()
    messages = prompts.answer_messages(question, needs, premise, _groups(candidates, sources))
    on_text = _answer_preview()
    if on_text is None:
        out, usage = client.structured(messages, AnswerOut)
    else:
        out, usage = client.structured(messages, AnswerOut, on_text=on_text)
    return out, candidates, usage


class LLMAuditor:
    """Audit and answer in one terse call over numbered candidate sentences (module doc)."""

    def __init__(self, client: ChatClient, *, memo: DraftMemo | None = None, embed: Any = None) -> None:
        self.client = client
        self.memo = memo
        self.embed = embed

    def audit(self, question: str, plan: Plan, sources: list[Source], *, can_retry: bool) -> AuditResult:
        if plan.clarify == "vague":
            # The planner found nothing to look for (agent.local.planner): ask, spend no call.
            # (A whole-paper request is a task a model can attempt, so it goes on.)
            return AuditResult(verdict=Verdict.CLARIFY, reason="the question must name what to look for",
                               missing=[question])
        needs = list(plan.facts) or [question]
        out, candidates, usage = _numbered_call(self.client, question, needs, plan.premise, sources, self.embed)
        by_number = {c.number: c for c in candidates}
        cited: dict[int, list[int]] = {}
        if out is not None:
            for item in out.needs:
                if 1 <= item.need <= len(needs):
                    cited.setdefault(item.need, []).extend(n for n in item.sentences if n in by_number)
        facts: list[FactAudit] = []
        for i, need in enumerate(needs, start=1):
            numbers = list(dict.fromkeys(cited.get(i, [])))
            sentences = [self._sentence(by_number[n], sources, SupportLabel.SUPPORTED) for n in numbers]
            label = SupportLabel.SUPPORTED if sentences else SupportLabel.UNSUPPORTED
            if not sentences and candidates:
                # The closest sentence, labelled for what it is: a refusal shows it.
                closest = max(candidates, key=lambda c: c.score)
                sentences = [self._sentence(closest, sources, SupportLabel.UNSUPPORTED)]
            facts.append(FactAudit(fact=need, label=label, sentences=sentences))

        premise = PremiseCheck(premise=plan.premise)
        if out is not None and out.premise.contradicted and plan.premise and out.premise.sentence in by_number:
            c = by_number[out.premise.sentence]
            premise = PremiseCheck(premise=plan.premise, contradicted=True, chunk_id=sources[c.source - 1].chunk_id,
                                   quote=c.text, reason=f"sentence [{c.number}] states otherwise")

        supported = [f for f in facts if f.label == SupportLabel.SUPPORTED]
        if premise.contradicted:
            verdict, reason = Verdict.FALSE_PREMISE, premise.reason
        elif len(supported) == len(facts):
            verdict, reason = Verdict.SUFFICIENT, "every need has a sentence that states it"
        elif supported:
            verdict, reason = Verdict.PARTIALLY_SUFFICIENT, f"{len(supported)} of {len(facts)} needs are stated"
        elif can_retry:
            verdict, reason = Verdict.INSUFFICIENT_RETRY, "no retrieved sentence states what the question needs"
        else:
            verdict, reason = Verdict.INSUFFICIENT_REFUSE, "no retrieved sentence states what the question needs"
        if not candidates:
            reason = "no answer-eligible sentence was retrieved"
        missing = [f.fact for f in facts if f.label != SupportLabel.SUPPORTED]
        if self.memo is not None and out is not None and verdict not in (Verdict.INSUFFICIENT_RETRY,
                                                                        Verdict.INSUFFICIENT_REFUSE):
            draft = _draft_sentences(out.answer, by_number)
            if verdict == Verdict.FALSE_PREMISE:
                draft = _with_correction(draft, premise, sources)
            self.memo.put(question, sources, verdict, draft or _extractive(facts, sources), "")
        return AuditResult(facts=facts, premise=premise, verdict=verdict, missing=missing, reason=reason,
                           usage=usage)

    @staticmethod
    def _sentence(c: Candidate, sources: Sequence[Source], label: SupportLabel) -> SupportingSentence:
        source = sources[c.source - 1]
        return SupportingSentence(chunk_id=source.chunk_id, quote=c.text, label=label, score=c.score,
                                  verified=True, quote_start=find_quote(c.text, source.text))


def _with_correction(draft: list[DraftSentence], premise: PremiseCheck, sources: Sequence[Source]) -> list[DraftSentence]:
    """A premise correction first, citing the contradicting sentence (unless the model's
    first sentence already cites it)."""
    n = next((i for i, s in enumerate(sources, start=1) if s.chunk_id == premise.chunk_id), 0)
    if not n:
        return draft
    if draft and any(e.text == premise.quote for e in draft[0].evidence):
        return draft
    correction = DraftSentence(
        text=f'The question assumes that {premise.premise.rstrip(".")}, but the paper says: "{premise.quote}"',
        citations=[n], quote=premise.quote, evidence=[QuoteRef(source=n, text=premise.quote)])
    return [correction, *draft]


class LLMReformulator:
    def __init__(self, client: ChatClient, *, reuse_audit_queries: bool = True) -> None:
        self.client = client
        self.reuse_audit_queries = reuse_audit_queries

    def reformulate(self, question: str, plan: Plan, audit: AuditResult, tried: list[str]) -> Reformulation:
        # The missing needs are searchable as they are: use them when they are new, and save
        # a round trip.
        if self.reuse_audit_queries:
            queries = _clean_queries(audit.missing, exclude=tried)
            if queries:
                return Reformulation(sub_queries=queries)
        out, usage = self.client.structured(prompts.reformulator_messages(question, plan, audit, tried), QueriesOut)
        queries = [_strip_new_numbers(q, question) for q in out.sub_queries]
        return Reformulation(sub_queries=_clean_queries(queries, exclude=tried), usage=usage)


_OUTCOME_OF_VERDICT = {
    Verdict.SUFFICIENT: Outcome.ANSWER,
    Verdict.PARTIALLY_SUFFICIENT: Outcome.PARTIAL,
    Verdict.FALSE_PREMISE: Outcome.FALSE_PREMISE,
    Verdict.INSUFFICIENT_RETRY: Outcome.REFUSAL,
    Verdict.INSUFFICIENT_REFUSE: Outcome.REFUSAL,
    Verdict.CLARIFY: Outcome.CLARIFY,
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
    def __init__(self, client: ChatClient, *, memo: DraftMemo | None = None, embed: Any = None) -> None:
        self.client = client
        self.memo = memo
        self.embed = embed

    def generate(self, question: str, sources: list[Source], audit: AuditResult | None) -> Draft:
        outcome = Outcome.ANSWER if audit is None else _OUTCOME_OF_VERDICT[audit.verdict]
        if audit is not None and outcome == Outcome.REFUSAL:
            return refusal_draft(question, sources, audit)
        if audit is not None and outcome == Outcome.CLARIFY:
            from agent.local.generator import clarify_draft

            return clarify_draft(question, sources, whole_document=False)
        usage = Usage()
        memo = self.memo.take(question, sources) if self.memo is not None and audit is not None else None
        if memo is not None and _OUTCOME_OF_VERDICT[memo[0]] == outcome and memo[1]:
            # The audit call already wrote this answer from the same evidence and verdict.
            sentences = memo[1]
        else:
            needs = [f.fact for f in audit.facts] if audit is not None and audit.facts else [question]
            premise = audit.premise.premise if audit is not None and audit.premise.contradicted else ""
            out, candidates, usage = _numbered_call(self.client, question, needs, premise, sources, self.embed)
            sentences = _draft_sentences(out.answer, {c.number: c for c in candidates}) if out else []
            if audit is not None and outcome == Outcome.FALSE_PREMISE:
                sentences = _with_correction(sentences, audit.premise, sources)
            if not sentences and audit is not None:
                sentences = _extractive(audit.facts, sources)
        # The audit decides the outcome, not the generator: it cannot talk its way out of
        # a partial answer or into a premise correction the evidence did not show.
        missing = ""
        if outcome == Outcome.PARTIAL and audit is not None and audit.missing:
            missing = "No supporting evidence was found for: " + "; ".join(audit.missing)
        return Draft(outcome=outcome, sentences=sentences, missing_note=missing, usage=usage)


def llm_roles(client: LLMClient | None = None, *, plan_simple_locally: bool = True,
              draft_in_audit: bool = True, embed: Any = None) -> dict[str, Any]:
    """The four LLM roles on one client (from settings unless given), keyed by role name.

    `plan_simple_locally`: simple questions are planned by the rule-based planner (no call).
    `draft_in_audit`: the audit call also drafts the answer, which the generator reuses.
    `embed`: the sentence embedder that pre-scores candidates (the local one by default).
    """
    client = client or LLMClient.from_settings()
    memo = DraftMemo() if draft_in_audit else None
    local = None
    if plan_simple_locally:
        from agent.local.planner import RulePlanner

        local = RulePlanner()
    return {
        "planner": LLMPlanner(client, local=local),
        "auditor": LLMAuditor(client, memo=memo, embed=embed),
        "reformulator": LLMReformulator(client),
        "generator": LLMGenerator(client, memo=memo, embed=embed),
    }
