"""The local auditor's premise check (agent.local.auditor): does a retrieved sentence
contradict what the question presupposes (agent.local.planner.presupposition), assert it,
or neither?

A relevant sentence that disagrees (a surface cue of agent.local.contradiction, or
P(CONTRADICT) of the fitted classifier agent.local.entailment, AuditorParams.premise_*)
makes the premise false and is quoted as the correction; a sentence that holds the
premise's numbers and relation confirms it; otherwise the answer may not assume it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

from agent.local.candidates import Candidate, doc_key
from agent.local.eligibility import eligible
from agent.local.entailment import fired_cue
from agent.local.scoring import score_sentences
from agent.local.text import anchor_coverage, anchor_terms, content_terms, coverage, split_sentences, term_set
from agent.types import PremiseCheck, Source
from agent.verify import find_quote

if TYPE_CHECKING:
    from agent.local.auditor import AuditorParams


def check_premise(premise: str, pvec: np.ndarray | None, cands: list[Candidate], sources: list[Source],
                  sent_vecs: np.ndarray, doc_terms: dict[object, set[str]], sibling_map: dict[str, set[str]],
                  *, params: AuditorParams) -> PremiseCheck:
    """Whether the retrieved sentences contradict, assert or say nothing of the premise."""
    if not premise or pvec is None:
        return PremiseCheck(premise=premise)
    if not cands:
        return PremiseCheck(premise=premise, confirmed=False, reason="no retrieved sentence speaks to it")
    p = params
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
        about = not anchors or anchor_coverage(anchors, doc_terms[doc_key(source)]) >= p.anchor_min
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


def _holds_numbers(premise: str, cand: Candidate) -> bool:
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


def _weighted_share(terms: list[str], cand: Candidate, idf: dict[str, float]) -> float:
    """Share of the terms (weighted by rarity among the candidates) the sentence holds; a
    term only its context (the sentence before, the title) holds counts half."""
    total = sum(idf.get(t, 0.0) for t in terms)
    if not total:
        return 0.0
    around = term_set(cand.context)
    held = sum(idf.get(t, 0.0) * (1.0 if t in cand.terms else 0.5 if t in around else 0.0) for t in terms)
    return held / total
