"""Answer drafts of the LLM roles: sentences with their quotes filled in from the numbered
sentences they cite, the extractive fallback, a premise correction, a refusal, and the memo
that carries the audit call's draft to the generator (agent.llm.roles)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from agent import prompts
from agent.llm.candidates import Candidate
from agent.llm.wire import ClaimOut
from agent.types import (
    AuditResult,
    Draft,
    DraftSentence,
    FactAudit,
    Outcome,
    Plan,
    PremiseCheck,
    QuoteRef,
    Source,
    SupportLabel,
    Verdict,
    replaced_note,
)
from agent.verify import CitationVerifier, normalise, strip_markers


def draft_sentences(claims: Sequence[ClaimOut], by_number: dict[int, Candidate]) -> list[DraftSentence]:
    """Answer sentences with their quotes filled in from the numbered sentences they cite."""
    out: list[DraftSentence] = []
    for claim in claims:
        text, inline = strip_markers(prompts.unescape_data(claim.text))
        numbers = [n for n in dict.fromkeys([*claim.sentences, *inline]) if n in by_number]
        if not text or not numbers:
            continue
        evidence = [QuoteRef(source=by_number[n].source, text=by_number[n].text) for n in numbers]
        # A model copying a long sentence is cut at the schema's bound (ClaimOut.text): the
        # sentence it was copying, whole, is what it meant to write.
        copied = next((e.text for e in evidence if normalise(e.text).startswith(normalise(text))
                       and len(text) >= 0.8 * len(e.text)), None)
        text = copied or text
        citations = list(dict.fromkeys(e.source for e in evidence))
        out.append(DraftSentence(text=text, citations=citations, quote=evidence[0].text, evidence=evidence))
    return out


# Why a supported model sentence was set aside by the local gate (read by the run page as a
# reason: agent.presentation._why_removed shows a detail that starts "its quote is").
NOT_ANSWERING = "its quote is not a sentence the offline auditor would answer the question with"


# The need model the gate was calibrated with (bench/verifier_false_drops.py --gate, on the
# devbench calibration half: 15 of 16 gold sentences kept at need_min 0.2), with the selection
# model whose logit (best_logit) it reads. The auditor's own models have since changed (its
# need model gained `focus_miss` and need_min 0.3, chosen for refusing whole questions; its
# selection was refitted on all calibration halves in stop 26, which moves every logit); as a
# gate over sentences a model already chose, the auditor's own pair set aside right answers
# ("a margin ranking loss" for "which loss function"), so the gate keeps its pair until it is
# re-calibrated.
GATE_NEED_MODEL = {"need_features": ("best_logit", "support"), "need_weights": (0.619, 3.2922),
                   "need_bias": -0.6589, "need_min": 0.2, "need_partial_min": 0.2,
                   "selection_weights": (0.8158, 0.835, 1.0167, 1.1054, 0.7608, 0.418, 0.5017, 0.5511, 0.0, 0.0,
                                         0.0, 0.0, 0.0),
                   "selection_bias": -6.1972, "answer_min": 0.04}


def local_answer_quotes(question: str, needs: Sequence[str], sources: Sequence[Source], *,
                        embed: Any = None, need_min: float | None = None) -> set[str]:
    """The sentences (normalised) the local auditor would take as answering one of the needs:
    among its candidates (answer type, anchors, eligibility), those whose need probability, were
    each the need's best sentence, clears its calibrated `need_min` (agent.local.sufficiency):
    what the extractive backend would answer with, or refuse without. `need_min`: another
    threshold than the auditor's (bench/verifier_false_drops.py --gate measures them)."""
    from dataclasses import replace

    from agent.local.auditor import AuditorParams, LocalAuditor

    plan = Plan(facts=list(needs), sub_queries=[question])
    params = replace(AuditorParams(), **GATE_NEED_MODEL)
    if need_min is not None:
        params = replace(params, need_min=need_min, need_partial_min=need_min)
    return {normalise(q) for q in LocalAuditor(embed=embed, params=params).answering_quotes(question, plan,
                                                                                            list(sources))}


# Why a model's answer gave way to a refusal (the verify step lists it with the model's sentences).
LOCAL_REFUSES = "the offline auditor would refuse the question on this evidence"


# RunConfig.answer_gate's values: no gate; refuse where the local auditor finds no need answered
# (its sufficiency decision alone); refuse wherever its verdict refuses (the premise check too).
ANSWER_GATES = ("off", "needs", "verdict")


def local_refusal(question: str, sources: Sequence[Source], *, embed: Any = None,
                  gate: str = "needs") -> AuditResult | None:
    """The local auditor's audit of the question over `sources` when it refuses, else None.

    The auditor runs as the extractive backend would on the same evidence: the rule planner's
    plan, its own calibrated need model (agent.local.sufficiency), no retry left. `gate` "needs":
    it refuses when it finds no need answered, or a name of the question in no passage (its
    sufficiency decision); "verdict": whenever its verdict refuses, an unconfirmed premise too.

    A model's ANSWER or PARTIAL is kept only where this decision would answer too
    (RunConfig.answer_gate): a copied on-topic sentence passes every verifier rule, and the
    sentence-level gate (`local_answer_quotes`, looser by design) still let small models answer
    out-of-scope questions with one (docs/benchmarks.md, "LLM answers gated ... (stop 26)")."""
    from agent.local.auditor import LocalAuditor
    from agent.local.planner import RulePlanner

    if gate not in ANSWER_GATES:
        raise ValueError(f"Unknown answer gate {gate!r}: use one of {', '.join(ANSWER_GATES)}.")
    if gate == "off":
        return None
    plan = RulePlanner().plan(question)
    audit = LocalAuditor(embed=embed).audit(question, plan, list(sources), can_retry=False)
    if audit.verdict not in (Verdict.INSUFFICIENT_RETRY, Verdict.INSUFFICIENT_REFUSE):
        return None
    if gate == "needs" and not audit.premise.unknown and any(
            f.label in (SupportLabel.SUPPORTED, SupportLabel.PARTIAL) for f in audit.facts):
        return None
    return audit


def gated_refusal(question: str, sentences: Sequence[DraftSentence], sources: Sequence[Source],
                  refused: AuditResult) -> Draft:
    """The refusal that replaces a model's answer the local decision refuses: what was searched and
    why it was not enough (`refusal_draft`), each model sentence listed as set aside."""
    draft = refusal_draft(question, sources, refused)
    notes = [f"[{s.citations[0] if s.citations else 0}] does not support: {s.text[:80]} ({LOCAL_REFUSES}: "
             f"{refused.reason})" for s in sentences]
    return draft.model_copy(update={"notes": notes})


def quote_when_unsupported(sentences: Sequence[DraftSentence], sources: Sequence[Source], *, question: str,
                           outcome: Outcome, may_answer: Callable[[], set[str]],
                           verifier: CitationVerifier | None = None, gate_all: bool = False,
                           ) -> tuple[list[DraftSentence], list[str]]:
    """Each model-written sentence the verifier would drop, replaced by the sentence it cites;
    with a note per replacement. With `gate_all`, a sentence the verifier keeps must cite a
    sentence of `may_answer` too, or it loses its citations (the verifier then drops it as
    uncited) with a note saying why.

    A small model often picks the right numbered sentence and then words the answer badly (an
    invented number, the question restated, half the claim). Its choice is still worth having:
    the cited sentence itself, verbatim, is then the answer sentence (as the extractive backend
    writes it), and the verifier checks it like any other: an ineligible quote (a heading, a
    lead-in, markup), a sentence off the question (agent.verify.relevance) or one already used
    is dropped there, as it would be from an extractive answer. The model's choice alone is not
    enough: the sentence must also be one the local auditor takes as answering a need
    (`may_answer`, computed once and only when needed; `local_answer_quotes`). Without that gate
    the 0.5B model answered 2 of 2 out-of-scope held-out questions with on-topic sentences that
    answer nothing (docs/benchmarks.md).
    """
    verifier = verifier or CitationVerifier()
    out: list[DraftSentence] = []
    notes: list[str] = []
    used: set[str] = set()
    answerable: set[str] | None = None
    for sentence in sentences:
        checked = verifier.verify(Draft(outcome=outcome, sentences=[sentence]), list(sources), question=question)
        spans = sentence.evidence or [QuoteRef(source=n, text=sentence.quote) for n in sentence.citations]
        if any(s.citations for s in checked.sentences):
            if gate_all:
                answerable = may_answer() if answerable is None else answerable
                if not any(normalise(e.text) in answerable for e in spans):
                    # Supported, but by a sentence the local auditor would not answer a need with:
                    # an on-topic sentence that answers nothing (docs/benchmarks.md, "The local gate
                    # on every model sentence").
                    notes.append(f"[{spans[0].source if spans else 0}] does not support: {sentence.text[:80]} "
                                 f"({NOT_ANSWERING})")
                    out.append(DraftSentence(text=sentence.text))
                    continue
            out.append(sentence)
            used.update(normalise(e.text) for e in sentence.evidence)
            continue
        if answerable is None:
            answerable = may_answer()
        quote = next((e for e in spans if normalise(e.text) in answerable and normalise(e.text) not in used), None)
        if quote is None:
            out.append(sentence)
            continue
        used.add(normalise(quote.text))
        why = checked.dropped[0] if checked.dropped else "not supported"
        notes.append(replaced_note(sentence.text, why))
        out.append(DraftSentence(text=quote.text, citations=[quote.source], quote=quote.text, evidence=[quote]))
    return out, notes


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
