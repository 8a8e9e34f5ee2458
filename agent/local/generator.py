"""Local generator: extractive answers built from the audited supporting sentences.

- No audit (the plain-RAG baselines): the sentences of the top sources most similar to the
  question, always answered, each citing its chunk.
- SUFFICIENT / PARTIALLY_SUFFICIENT: the supporting sentences of each fact in fact order,
  each citing its chunk; a partial answer notes which facts had no evidence.
- FALSE_PREMISE: says the premise does not hold and quotes the contradicting sentence.
- INSUFFICIENT_REFUSE: what was searched, the closest evidence, why it was not enough.
Every sentence quotes its chunk verbatim, so the verifier can check it.
"""

from __future__ import annotations

import numpy as np

from agent.local.embed import EmbedFn, get_embed
from agent.local.text import split_sentences
from agent.types import AuditResult, Draft, DraftSentence, Outcome, Source, SupportLabel, Verdict

BASELINE_SENTENCES = 3
_USABLE = (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)


class ExtractiveGenerator:
    def __init__(self, embed: EmbedFn | None = None) -> None:
        self._embed = embed

    def generate(self, question: str, sources: list[Source], audit: AuditResult | None) -> Draft:
        marker = {s.chunk_id: n for n, s in enumerate(sources, start=1)}
        if audit is None:
            return self._baseline(question, sources)
        if audit.verdict == Verdict.FALSE_PREMISE and audit.premise.chunk_id in marker:
            p = audit.premise
            return Draft(outcome=Outcome.FALSE_PREMISE, sentences=[
                DraftSentence(
                    text=f'The premise does not hold ("{p.premise.rstrip(".")}"): the source says "{p.quote}"',
                    citations=[marker[p.chunk_id]], quote=p.quote,
                )
            ])
        if audit.verdict in (Verdict.INSUFFICIENT_REFUSE, Verdict.INSUFFICIENT_RETRY, Verdict.FALSE_PREMISE):
            from agent.llm_roles import refusal_draft

            return refusal_draft(question, sources, audit)
        sentences: list[DraftSentence] = []
        used: set[str] = set()
        for fact in audit.facts:
            for s in fact.sentences:
                if s.quote in used or s.chunk_id not in marker or s.label not in _USABLE:
                    continue
                used.add(s.quote)
                sentences.append(DraftSentence(text=s.quote, citations=[marker[s.chunk_id]], quote=s.quote))
        outcome = Outcome.ANSWER if audit.verdict == Verdict.SUFFICIENT else Outcome.PARTIAL
        missing = ""
        if outcome == Outcome.PARTIAL and audit.missing:
            missing = "No supporting evidence was found for: " + "; ".join(audit.missing)
        return Draft(outcome=outcome, sentences=sentences, missing_note=missing)

    def _baseline(self, question: str, sources: list[Source]) -> Draft:
        cands = [(n, s) for n, src in enumerate(sources, start=1) for s in split_sentences(src.text)
                 if 20 <= len(s) <= 600]
        if not cands:
            return Draft(outcome=Outcome.ANSWER, sentences=[])
        embed = self._embed or get_embed()
        vecs = embed([question] + [s for _, s in cands])
        sims = vecs[1:] @ vecs[0]
        order = np.argsort(-sims)[:BASELINE_SENTENCES]
        return Draft(outcome=Outcome.ANSWER, sentences=[
            DraftSentence(text=cands[i][1], citations=[cands[i][0]], quote=cands[i][1]) for i in sorted(order)
        ])
