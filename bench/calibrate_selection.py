"""Fit the local auditor's answer-sentence model and its SUFFICIENT threshold on the devbench
calibration half (never the held-out half, never the blind set).

    .venv/bin/python bench/calibrate_selection.py [--var var/bench]

Uses bench/devbench.py's database (the 25 papers ingested once into var/bench/; run
bench/devbench.py first, or this script ingests them). Three steps:

1. Candidates: for each calibration question, the agentic loop's plan and first retrieval
   (top-k per sub-query, merged as agent.loop does, plus a wider pool of `--pool` chunks for
   the question itself, so the model also sees answers that ranked lower); every candidate
   sentence of every fact gets agent.local.selection's features (LocalAuditor.rank_sentences
   with the gates of the audit: answer type, anchors).
   A sentence is labelled positive when it holds one of the question's verbatim evidence
   spans, or a run of at least 40 of its letters and digits (agent.benchmark.normalise).
2. The logistic model (agent.local.selection.fit_logistic, L2) on those labels, positives
   weighted up to balance the classes. Leave-one-question-out top-1 accuracy on the
   calibration questions is printed against the former hand-weighted ranking.
3. The thresholds answer_min (a fact is SUPPORTED) and answer_partial_min (a sentence is
   worth stating at all): each grid point runs the whole agentic loop on every calibration
   question (answerable, out-of-scope and false-premise ones) with the fitted model. Among
   the points that answer (ANSWER or PARTIAL) no out-of-scope question, the one answering
   the most answerable questions wins, then the most fully, then the most false premises
   corrected; ties go to the highest thresholds (the most conservative choice).

Prints JSON: the weights, the thresholds, and the calibration figures (in-sample). The
AuditorParams defaults are these values; docs/benchmarks.md reports the held-out half.
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import _devbench_common as common
import numpy as np

_MIN_RUN = 40  # letters and digits a sentence must share with a gold span to hold it


def holds_span(sentence: str, spans: list[str]) -> bool:
    from agent.benchmark import normalise

    s = normalise(sentence)
    for span in spans:
        g = normalise(span)
        if not g or not s:
            continue
        if g in s or s in g:
            return True
        m = difflib.SequenceMatcher(None, s, g, autojunk=False).find_longest_match(0, len(s), 0, len(g))
        if m.size >= min(_MIN_RUN, len(g)):
            return True
    return False


def _old_rank(x: np.ndarray) -> float:
    """The ranking before the model: 0.7 * (support + idf coverage) / 2 + 0.3 * answer fit."""
    return 0.7 * (x[0] + x[2]) / 2 + 0.3 * x[4]


def _rows(questions, cfg, roles, retriever, auditor, pool: int):
    """Every candidate sentence of every fact of the answerable calibration questions, with
    its features and label; and the gold spans' recall in the loop's retrieval and the pool."""
    from agent import benchmark as bm
    from agent.loop import AgentLoop

    qids, fidx, xs, ys = [], [], [], []
    recall: Counter = Counter()
    for q in questions:
        if q["expected_behavior"] != "ANSWER":
            continue
        plan = roles.planner.plan(q["question"])
        sources = AgentLoop(cfg, roles, retriever, concurrent=False)._retrieve(list(plan.sub_queries), 0)
        known = {s.chunk_id for s in sources}
        spans = q["required_evidence_spans"]
        recall["spans"] += len(spans)
        recall["loop_top_k"] += bm.spans_covered(spans, [s.text for s in sources])
        sources += [s for s in retriever.retrieve(q["question"], k=pool) if s.chunk_id not in known]
        recall[f"with_pool_{pool}"] += bm.spans_covered(spans, [s.text for s in sources])
        for f, ranked in enumerate(auditor.rank_sentences(q["question"], plan, sources)):
            for quote, _, _, x in ranked:
                qids.append(q["question_id"])
                fidx.append(f)
                xs.append(x)
                ys.append(holds_span(quote, spans))
    return qids, fidx, xs, ys, dict(recall)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench"))
    parser.add_argument("--pool", type=int, default=15, help="chunks retrieved for the question itself")
    parser.add_argument("--l2", type=float, default=0.1)
    parser.add_argument("--refresh", action="store_true", help="recompute the cached candidate features")
    parser.add_argument("--fit-only", action="store_true", help="fit and report the model, skip the thresholds")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    _, collection = common.collection_with_papers(common.paper_stems())

    from devbench import _MemoRetriever as MemoRetriever

    from agent import benchmark as bm
    from agent.configs import build_roles, get_config
    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.local.selection import FEATURES, fit_listwise, fit_logistic
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever
    from agent.types import Outcome

    questions = [q for q in common.with_splits(common.load_questions()) if q["split"] == "calibration"]
    cfg = get_config("agentic")
    retriever = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    roles = build_roles(cfg, "local")
    # Every candidate the gates let through, whatever the current model thinks of it.
    auditor = LocalAuditor(params=replace(AuditorParams(), answer_partial_min=0.0))

    # 1. Candidates and labels (cached: retrieval and features do not change between fits).
    cache = Path(args.var) / "selection_rows.npz"
    if cache.exists() and not args.refresh:
        data = np.load(cache, allow_pickle=True)
        qids, fidx, x, y = list(data["qids"]), data["fidx"], data["x"], data["y"]
        recall = dict(data["recall"].item())
    else:
        qids, fidx, xs, ys, recall = _rows(questions, cfg, roles, retriever, auditor, args.pool)
        x, y, fidx = np.array(xs), np.array(ys, dtype=float), np.array(fidx)
        np.savez(cache, qids=np.array(qids), fidx=fidx, x=x, y=y, recall=np.array(recall, dtype=object))
    groups = np.array([f"{q}/{f}" for q, f in zip(qids, fidx)])

    # 2. The model: a conditional logit chooses among a fact's candidates (its weights rank),
    # then one logistic scale and bias on that score give P(answers) for the thresholds.
    def fit(train: np.ndarray) -> tuple[tuple[float, ...], float]:
        w = fit_listwise(x[train], y[train], groups[train], l2=args.l2)
        (a,), b = fit_logistic((x[train] @ w)[:, None], y[train], l2=0.0)
        return tuple(round(float(v) * a, 4) for v in w), b

    # Leave one question out: is the top candidate of each fact that has a positive one positive?
    hits_model = hits_old = facts_with_answer = 0
    for qid in sorted(set(qids)):
        test = np.array([q == qid for q in qids])
        w, _ = fit(~test)
        for g in np.unique(groups[test]):
            idx = np.flatnonzero(groups == g)
            if not y[idx].any():
                continue
            facts_with_answer += 1
            hits_model += y[idx[np.argmax(x[idx] @ np.array(w))]] > 0
            hits_old += y[idx[np.argmax([_old_rank(v) for v in x[idx]])]] > 0
    weights, bias = fit(np.ones(len(y), dtype=bool))
    print(json.dumps({"candidates": len(y), "positives": int(y.sum()), "answerable_questions": len(set(qids)),
                      "facts_with_a_positive": facts_with_answer, "gold_span_recall": recall,
                      "leave_one_question_out_top1": {"model": int(hits_model), "former_ranking": int(hits_old)},
                      "weights": dict(zip(FEATURES, weights)), "bias": bias}, indent=1), file=sys.stderr, flush=True)
    if args.fit_only:
        return

    # 3. Thresholds, with the whole loop over every calibration question.
    specs = bm.parse_benchmark(json.dumps(questions))
    fitted = replace(AuditorParams(), selection_weights=weights, selection_bias=bias)
    results = []
    # P(answers) is small in absolute terms: about 1 candidate in 40 holds a gold span.
    for answer_min, partial_min in itertools.product([0.04, 0.08, 0.12, 0.2], [0.04, 0.08, 0.12]):
        if partial_min > answer_min or answer_min - partial_min > 0.08:
            continue
        params = replace(fitted, answer_min=answer_min, answer_partial_min=partial_min)
        tally: Counter = Counter()
        for spec in specs:
            r = build_roles(cfg, "local")
            r.auditor = LocalAuditor(params=params)
            out = AgentLoop(cfg, r, retriever, concurrent=False).run(spec.question).answer.outcome
            tally[(spec.expected_behavior, out.value)] += 1
        answered = tally[(bm.ANSWER, Outcome.ANSWER.value)] + tally[(bm.ANSWER, Outcome.PARTIAL.value)]
        full = tally[(bm.ANSWER, Outcome.ANSWER.value)]
        oos_answered = tally[(bm.REFUSE, Outcome.ANSWER.value)] + tally[(bm.REFUSE, Outcome.PARTIAL.value)]
        debunked = tally[(bm.DEBUNK, Outcome.FALSE_PREMISE.value)]
        results.append({"answer_min": answer_min, "answer_partial_min": partial_min, "answered": answered,
                        "full": full, "oos_answered": oos_answered, "debunked": debunked, "tally": dict(tally)})
        print(answer_min, partial_min, answered, full, oos_answered, debunked, file=sys.stderr, flush=True)
    # No out-of-scope question answered (ANSWER or PARTIAL); then the most answerable questions
    # answered, the most of them fully, the most false premises corrected, and on ties the
    # highest thresholds (the most conservative choice the data cannot tell apart).
    safe = [r for r in results if r["oos_answered"] == 0] or results
    best = max(safe, key=lambda r: (r["answered"], r["full"], r["debunked"], r["answer_partial_min"],
                                    r["answer_min"]))
    tally = best["tally"]
    print(json.dumps({
        "selection_weights": list(weights), "selection_bias": bias, "answer_min": best["answer_min"],
        "answer_partial_min": best["answer_partial_min"], "calibration_questions": len(specs),
        "grid": [{k: v for k, v in r.items() if k != "tally"} for r in results],
        "calibration_tally": {f"{e}->{o}": n for (e, o), n in sorted(tally.items())},
    }, indent=1))


if __name__ == "__main__":
    main()
