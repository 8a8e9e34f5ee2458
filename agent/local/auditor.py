"""Local auditor: support from key-term coverage plus sentence embeddings, contradiction cues.

For each fact of the plan:
1. split every retrieved chunk into sentences and score each against the fact
   (agent.local.scoring: coverage of the fact's content terms + cosine similarity);
2. keep the best sentences, labelled supported / partial / contradicted / unsupported;
3. a fact whose anchor terms (names, acronyms, identifiers, numbers) appear in none of the
   chunks of the document that supports it is unsupported, however similar the wording:
   "SPLADE on BEIR" is not answered by a BEIR table without SPLADE.
The premise ("Why did X use Y?" presumes X used Y) is checked against every sentence: a
relevant sentence with a negation, antonym or number clash makes it FALSE_PREMISE.

Every quote is a sentence of the chunk, checked verbatim (agent.verify.find_quote).
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from agent.local.embed import EmbedFn, get_embed
from agent.local.scoring import PARTIAL_MIN, SUPPORT_MIN, contradiction_cue, score_sentences
from agent.local.text import (
    anchor_coverage,
    anchor_terms,
    content_terms,
    is_prose,
    negation_count,
    offers_answer_type,
    split_sentences,
    term_set,
)
from agent.types import (
    AuditResult,
    FactAudit,
    Plan,
    PremiseCheck,
    Source,
    SupportingSentence,
    SupportLabel,
    Verdict,
)
from agent.verify import find_quote

# Calibrated by `bench/devbench.py --calibrate` (grid over the 48 devbench questions,
# agentic config; score = answerable answered + out-of-scope refused + premises debunked):
# share of a fact's anchor terms (names, acronyms, identifiers, numbers) that the supporting
# document must mention. 0.9 and 1.0 tie at 45/48; 0.75 lets two more near misses through.
ANCHOR_MIN = 0.9
# A premise is contradicted by a sentence this relevant to it that shows a contradiction
# cue. Flat from 0.40 to 0.50 (5 of 6 debunked, 1 answerable misread); 0.55 loses one.
PREMISE_CONTRADICT_MIN = 0.45
SENTENCES_PER_FACT = 2
_MAX_SENTENCE_CHARS = 600


class LocalAuditor:
    def __init__(self, embed: EmbedFn | None = None) -> None:
        self._embed = embed

    def _vectors(self, texts: list[str]) -> np.ndarray:
        embed = self._embed or get_embed()
        return embed(texts)

    def audit(self, question: str, plan: Plan, sources: list[Source], *, can_retry: bool) -> AuditResult:
        facts = _facts(question, plan)
        # Only sentences sharing a term with a fact or the premise can reach PARTIAL_MIN
        # (support is half term coverage), so only those are embedded: most of the cost.
        wanted = set()
        for text in [*facts, plan.premise]:
            wanted.update(content_terms(text))
        sentences: list[tuple[int, str]] = []  # (source index, sentence)
        for i, source in enumerate(sources):
            # A sentence of the Doc2query paper speaks of Doc2query even when it says "we".
            title_terms = term_set(source.document_title)
            for s in split_sentences(source.text):
                # A question in a paper (an example query) states no fact.
                if (20 <= len(s) <= _MAX_SENTENCE_CHARS and not s.rstrip().endswith("?") and is_prose(s)
                        and wanted & (term_set(s) | title_terms)):
                    sentences.append((i, s))
        texts = [s for _, s in sentences]
        vecs = self._vectors(facts + ([plan.premise] if plan.premise else []) + texts)
        fact_vecs = vecs[: len(facts)]
        premise_vec = vecs[len(facts)] if plan.premise else None
        sent_vecs = vecs[len(facts) + (1 if plan.premise else 0):]

        # Terms mentioned anywhere in the retrieved chunks of each document (with its title).
        doc_terms: dict[object, set[str]] = defaultdict(set)
        for source in sources:
            doc_terms[_doc_key(source)] |= term_set(f"{source.document_title} {source.section} {source.text}")

        audits: list[FactAudit] = []
        missing: list[str] = []
        for fact, fvec in zip(facts, fact_vecs):
            scores = score_sentences(fact, fvec, texts, sent_vecs)
            anchors = anchor_terms(fact)
            ranked = sorted(scores, key=lambda s: -s.support)
            picked: list[SupportingSentence] = []
            for sc in ranked:
                if len(picked) >= SENTENCES_PER_FACT or sc.support < PARTIAL_MIN:
                    break
                src_i, text = sentences[sc.index]
                source = sources[src_i]
                if anchors and anchor_coverage(anchors, doc_terms[_doc_key(source)]) < ANCHOR_MIN:
                    continue
                if not offers_answer_type(fact, text):
                    continue
                label = SupportLabel.SUPPORTED if sc.support >= SUPPORT_MIN else SupportLabel.PARTIAL
                start = find_quote(text, source.text)
                picked.append(SupportingSentence(
                    chunk_id=source.chunk_id, quote=text, label=label, score=round(sc.support, 4),
                    verified=start >= 0, quote_start=start,
                ))
            picked = [p for p in picked if p.verified]
            label = picked[0].label if picked else SupportLabel.UNSUPPORTED
            if not picked and ranked:
                # Kept as the closest evidence a refusal shows, labelled for what it is.
                src_i, text = sentences[ranked[0].index]
                start = find_quote(text, sources[src_i].text)
                if start >= 0:
                    picked = [SupportingSentence(
                        chunk_id=sources[src_i].chunk_id, quote=text, label=SupportLabel.UNSUPPORTED,
                        score=round(ranked[0].support, 4), verified=True, quote_start=start,
                    )]
            audits.append(FactAudit(fact=fact, label=label, sentences=picked))
            if label != SupportLabel.SUPPORTED:
                missing.append(fact)

        premise = self._premise(plan.premise, premise_vec, sentences, sources, sent_vecs)
        verdict, reason = _verdict(audits, premise, can_retry)
        return AuditResult(facts=audits, premise=premise, verdict=verdict, missing=missing, reason=reason)

    def _premise(self, premise: str, pvec: np.ndarray | None, sentences: list[tuple[int, str]],
                 sources: list[Source], sent_vecs: np.ndarray) -> PremiseCheck:
        if not premise or pvec is None or not sentences:
            return PremiseCheck(premise=premise)
        anchors = anchor_terms(premise)
        best = None
        for sc in score_sentences(premise, pvec, [s for _, s in sentences], sent_vecs):
            if sc.support < PREMISE_CONTRADICT_MIN:
                continue
            src_i, text = sentences[sc.index]
            source = sources[src_i]
            if anchors and anchor_coverage(anchors, term_set(f"{source.document_title} {source.text}")) < 0.5:
                continue
            cue = contradiction_cue(premise, text)
            # A false premise asserts; the paper denies. A negated premise against a plain
            # sentence is too weak a signal (the premise may itself be a true caution).
            if cue == "negation" and negation_count(premise) > 0:
                continue
            if cue and (best is None or sc.support > best[0]):
                best = (sc.support, source, text, cue)
        if best is None:
            return PremiseCheck(premise=premise)
        _, source, text, cue = best
        return PremiseCheck(
            premise=premise, contradicted=True, chunk_id=source.chunk_id, quote=text,
            reason=f"the evidence disagrees with the premise ({cue})",
        )


def _doc_key(source: Source) -> object:
    return source.document_id if source.document_id is not None else source.document_title


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


def _verdict(audits: list[FactAudit], premise: PremiseCheck, can_retry: bool) -> tuple[Verdict, str]:
    if premise.contradicted:
        return Verdict.FALSE_PREMISE, premise.reason
    supported = sum(a.label == SupportLabel.SUPPORTED for a in audits)
    partial = sum(a.label == SupportLabel.PARTIAL for a in audits)
    if audits and supported == len(audits):
        return Verdict.SUFFICIENT, "every needed fact has a supporting sentence"
    if can_retry:
        return Verdict.INSUFFICIENT_RETRY, "some needed facts have no supporting sentence yet"
    if supported or partial:
        return Verdict.PARTIALLY_SUFFICIENT, f"{supported + partial} of {len(audits)} needed facts are supported"
    return Verdict.INSUFFICIENT_REFUSE, "no retrieved passage supports the facts the question needs"
