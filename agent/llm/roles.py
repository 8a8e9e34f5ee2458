"""LLM implementations of the agent's roles (agent/roles.py), on agent.llm.LLMClient.

Built for small models on a CPU, where every prompt token is prefill time and every
completion token is generation time (issue: a real language model in the loop):
- plan: no call when the rule-based planner (agent.local.planner) finds the question simple
  or splits it into needs; one call otherwise. The model names NEEDS (questions or slots: "number of encoder layers
  of the base model"), never values: a need, premise or query that states a number the
  question does not is dropped or stripped (`asserts_new_number`);
- audit + answer: ONE call per pass. The model never sees whole chunks: the local scorer
  (agent.local.scoring: key-term coverage + embeddings) picks the few best answer-eligible
  sentences per need (`candidate_sentences`), numbered; the model replies tersely with, per
  need, the numbers of the sentences that state it, the premise verdict with a sentence
  number, and the answer sentences, each citing sentence numbers. The quotes are filled in
  by code from the numbered sentences, so a model can never mis-quote or quote a heading;
  the verdict follows deterministically from which needs have sentences; a retry pass whose
  evidence is no better than what the model rejected costs no call;
- reformulate: no call (the audit's missing needs, or the rule reformulator's queries);
- generate: no call when the audit's answer fits the final verdict, none for a refusal
  (written from the audit); one call otherwise (e.g. the plain-RAG baselines), with the
  same numbered schema.
So most questions cost 1 call, a comparison the rules cannot split 2, and a retry 1 more only
when it found better evidence (agent.llm.frugal says why each call is saved). Every
answer sentence is then checked by agent.verify (support, not presence).

Streaming: inside `streaming_answer(sink)`, the call that writes the answer is streamed and
`sink` gets the answer sentences written so far (`partial_answer_text` of the partial JSON),
for the run page to show before the answer is checked.

Wire schemas (`*Out`): agent.llm.wire.
"""

from __future__ import annotations

import logging
import re
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
from agent.llm.drafts import (
    DraftMemo,
    _extractive,
    _with_correction,
    draft_sentences,
    gated_refusal,
    local_answer_quotes,
    local_refusal,
    quote_when_unsupported,
    refusal_draft,
)
from agent.llm.frugal import RejectedMemory, local_plan_suffices, needs_from_answer
from agent.llm.premise import premise_disagreement
from agent.llm.stream import answer_preview
from agent.llm.whole import Library, WholePapers
from agent.llm.wire import AnswerOut, PlanOut, QueriesOut
from agent.types import (
    AuditResult,
    Complexity,
    Draft,
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
from agent.verify import CitationVerifier, find_quote

log = logging.getLogger(__name__)


class ChatClient(Protocol):
    def structured(self, messages: Sequence[dict[str, Any]], schema: type[Any], *,
                   on_text: Callable[[str], None] | None = None) -> tuple[Any, Usage]: ...



def _groups(candidates: Sequence[Candidate], sources: Sequence[Source]) -> list[tuple[Source, list[tuple[int, str]]]]:
    groups: dict[int, list[tuple[int, str]]] = {}
    for c in candidates:
        groups.setdefault(c.source, []).append((c.number, c.text))
    return [(sources[i - 1], lines) for i, lines in groups.items()]


# ---------------------------------------------------------------------------
# Roles
# ---------------------------------------------------------------------------


class LLMPlanner:
    """The model plans; with `local` set, a question that planner finds simple or splits into
    needs costs no call (agent.llm.frugal.local_plan_suffices)."""

    def __init__(self, client: ChatClient, *, local: Any = None) -> None:
        self.client = client
        self.local = local

    def plan(self, question: str) -> Plan:
        quick = self.local.plan(question) if self.local is not None else None
        # A whole-paper request is read paper by paper (agent.llm.whole): no plan to write.
        if quick is not None and (local_plan_suffices(quick) or quick.clarify == "whole_document"):
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
                   sources: Sequence[Source], candidates: Sequence[Candidate]) -> tuple[AnswerOut | None, Usage]:
    if not candidates:
        return None, Usage()
    messages = prompts.answer_messages(question, needs, premise, _groups(candidates, sources))
    on_text = answer_preview(sources=sources)
    if on_text is None:
        return client.structured(messages, AnswerOut)
    return client.structured(messages, AnswerOut, on_text=on_text)


class LLMAuditor:
    """Audit and answer in one terse call over numbered candidate sentences (module doc)."""

    def __init__(self, client: ChatClient, *, memo: DraftMemo | None = None, embed: Any = None,
                 whole: WholePapers | None = None) -> None:
        self.client = client
        self.memo = memo
        self.embed = embed
        self.rejected = RejectedMemory()
        self.whole = whole

    def audit(self, question: str, plan: Plan, sources: list[Source], *, can_retry: bool) -> AuditResult:
        if plan.clarify == "vague":
            # The planner found nothing to look for (agent.local.planner): ask, spend no call.
            # (A whole-paper request is a task a model can attempt: map-reduce, below.)
            return AuditResult(verdict=Verdict.CLARIFY, reason="the question must name what to look for",
                               missing=[question])
        if plan.clarify == "whole_document" and self.whole is not None:
            # Summarise or compare whole papers: map-reduce over their sections (agent.llm.whole).
            return self.whole.audit(question, plan, sources)
        needs = list(plan.facts) or [question]
        candidates = candidate_sentences(question, needs, plan.premise, sources, embed=self.embed)
        if self.rejected.nothing_better(question, plan, candidates):
            # A retry that found nothing better than what the model already rejected: not asked again.
            out, usage = None, Usage()
        else:
            out, usage = _numbered_call(self.client, question, needs, plan.premise, sources, candidates)
        by_number = {c.number: c for c in candidates}
        cited: dict[int, list[int]] = {}
        if out is not None:
            for item in out.needs:
                if 1 <= item.need <= len(needs):
                    cited.setdefault(item.need, []).extend(n for n in item.sentences if n in by_number)
            if not any(cited.values()):
                # A small model often cites in its answer and leaves the needs empty.
                cited = needs_from_answer(needs, out.answer, set(by_number))
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
        if out is not None and out.premise.contradicted and plan.premise.strip() and out.premise.sentence in by_number:
            c = by_number[out.premise.sentence]
            # The model's verdict stands only when the local checks find the sentence disagrees
            # (agent.llm.premise); otherwise the question is judged by its needs.
            how = premise_disagreement(plan.premise, c.text, context=[o.text for o in candidates], embed=self.embed)
            if how:
                premise = PremiseCheck(premise=plan.premise, contradicted=True, chunk_id=sources[c.source - 1].chunk_id,
                                       quote=c.text, reason=f"sentence [{c.number}] states otherwise ({how})")
            else:
                log.info("model's premise verdict set aside: sentence [%d] does not disagree with %r",
                         c.number, plan.premise)

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
        elif out is None:
            reason = "the new evidence holds no sentence better than those the model found nothing in"
        if supported or premise.contradicted:
            self.rejected.forget(question)
        else:
            self.rejected.remember(question, plan, candidates)
        missing = [f.fact for f in facts if f.label != SupportLabel.SUPPORTED]
        if self.memo is not None and out is not None and verdict not in (Verdict.INSUFFICIENT_RETRY,
                                                                        Verdict.INSUFFICIENT_REFUSE):
            draft = draft_sentences(out.answer, by_number)
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


class LLMReformulator:
    """New queries for a retry: the audit's missing needs when they are new, else the rule
    reformulator's keyword queries; the model only with `use_model` (agent.llm.frugal)."""

    def __init__(self, client: ChatClient, *, reuse_audit_queries: bool = True, use_model: bool = False) -> None:
        self.client = client
        self.reuse_audit_queries = reuse_audit_queries
        self.use_model = use_model or not reuse_audit_queries

    def reformulate(self, question: str, plan: Plan, audit: AuditResult, tried: list[str]) -> Reformulation:
        # The missing needs are searchable as they are: use them when they are new, and save
        # a round trip.
        if self.reuse_audit_queries:
            queries = _clean_queries(audit.missing, exclude=tried)
            if queries:
                return Reformulation(sub_queries=queries)
        if not self.use_model:
            from agent.local.reformulator import KeywordReformulator

            return KeywordReformulator().reformulate(question, plan, audit, tried)
        out, usage = self.client.structured(prompts.reformulator_messages(question, plan, audit, tried), QueriesOut)
        queries = [_strip_new_numbers(q, question) for q in out.sub_queries]
        return Reformulation(sub_queries=_clean_queries(queries, exclude=tried), usage=usage)


# The local gate on every model sentence, not only on replacements (agent.llm.drafts): on the
# devbench calibration half it kept a gold sentence for 11 of the 12 questions where the model
# was shown one, set aside 88 of 212 other shown sentences, and left 1 of 3 out-of-scope
# questions a sentence to answer with (docs/benchmarks.md, "The local gate on every model sentence").
GATE_ALL = True

_OUTCOME_OF_VERDICT = {
    Verdict.SUFFICIENT: Outcome.ANSWER,
    Verdict.PARTIALLY_SUFFICIENT: Outcome.PARTIAL,
    Verdict.FALSE_PREMISE: Outcome.FALSE_PREMISE,
    Verdict.INSUFFICIENT_RETRY: Outcome.REFUSAL,
    Verdict.INSUFFICIENT_REFUSE: Outcome.REFUSAL,
    Verdict.CLARIFY: Outcome.CLARIFY,
}


class LLMGenerator:
    """Writes the answer (or takes the audit call's draft); with `gate_all`, every model sentence
    must cite a sentence the local auditor would answer with; with `answer_gate`, an audited
    ANSWER or PARTIAL stands only where the local auditor would not refuse (agent.llm.drafts)."""

    def __init__(self, client: ChatClient, *, memo: DraftMemo | None = None, embed: Any = None,
                 gate_all: bool | None = None, answer_gate: str = "off", whole: WholePapers | None = None) -> None:
        self.client = client
        self.memo = memo
        self.embed = embed
        self.gate_all = GATE_ALL if gate_all is None else gate_all
        self.answer_gate = answer_gate
        self.whole = whole

    def generate(self, question: str, sources: list[Source], audit: AuditResult | None) -> Draft:
        whole = self.whole.generate(question, sources, audit) if self.whole is not None else None
        if whole is not None:
            return whole
        outcome = Outcome.ANSWER if audit is None else _OUTCOME_OF_VERDICT[audit.verdict]
        if audit is not None and outcome == Outcome.REFUSAL:
            return refusal_draft(question, sources, audit)
        if audit is not None and outcome == Outcome.CLARIFY:
            from agent.local.generator import clarify_draft

            return clarify_draft(question, sources, whole_document=False, suggested=audit.suggestions,
                                 documents=audit.suggestion_documents)
        usage = Usage()
        memo = self.memo.take(question, sources) if self.memo is not None and audit is not None else None
        if memo is not None and _OUTCOME_OF_VERDICT[memo[0]] == outcome and memo[1]:
            # The audit call already wrote this answer from the same evidence and verdict.
            sentences = memo[1]
        else:
            needs = [f.fact for f in audit.facts] if audit is not None and audit.facts else [question]
            premise = audit.premise.premise if audit is not None and audit.premise.contradicted else ""
            candidates = candidate_sentences(question, needs, premise, sources, embed=self.embed)
            out, usage = _numbered_call(self.client, question, needs, premise, sources, candidates)
            sentences = draft_sentences(out.answer, {c.number: c for c in candidates}) if out else []
            if audit is not None and outcome == Outcome.FALSE_PREMISE:
                sentences = _with_correction(sentences, audit.premise, sources)
            if not sentences and audit is not None:
                sentences = _extractive(audit.facts, sources)
        notes: list[str] = []
        if self.answer_gate != "off" and audit is not None and outcome in (Outcome.ANSWER, Outcome.PARTIAL):
            refused = local_refusal(question, sources, embed=self.embed, gate=self.answer_gate)
            if refused is not None:
                return gated_refusal(question, sentences, sources, refused).model_copy(update={"usage": usage})
        if outcome in (Outcome.ANSWER, Outcome.PARTIAL):
            needs = [f.fact for f in audit.facts] if audit is not None and audit.facts else [question]
            sentences, notes = quote_when_unsupported(
                sentences, sources, question=question, outcome=outcome, verifier=CitationVerifier(embed=self.embed),
                may_answer=lambda: local_answer_quotes(question, needs, sources, embed=self.embed),
                gate_all=self.gate_all)
        # The audit decides the outcome, not the generator: it cannot talk its way out of
        # a partial answer or into a premise correction the evidence did not show.
        missing = ""
        if outcome == Outcome.PARTIAL and audit is not None and audit.missing:
            missing = "No supporting evidence was found for: " + "; ".join(audit.missing)
        return Draft(outcome=outcome, sentences=sentences, missing_note=missing, usage=usage, notes=notes)


def llm_roles(client: LLMClient | None = None, *, plan_simple_locally: bool = True,
              draft_in_audit: bool = True, embed: Any = None, gate_all: bool | None = None,
              answer_gate: str = "off", library: Library | None = None) -> dict[str, Any]:
    """The four LLM roles on one client (from settings unless given), keyed by role name.

    `plan_simple_locally`: simple questions are planned by the rule-based planner (no call).
    `draft_in_audit`: the audit call also drafts the answer, which the generator reuses.
    `embed`: the sentence embedder that pre-scores candidates (the local one by default).
    `gate_all`: every answer sentence must cite a sentence the local auditor would answer with,
    not only one replacing a dropped sentence (agent.llm.drafts.quote_when_unsupported);
    `GATE_ALL` by default.
    `answer_gate` ("off", "needs", "verdict"): an audited ANSWER or PARTIAL stands only where the
    local auditor would not refuse the question on the same evidence (RunConfig.answer_gate,
    agent.llm.drafts.local_refusal).
    `library`: where a whole-paper request reads its papers (agent.llm.whole; the database's by default).
    """
    client = client or LLMClient.from_settings()
    memo = DraftMemo() if draft_in_audit else None
    local = None
    if plan_simple_locally:
        from agent.local.planner import RulePlanner

        local = RulePlanner()
    whole = WholePapers(client, embed=embed, library=library)
    return {
        "planner": LLMPlanner(client, local=local),
        "auditor": LLMAuditor(client, memo=memo, embed=embed, whole=whole),
        "reformulator": LLMReformulator(client),
        "generator": LLMGenerator(client, memo=memo, embed=embed, gate_all=gate_all, answer_gate=answer_gate,
                                  whole=whole),
    }
