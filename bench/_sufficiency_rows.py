"""The rows bench/calibrate_sufficiency.py fits and reports on: per need, the
sufficiency features of its candidate sentences (agent.local.sufficiency.ALL_FEATURES) and
whether the evidence answers it (y), with the split agent.local.calibration declares.

- scifact_rows: SciFact labelled train claims, the claim the need and its cited abstracts
  the evidence; SUPPORT/CONTRADICT answered, NEI not.
- devbench_rows: devbench questions planned and retrieved as the loop's first pass does;
  answerable needs whose candidates hold a gold span, the same questions with every gold
  chunk removed (GoldFreeRetriever), and out-of-scope questions; with the questions of
  bench/in_domain_questions.jsonl (load_in_domain) among them, their needs too: the
  unanswerable ones' each unanswered (the paper is in the collection, the answer is not in
  the paper), the answerable ones' as devbench's (kinds suffixed "_in_domain").
"""

from __future__ import annotations

import json
import sys
import time

import _devbench_common as common
import numpy as np

SCIFACT = common.SHARED / "scifact"
# The expected behaviour of bench/in_domain_questions.jsonl's unanswerable questions: a refusal.
IN_DOMAIN = "REFUSE_UNANSWERABLE"


class GoldFreeRetriever:
    """The retriever with every chunk that holds one of `spans` removed, back-filled from
    deeper in the ranking: the evidence stays on topic but no longer states the answer."""

    def __init__(self, inner, spans: list[str]) -> None:
        self.inner, self.spans = inner, spans

    def retrieve(self, query: str, *, k: int):
        from agent.benchmark import spans_covered

        hits = self.inner.retrieve(query, k=k + 15)
        return [h for h in hits if not spans_covered(self.spans, [h.text])][:k]


def _need_rows(auditor, question: str, plan, sources) -> list[tuple[np.ndarray | None, list[str]]]:
    """Per need: all its candidate sufficiency features (ALL_FEATURES) and its candidate
    quotes, best first."""
    from agent.local.sufficiency import ALL_FEATURES

    return [(x, [q for q, _, _, _ in ranked])
            for x, ranked in auditor.rank_sentences(question, plan, sources, need_features=ALL_FEATURES)]


def load_in_domain() -> list[dict]:
    """bench/in_domain_questions.jsonl: questions about a paper of the collection that the
    paper does not answer (IN_DOMAIN) or answers in a stated span (ANSWER), each with its
    declared split (docs/benchmarks.md says how they were written), marked set "in_domain"."""
    path = common.ROOT / "bench" / "in_domain_questions.jsonl"
    return [{**json.loads(line), "set": "in_domain"} for line in path.open(encoding="utf-8") if line.strip()]


def scifact_rows(auditor, limit: int) -> list[dict]:
    from agent.local.calibration import scifact_split
    from agent.local.text import split_sentences
    from agent.types import Complexity, Plan, Source

    claims = [json.loads(line) for line in (SCIFACT / "claims_train_labeled.jsonl").open()]
    if limit:
        claims = claims[:limit]
    needed = {d for c in claims for d in c["cited_doc_ids"]}
    corpus = {}
    for line in (SCIFACT / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        if row["doc_id"] in needed:
            corpus[row["doc_id"]] = row
    items = []
    for c in claims:
        docs = [corpus[d] for d in c["cited_doc_ids"] if d in corpus]
        if not docs:
            continue
        sources = [Source(chunk_id=d["doc_id"], document_id=d["doc_id"], document_title=d["title"],
                          text=" ".join(d["sentences"]), query=c["claim"]) for d in docs]
        items.append((c, sources))
    # One batch for every text the auditor will embed (the per-process cache serves it after).
    texts = [c["claim"] for c, _ in items] + [raw for _, srcs in items for s in srcs for raw in split_sentences(s.text)]
    t0 = time.perf_counter()
    auditor._vectors(list(dict.fromkeys(texts)))
    print(f"scifact: {len(items)} claims, {len(texts)} texts embedded in {time.perf_counter() - t0:.0f}s",
          file=sys.stderr, flush=True)
    rows = []
    for c, sources in items:
        plan = Plan(complexity=Complexity.SIMPLE, facts=[c["claim"]], sub_queries=[c["claim"]])
        (x, _), = _need_rows(auditor, c["claim"], plan, sources)
        rows.append({"source": "scifact", "split": scifact_split(c["id"]), "x": x, "y": int(c["label"] != "NEI"),
                     "id": c["id"], "kind": c["label"]})
    return rows


def devbench_rows(auditor, roles, cfg, retriever, questions: list[dict]) -> list[dict]:
    from calibrate_selection import holds_span

    from agent import benchmark as bm
    from agent.loop import AgentLoop

    rows = []
    for q in questions:
        if q["expected_behavior"] == IN_DOMAIN:
            plan = roles.planner.plan(q["question"])
            sources = AgentLoop(cfg, roles, retriever, concurrent=False)._retrieve(list(plan.sub_queries), 0)
            for f, (x, _) in enumerate(_need_rows(auditor, q["question"], plan, sources)):
                rows.append({"source": "devbench", "split": q["split"], "x": x, "y": 0, "id": f"{q['question_id']}/{f}",
                             "kind": "unanswerable_in_domain"})
            continue
        if q["expected_behavior"] not in (bm.ANSWER, bm.REFUSE):
            continue
        plan = roles.planner.plan(q["question"])
        sources = AgentLoop(cfg, roles, retriever, concurrent=False)._retrieve(list(plan.sub_queries), 0)
        spans = q["required_evidence_spans"]
        tag = "_in_domain" if q.get("set") == "in_domain" else ""
        for f, (x, quotes) in enumerate(_need_rows(auditor, q["question"], plan, sources)):
            if q["expected_behavior"] == bm.REFUSE:
                rows.append({"source": "devbench", "split": q["split"], "x": x, "y": 0, "id": f"{q['question_id']}/{f}",
                             "kind": "out_of_scope"})
            elif any(holds_span(quote, spans) for quote in quotes):
                rows.append({"source": "devbench", "split": q["split"], "x": x, "y": 1, "id": f"{q['question_id']}/{f}",
                             "kind": f"answerable{tag}"})
        if q["expected_behavior"] == bm.ANSWER:
            free = GoldFreeRetriever(retriever, spans)
            ablated = AgentLoop(cfg, roles, free, concurrent=False)._retrieve(list(plan.sub_queries), 0)
            for f, (x, _) in enumerate(_need_rows(auditor, q["question"], plan, ablated)):
                rows.append({"source": "devbench", "split": q["split"], "x": x, "y": 0,
                             "id": f"{q['question_id']}/{f}/no-gold", "kind": f"gold_removed{tag}"})
    return rows


def run_rows(questions: list[dict], retriever_for, params=None) -> list[dict]:
    """Whole runs: each question through the agentic loop (local backend, the default
    parameters) on `retriever_for(question)`, then per need of its final audit the
    sufficiency features (ALL_FEATURES, with premise_unconfirmed from that audit's premise
    check), whether a candidate holds a gold span (answerable questions) and the outcome.
    One row per question: {"id", "set", "split", "expected", "outcome", "verdict", "reason",
    "sentences" (of the answer), "premise": {"text", "checked" (a sentence confirmed it before
    any answer did), "answer_confirms" (the one need's best sentence states it, whatever its
    probability), "contradicted", "unknown"}, "conflicts", "needs": [{"x", "gold", "fact",
    "best" (its best sentence), "p" (P(answered) under the run's parameters)}]}: what a
    recount at other thresholds needs (bench/calibrate_sufficiency.py) and what
    --list prints. `params` (AuditorParams) replaces the defaults (a floor of 0 on P(answers)
    keeps every need's best candidate, so a recount can apply any floor)."""
    from agent.benchmark.metrics import spans_covered
    from agent.configs import build_roles, get_config
    from agent.local.candidates import candidates, doc_key, plan_facts, terms_by_document
    from agent.local.planner import asked_noun
    from agent.local.premise_check import answer_confirms
    from agent.local.selection import candidate_idf
    from agent.local.sufficiency import ALL_FEATURES
    from agent.loop import AgentLoop
    from agent.retrieval import portal_embed

    cfg = get_config("agentic")
    rows = []
    for q in questions:
        roles = build_roles(cfg, "local", embed=portal_embed())
        if params is not None:
            roles.auditor.params = params
        result = AgentLoop(cfg, roles, retriever_for(q), concurrent=False).run(q["question"])
        auditor, plan, sources = roles.auditor, result.plan, result.sources
        facts = plan_facts(q["question"], plan)
        cands = candidates(facts, plan.premise, sources)
        vecs = auditor._vectors(facts + [c.raw or c.quote for c in cands])
        doc_terms, idf = terms_by_document(sources), candidate_idf([c.terms for c in cands])
        premise = result.audit.premise if result.audit else None
        by_answer = premise is not None and premise.reason == "the answering sentence states it"
        checked = premise is None or not plan.premise or (premise.confirmed and not by_answer)
        unconfirmed = (len(facts) == 1 and bool(plan.premise) and premise is not None and not premise.contradicted
                       and not checked)
        spans = q.get("required_evidence_spans") or []
        needs, confirms = [], False
        for fact, fvec in zip(facts, vecs[: len(facts)]):
            _, ranked = auditor._rank(fact, fvec, cands, vecs[len(facts):], sources, doc_terms, idf)
            x = auditor.need_features(ranked, fact, cands, ALL_FEATURES, unconfirmed=unconfirmed)
            gold = bool(spans) and any(spans_covered(spans, [cands[r[2].index].quote]) for r in ranked)
            best = cands[ranked[0][2].index] if ranked else None
            if best is not None and len(facts) == 1 and plan.premise:
                confirms = answer_confirms(plan.premise, asked_noun(fact), best,
                                           doc_terms[doc_key(sources[best.source_index])])
            needs.append({"x": x, "gold": gold, "fact": fact, "best": best.quote if best else "",
                          "p": auditor.need_probability(ranked, fact, cands, unconfirmed=unconfirmed)})
        audit = result.audit
        rows.append({"id": q["question_id"], "set": q.get("set", "devbench"), "split": q["split"],
                     "expected": q["expected_behavior"], "outcome": result.answer.outcome.value,
                     "question": q["question"], "verdict": audit.verdict.value if audit else "",
                     "reason": audit.reason if audit else "", "sentences": len(result.answer.sentences),
                     "conflicts": bool(audit and audit.conflicts),
                     "premise": {"text": plan.premise, "checked": checked, "answer_confirms": confirms,
                                 "contradicted": bool(premise and premise.contradicted),
                                 "unknown": list(premise.unknown) if premise else []},
                     "needs": needs})
        print(q["question_id"], result.answer.outcome.value, file=sys.stderr, flush=True)
    return rows
