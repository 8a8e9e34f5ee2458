"""Local auditor: which retrieved sentences answer each need, whether the question's
premise holds, and the verdict.

For each fact of the plan:
1. every answer-eligible sentence of every retrieved chunk (agent.local.eligibility: no
   headings, labels, references, instructions; nothing from a chunk that tries to steer a
   model) is scored against the fact: support = coverage of the fact's content terms and
   cosine similarity (agent.local.scoring), and answer fit = whether it holds the kind of
   answer asked for (agent.local.answer_type: a number next to the focus, a reason, a
   name, ...). Sentences are ranked by both, over ALL chunks retrieved so far (so a retry
   can only add better candidates), near-duplicates dropped;
2. a fact whose anchor terms (names, acronyms, identifiers, numbers) the supporting
   document does not mention is unsupported, however similar the wording;
3. two supporting sentences that contradict each other are a conflict: neither is stated
   as fact, the answer reports both.
The premise (agent.local.planner.presupposition) is then checked: a relevant sentence that
disagrees (a surface cue of agent.local.contradiction, or P(CONTRADICT) of the fitted
classifier agent.local.entailment) makes it FALSE_PREMISE with that sentence; no
sentence asserting it means the answer may not assume it (PARTIAL, or a refusal saying so).

Whether each need is answered at all is a calibrated probability
(agent.local.sufficiency, over its best candidate); the verdict is taken need by need
(_verdict): all answered is SUFFICIENT, some is PARTIALLY_SUFFICIENT naming the others as
asked, none a refusal.

Every threshold is a field of AuditorParams, calibrated by bench/calibrate_auditor.py
(SciFact train claims), bench/devbench.py --calibrate and bench/calibrate_sufficiency.py
(SciFact calibration claims and the calibration half of devbench, agent.local.calibration);
see docs/benchmarks.md for held-out figures.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from agent.local import selection, sufficiency
from agent.local.answer_type import need_of, offers
from agent.local.contradiction import contradiction_cue, siblings
from agent.local.eligibility import eligible, is_injection
from agent.local.embed import EmbedFn, get_embed
from agent.local.entailment import Classifier, default_classifier, fired_cue
from agent.local.reformulator import PREMISE_PREFIX
from agent.local.scoring import SentenceScore, score_sentences
from agent.local.selection import candidate_idf
from agent.local.text import anchor_coverage, anchor_terms, content_terms, coverage, split_sentences, term_set
from agent.types import (
    AuditResult,
    Conflict,
    FactAudit,
    Plan,
    PremiseCheck,
    Source,
    SupportingSentence,
    SupportLabel,
    Verdict,
)
from agent.verify import eligibility, find_quote

_MAX_SENTENCE_CHARS = 600


@dataclass(frozen=True)
class AuditorParams:
    """The local auditor's thresholds. Defaults: see docs/benchmarks.md for the commands
    that chose them and the held-out figures (never measured on the data that chose them)."""

    # support = w_coverage * term coverage + (1 - w_coverage) * cosine (SciFact calibration split).
    w_coverage: float = 0.5
    support_min: float = 0.52  # a sentence this close supports the fact (SciFact calibration split)
    partial_min: float = 0.42  # one grid step below: speaks to it in part
    # Share of a fact's anchor terms the supporting document must mention (devbench calibration half).
    anchor_min: float = 0.75
    # A sentence contradicts the premise only if it is at least this relevant to it.
    premise_contradict_min: float = 0.45
    # The premise counts as asserted by a sentence at least this close to it.
    premise_support_min: float = 0.42
    # Which sentence answers a need: agent.local.selection's logistic model (weights in the
    # order of its FEATURES) and the probabilities that make a fact SUPPORTED / a sentence
    # worth stating at all. Fitted and chosen by bench/calibrate_selection.py on the devbench
    # calibration half (about 1 candidate in 40 holds a gold span, hence the small values).
    selection_weights: tuple[float, ...] = (0.7341, 0.6226, 0.7337, 1.0908, 0.3401, -0.1266, 0.8588, 1.0319)
    selection_bias: float = -6.0983
    # answer_min no longer labels a fact (need_min below does, from agent.local.sufficiency);
    # it is kept for bench/calibrate_selection.py's grid. answer_partial_min still gates
    # which sentences are candidates at all.
    answer_min: float = 0.04
    answer_partial_min: float = 0.04
    sentences_per_fact: int = 2
    # Two quotes sharing this share of their terms say the same thing: keep one.
    duplicate_jaccard: float = 0.7
    # Whether a relevant sentence contradicts the premise beyond the surface cues:
    # agent.local.entailment's softmax (weights in agent/local/premise_model.json) and the
    # P(CONTRADICT) that makes the premise false, both fitted and chosen by
    # bench/calibrate_premise.py on SciFact calibration claims (at most 2 % more false alarms
    # than the cues on their out-of-fold predictions).
    premise_model: Classifier = field(default_factory=default_classifier)
    premise_false_min: float = 0.6
    # Whether a need is answered at all (agent.local.sufficiency: a logistic model over its
    # best candidate's selection logit and support, in the order of NEED_FEATURES), and the
    # probabilities that make it SUPPORTED / PARTIAL (equal: no PARTIAL band was fitted).
    # Weights fitted by bench/calibrate_sufficiency.py on SciFact calibration claims and the
    # devbench calibration half. The whole-run cost on the calibration half is flat from 0 to
    # 0.35 (0.35 won only by a gold-removed twin turned into a wrong FALSE_PREMISE), so the
    # threshold is the lowest point of that flat stretch that was measured apart from 0:
    # it changes no calibration outcome of answerable questions (docs/benchmarks.md).
    need_weights: tuple[float, ...] = (0.619, 3.2922)
    need_bias: float = -0.6589
    need_min: float = 0.2
    need_partial_min: float = 0.2
    # A one-need question whose premise no sentence confirms is answered (PARTIAL, saying
    # so) only when its need is at least this likely answered; above 1, never.
    premise_unconfirmed_min: float = 1.01


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


@dataclass
class _Candidate:
    source_index: int
    quote: str
    context: str  # the previous sentence and the document title: what "it" and "we" refer to
    terms: set[str]
    # The sentence as the splitter gave it: the index build already embedded exactly this
    # text (EmbeddingCache), so its vector costs a cache read, not a model run.
    raw: str = ""


class LocalAuditor:
    def __init__(self, embed: EmbedFn | None = None, params: AuditorParams | None = None) -> None:
        self._embed = embed
        self.params = params or AuditorParams()

    def _vectors(self, texts: list[str]) -> np.ndarray:
        embed = self._embed or get_embed()
        return embed(texts)

    def _candidates(self, facts: list[str], premise: str, sources: list[Source]) -> list[_Candidate]:
        wanted: set[str] = set()
        for text in [*facts, premise]:
            wanted.update(content_terms(text))
        out: list[_Candidate] = []
        for i, source in enumerate(sources):
            # A chunk that tries to steer a model is untrusted as a whole: its declarative
            # sentences may be the payload ("answer every question with: '...'").
            if is_injection(source.text):
                continue
            # A sentence of the Doc2query paper speaks of Doc2query even when it says "we".
            title_terms = term_set(source.document_title)
            previous = ""
            for raw in split_sentences(source.text):
                quote = eligible(raw)
                if quote and len(quote) <= _MAX_SENTENCE_CHARS:
                    terms = term_set(quote)
                    if wanted & (terms | title_terms):
                        out.append(_Candidate(i, quote, f"{previous} {source.document_title}", terms, raw))
                previous = raw
        return out

    def audit(self, question: str, plan: Plan, sources: list[Source], *, can_retry: bool) -> AuditResult:
        p = self.params
        if plan.clarify:
            reason = ("the question names no paper, result or term to look for" if plan.clarify == "vague"
                      else "summarising or comparing whole papers is not something an extractive answer can do")
            return AuditResult(verdict=Verdict.CLARIFY, reason=reason, missing=[question])
        facts = _facts(question, plan)
        cands = self._candidates(facts, plan.premise, sources)
        vecs = self._vectors(facts + ([plan.premise] if plan.premise else []) + [c.raw or c.quote for c in cands])
        fact_vecs = vecs[: len(facts)]
        premise_vec = vecs[len(facts)] if plan.premise else None
        sent_vecs = vecs[len(facts) + (1 if plan.premise else 0):]
        sibling_map = siblings(s.text for s in sources)
        doc_terms = _doc_terms(sources)

        # Terms many candidates share say little about which one answers: rarer ones
        # ("default" among sentences that all say "pooling strategy") decide the ranking.
        idf = candidate_idf([c.terms for c in cands])

        audits: list[FactAudit] = []
        need_ps: list[float] = []
        missing: list[str] = []
        conflicts: list[Conflict] = []
        # The missing-evidence note names each unanswered part as the question put it ("how
        # many GPUs was it trained on?"), not with the subject it borrowed for scoring.
        asked = plan.facts or [question]
        for n, (fact, fvec) in enumerate(zip(facts, fact_vecs)):
            scores, ranked = self._rank(fact, fvec, cands, sent_vecs, sources, doc_terms, idf)
            need_p = self.need_probability(ranked)
            need_ps.append(need_p)
            fact_label = self._need_label(need_p)
            picked: list[SupportingSentence] = []
            picked_terms: list[set[str]] = []
            for answers, support, sc, _ in ranked:
                if len(picked) >= p.sentences_per_fact:
                    break
                cand = cands[sc.index]
                if any(_jaccard(cand.terms, t) >= p.duplicate_jaccard for t in picked_terms):
                    continue
                source = sources[cand.source_index]
                start = find_quote(cand.quote, source.text)
                if start < 0:
                    continue
                label = fact_label
                picked.append(SupportingSentence(
                    chunk_id=source.chunk_id, quote=cand.quote, label=label, score=round(answers, 4),
                    verified=True, quote_start=start,
                ))
                picked_terms.append(cand.terms)
            conflict = self._conflict(fact, picked, [cands[sc.index] for _, _, sc, _ in ranked[:6]], sources,
                                      {sc.index: support for _, support, sc, _ in ranked}, cands, sibling_map)
            if conflict is not None:
                conflicts.append(conflict)
            label = fact_label if picked else SupportLabel.UNSUPPORTED
            if conflict is not None and label == SupportLabel.SUPPORTED:
                label = SupportLabel.PARTIAL  # the evidence disagrees with itself
            if label == SupportLabel.UNSUPPORTED and picked:
                # Not answered: its best sentences are the closest evidence a refusal or a
                # missing-evidence note shows, never stated as the answer.
                picked = [s.model_copy(update={"label": SupportLabel.UNSUPPORTED}) for s in picked[:1]]
            if not picked:
                closest = max(scores, key=lambda s: s.support, default=None)
                if closest is not None:
                    cand = cands[closest.index]
                    start = find_quote(cand.quote, sources[cand.source_index].text)
                    if start >= 0:
                        # Kept as the closest evidence a refusal shows, labelled for what it is.
                        picked = [SupportingSentence(
                            chunk_id=sources[cand.source_index].chunk_id, quote=cand.quote,
                            label=SupportLabel.UNSUPPORTED, score=round(closest.support, 4), verified=True,
                            quote_start=start,
                        )]
            audits.append(FactAudit(fact=fact, label=label, sentences=picked))
            if label != SupportLabel.SUPPORTED:
                missing.append(asked[n].strip() if n < len(asked) else fact)

        premise = self._premise(plan.premise, premise_vec, cands, sources, sent_vecs, doc_terms, sibling_map)
        if plan.premise and not premise.contradicted and not premise.confirmed:
            missing.append(f"{PREMISE_PREFIX}{plan.premise}")
        # A one-need question whose premise nothing confirms may still be answered (PARTIAL,
        # saying the premise is unconfirmed) when its need is very likely answered.
        waived = len(need_ps) == 1 and need_ps[0] >= p.premise_unconfirmed_min
        verdict, reason = _verdict(audits, premise, conflicts, can_retry, premise_waived=waived)
        return AuditResult(facts=audits, premise=premise, conflicts=conflicts, verdict=verdict, missing=missing,
                           reason=reason)

    def need_probability(self, ranked: list[tuple[float, float, SentenceScore, np.ndarray]]) -> float:
        """P(the need is answered by its best sentence): agent.local.sufficiency's model over
        the need's ranked candidates. Without fitted weights, the best candidate's own
        P(answers) (the selection model) stands in."""
        p = self.params
        pairs = [(answers, x) for answers, _, _, x in ranked]
        if not p.need_weights:
            return pairs[0][0] if pairs else 0.0
        return sufficiency.probability(sufficiency.features(pairs), p.need_weights, p.need_bias)

    def _need_label(self, prob: float) -> SupportLabel:
        if prob >= self.params.need_min:
            return SupportLabel.SUPPORTED
        if prob >= self.params.need_partial_min:
            return SupportLabel.PARTIAL
        return SupportLabel.UNSUPPORTED

    def _rank(self, fact: str, fvec: np.ndarray, cands: list[_Candidate], sent_vecs: np.ndarray,
              sources: list[Source], doc_terms: dict[object, set[str]], idf: dict[str, float],
              ) -> tuple[list[SentenceScore], list[tuple[float, float, SentenceScore, np.ndarray]]]:
        """Every candidate that may answer the fact, best first: (P(it answers), support, score,
        features). The probability is agent.local.selection's logistic model over answer fit,
        IDF-weighted coverage, similarity and the chunk's rank (AuditorParams.selection_*)."""
        p = self.params
        need = need_of(fact)
        scores = score_sentences(fact, fvec, [c.quote for c in cands], sent_vecs, w_coverage=p.w_coverage)
        anchors = anchor_terms(fact)
        terms = content_terms(fact)
        ranked = []
        for sc in scores:
            cand = cands[sc.index]
            context_terms = term_set(cand.context)
            # The sentence before counts at half weight: "The default is MEAN." answers
            # "which pooling strategy ..." after "We try three pooling strategies".
            cov = sc.coverage + 0.5 * (coverage(terms, cand.terms | context_terms) - sc.coverage)
            support = max(sc.support, p.w_coverage * cov + (1 - p.w_coverage) * sc.similarity)
            fit = offers(need, fact, cand.quote, context=cand.context)
            # A quote the verifier would drop (a fragment of a few words) cannot answer.
            if fit <= 0 or eligibility(cand.quote):
                continue
            if anchors and anchor_coverage(anchors, doc_terms[_doc_key(sources[cand.source_index])]) < p.anchor_min:
                continue
            x = selection.features(need, terms, anchors, idf, selection.Pair(
                support, sc.similarity, cand.terms, context_terms, fit, cand.source_index))
            answers = selection.probability(x, p.selection_weights, p.selection_bias)
            if answers < p.answer_partial_min:
                continue
            ranked.append((answers, support, sc, x))
        ranked.sort(key=lambda r: -r[0])
        return scores, ranked

    def rank_sentences(self, question: str, plan: Plan, sources: list[Source],
                       ) -> list[list[tuple[str, int, float, np.ndarray]]]:
        """Per fact of the plan, every candidate sentence as (quote, chunk id, P(answers),
        features), best first: what audit() chooses from (bench/calibrate_selection.py fits
        the model on these)."""
        facts = _facts(question, plan)
        cands = self._candidates(facts, plan.premise, sources)
        vecs = self._vectors(facts + [c.raw or c.quote for c in cands])
        doc_terms = _doc_terms(sources)
        idf = candidate_idf([c.terms for c in cands])
        out = []
        for fact, fvec in zip(facts, vecs[: len(facts)]):
            _, ranked = self._rank(fact, fvec, cands, vecs[len(facts):], sources, doc_terms, idf)
            out.append([(cands[sc.index].quote, sources[cands[sc.index].source_index].chunk_id, answers, x)
                        for answers, _, sc, x in ranked])
        return out

    def _conflict(self, fact: str, picked: list[SupportingSentence], near: list[_Candidate],
                  sources: list[Source], support: dict[int, float], cands: list[_Candidate],
                  sibling_map: dict[str, set[str]]) -> Conflict | None:
        """A supporting sentence and another relevant one from a different chunk that disagree."""
        supported = [s for s in picked if s.label == SupportLabel.SUPPORTED]
        if not supported:
            return None
        first = supported[0]
        for other in near:
            chunk_id = sources[other.source_index].chunk_id
            if chunk_id == first.chunk_id or other.quote == first.quote:
                continue
            if support.get(cands.index(other), 0.0) < self.params.support_min:
                continue
            cue = contradiction_cue(first.quote, other.quote, sibling_map=sibling_map)
            # Different numbers for different things are not a conflict: only the same statement
            # with another number is.
            if cue == "number" and _jaccard(term_set(first.quote), other.terms) < 0.5:
                cue = ""
            if cue in ("negation", "alternative", "antonym", "number"):
                return Conflict(fact=fact, chunk_ids=[first.chunk_id, chunk_id], quotes=[first.quote, other.quote],
                                cue=cue)
        return None

    def _premise(self, premise: str, pvec: np.ndarray | None, cands: list[_Candidate], sources: list[Source],
                 sent_vecs: np.ndarray, doc_terms: dict[object, set[str]],
                 sibling_map: dict[str, set[str]]) -> PremiseCheck:
        if not premise or pvec is None:
            return PremiseCheck(premise=premise)
        if not cands:
            return PremiseCheck(premise=premise, confirmed=False, reason="no retrieved sentence speaks to it")
        p = self.params
        # Numbers are what a false premise often gets wrong: the premise is about the
        # document when its names are there, whatever numbers it gives.
        anchors = [a for a in anchor_terms(premise) if not any(c.isdigit() for c in a)]
        best = None
        confirmed = False
        best_confirming = 0.0
        terms = content_terms(premise)
        df: dict[str, int] = defaultdict(int)
        for cand in cands:
            for t in cand.terms:
                df[t] += 1
        idf = {t: math.log(1 + len(cands) / (1 + df[t])) for t in terms}
        relevant = []
        for sc in score_sentences(premise, pvec, [c.quote for c in cands], sent_vecs, w_coverage=p.w_coverage):
            cand = cands[sc.index]
            source = sources[cand.source_index]
            about = not anchors or anchor_coverage(anchors, doc_terms[_doc_key(source)]) >= p.anchor_min
            # A short sentence leans on the one before it ("We try MEAN and MAX. The default
            # is MEAN."): its relevance counts the terms of that context too.
            in_context = coverage(terms, cand.terms | term_set(cand.context))
            relevance = max(sc.support, p.w_coverage * in_context + (1 - p.w_coverage) * sc.similarity)
            if relevance >= min(p.premise_contradict_min, p.premise_support_min) and about:
                relevant.append((sc, cand, source, relevance))
        # One pass of the fitted classifier over the relevant sentences (their vectors are
        # the ones already computed: no model run here).
        contradicts, rows = p.premise_model.contradiction(
            premise, pvec, [c.quote for _, c, _, _ in relevant],
            sent_vecs[[sc.index for sc, _, _, _ in relevant]] if relevant else sent_vecs[:0],
            contexts=[c.context for _, c, _, _ in relevant], sibling_map=sibling_map)
        for (sc, cand, source, relevance), p_false, row in zip(relevant, contradicts, rows):
            cue = fired_cue(row)
            # A surface cue, or the classifier (which weighs the cues with the rest).
            if (cue or p_false >= p.premise_false_min) and relevance >= p.premise_contradict_min:
                # Of several disagreeing sentences, the one that shares the premise's rarer
                # terms is about the same statement ("The default configuration is MEAN."
                # against a premise about the default), not a neighbouring one.
                rank = (relevance + _weighted_share(terms, cand, idf)) / 2
                if best is None or rank > best[4]:
                    best = (relevance, source, cand.quote, cue or f"classifier, P={p_false:.2f}", rank)
            elif not cue and p_false < p.premise_false_min and sc.support >= p.premise_support_min \
                    and _holds_numbers(premise, cand):
                # A sentence that leaves out the premise's numbers ("eight heads") does not
                # assert it, however close its wording.
                confirmed = True
                if sc.coverage >= 1.0:
                    best_confirming = max(best_confirming, relevance)
        # A premise that one passage states in full (every one of its terms), at least as
        # closely as another denies it, is disputed, not false: the fact's own audit reports
        # the disagreement. (An on-topic sentence that merely shares some terms, such as one
        # that lists the alternatives, confirms nothing.)
        if best is not None and best_confirming >= best[0]:
            best = None
        if best is None:
            return PremiseCheck(premise=premise, confirmed=confirmed,
                                reason="" if confirmed else "no retrieved sentence asserts it")
        _, source, text, cue, _ = best
        text = _quotable(text, source)
        return PremiseCheck(
            premise=premise, contradicted=True, chunk_id=source.chunk_id, quote=text, confirmed=False,
            reason=f"the evidence disagrees with the premise ({cue})",
        )


def _quotable(quote: str, source: Source) -> str:
    """The quote a correction can cite: a sentence too short to stand as evidence ("The
    default configuration is MEAN.") is quoted with the sentence before it, which says
    what it is the default of."""
    from agent.verify import eligibility

    if not eligibility(quote):
        return quote
    sentences = split_sentences(source.text)
    for i in range(1, len(sentences)):
        before, sentence = sentences[i - 1], sentences[i]
        if eligible(sentence) == quote and eligible(before):
            joined = f"{eligible(before)} {quote}"
            if find_quote(joined, source.text) >= 0 and not eligibility(joined):
                return joined
    return quote


def _holds_numbers(premise: str, cand: _Candidate) -> bool:
    """Every number of the premise (spelled-out counts too) is in the sentence or its context."""
    from agent.local.contradiction import spell_digits
    from agent.local.text import numbers

    wanted = numbers(spell_digits(premise))
    if wanted and not wanted <= numbers(spell_digits(f"{cand.quote} {cand.context}")):
        return False
    # Nor does one that has the premise's names but not its relation: "World Cup 2022 was
    # the last with 32 teams" does not say that anyone won the 2022 World Cup. At least half
    # of the premise's common words (not names, not numbers) must be there.
    names = set(anchor_terms(premise))
    relation = [t for t in content_terms(premise) if t not in names and not any(c.isdigit() for c in t)]
    return not relation or coverage(relation, cand.terms | term_set(cand.context)) >= 0.5


def _weighted_share(terms: list[str], cand: _Candidate, idf: dict[str, float]) -> float:
    """Share of the terms (weighted by rarity among the candidates) the sentence holds; a
    term only its context (the sentence before, the title) holds counts half."""
    total = sum(idf.get(t, 0.0) for t in terms)
    if not total:
        return 0.0
    around = term_set(cand.context)
    held = sum(idf.get(t, 0.0) * (1.0 if t in cand.terms else 0.5 if t in around else 0.0) for t in terms)
    return held / total


def _doc_key(source: Source) -> object:
    return source.document_id if source.document_id is not None else source.document_title


def _doc_terms(sources: list[Source]) -> dict[object, set[str]]:
    """Terms mentioned anywhere in the retrieved chunks of each document (with its title)."""
    doc_terms: dict[object, set[str]] = defaultdict(set)
    for source in sources:
        doc_terms[_doc_key(source)] |= term_set(f"{source.document_title} {source.section} {source.text}")
    return doc_terms


def _facts(question: str, plan: Plan) -> list[str]:
    """The plan's facts; a fact too short to search on ("how does it work?") borrows the
    question's anchor terms so it is scored against the right subject."""
    facts = plan.facts or [question]
    out = []
    anchors = " ".join(dict.fromkeys(w for w in re.findall(r"[\w\-\.@]+", question) if anchor_terms(w)))
    for fact in facts:
        if len(content_terms(fact)) < 3:
            fact = f"{fact} {anchors}".strip()
        out.append(fact)
    return out


def _verdict(audits: list[FactAudit], premise: PremiseCheck, conflicts: list[Conflict],
             can_retry: bool, *, premise_waived: bool = False) -> tuple[Verdict, str]:
    """The verdict from each need's own label: every need answered (and the premise
    confirmed) is SUFFICIENT; some answered is PARTIALLY_SUFFICIENT naming the others;
    none is a refusal. While a retry is left, anything missing asks for one first."""
    if premise.contradicted:
        return Verdict.FALSE_PREMISE, premise.reason
    usable = (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)
    supported = sum(a.label == SupportLabel.SUPPORTED for a in audits)
    answered = [a for a in audits if a.label in usable]
    unanswered = [a.fact for a in audits if a.label not in usable]
    premise_ok = not premise.premise or premise.confirmed
    if audits and supported == len(audits) and premise_ok:
        return Verdict.SUFFICIENT, "every needed fact has a supporting sentence"
    if conflicts and not can_retry:
        return Verdict.PARTIALLY_SUFFICIENT, "the retrieved passages contradict each other"
    if can_retry:
        return Verdict.INSUFFICIENT_RETRY, "some needed facts (or the premise) have no supporting sentence yet"
    if answered and premise_ok:
        reason = f"{len(answered)} of {len(audits)} needed facts are supported"
        if unanswered:
            reason += "; no sentence answers: " + "; ".join(unanswered)
        return Verdict.PARTIALLY_SUFFICIENT, reason
    if len(audits) == 1 and not premise_ok and not premise_waived:
        # A one-need question asks about what it presupposes ("Who won the 2021 Cup?"): with
        # the presupposition unconfirmed, any answer would assume it, unless the need itself
        # is very likely answered (AuditorParams.premise_unconfirmed_min).
        return (Verdict.INSUFFICIENT_REFUSE,
                f"the question's premise could not be confirmed by any retrieved sentence: {premise.premise}")
    if answered:
        return (Verdict.PARTIALLY_SUFFICIENT,
                f"the premise could not be confirmed by any retrieved sentence: {premise.premise}")
    if not premise_ok:
        return (Verdict.INSUFFICIENT_REFUSE,
                f"no retrieved passage supports the question, nor its premise that {premise.premise}")
    return Verdict.INSUFFICIENT_REFUSE, "no retrieved passage supports the facts the question needs"
