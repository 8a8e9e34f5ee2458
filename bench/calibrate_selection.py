"""Fit the local auditor's answer-sentence model and its thresholds on the calibration halves
of every labelled question set with verbatim evidence spans (never a held-out half, never the
blind set).

    nice .venv/bin/python bench/calibrate_selection.py --var var/bench-blind --collection blind --fit-only

The sets (`--sets`, all three by default), each split by its own `split` field:
devbench (agent.local.calibration's split of /work/shared/data/devbench), the QASPER-style
questions (bench/qasper_style_questions.jsonl, each asked of a collection holding only its
paper, as bench/refusals.py --scope paper does) and the in-domain questions
(bench/in_domain_questions.jsonl, asked of the whole collection); on request (`--sets
devbench,qasper,in_domain,blind2,blind3`) also the calibration halves of bench/blind2 and
bench/blind3 (their answerable questions' evidence spans, asked of the whole collection).
bench/blind/questions.jsonl is never read. Uses bench/devbench.py's database and index (`--var`, `--collection`);
only questions whose papers are all ready count (a QASPER-style paper's own collection is
made and ingested once, bench/refusals.py). Three steps:

1. Candidates: each answerable calibration question runs through the agentic loop with the
   local roles (retrieval memoised, one thread): the sources its audit chose from (every
   pass, the sentence search's pool chunks included: RunConfig.sentence_pool) give the
   candidates, and every candidate sentence of every fact gets all of
   agent.local.selection's FEATURES (LocalAuditor.rank_sentences with the gates of the
   audit: answer type, anchors, pointers; no floor on P(answers)).
   A sentence is labelled positive when it holds one of the question's verbatim evidence
   spans, or a run of at least 40 of its letters and digits (agent.benchmark.normalise).
2. The model: a conditional logit over one fact's candidates (agent.local.selection.
   fit_listwise), rescaled to P(answers) by one logistic fit on its score. Which features
   it uses: the eight of BASE, then each other one added greedily while it raises the
   leave-one-question-out top-1 (a fact's first candidate holds a gold span) by at least one
   fact, then each used one dropped while neither top-1 nor the mean reciprocal rank of the
   first gold candidate falls (the smaller model the data cannot tell apart); unused
   features get weight 0. With `--l2 auto`, its L2 penalty too: the value of L2_GRID with
   the most facts first, then the highest mean reciprocal rank, leave-one-question-out.
3. (Without --fit-only) the thresholds answer_min and answer_partial_min: each grid point
   runs the whole agentic loop on every calibration question of the sets (answerable,
   unanswerable, out-of-scope and false-premise ones) with the fitted model. Among the points
   that answer (ANSWER or PARTIAL) no out-of-scope question, the one with the most
   answerable questions answered less three per unanswerable one answered (the cost
   bench/calibrate_sufficiency.py --runs states) wins, then the most fully, then the most
   false premises corrected; ties go to the highest thresholds (the most conservative choice).

Prints JSON: the weights (in FEATURES order), the thresholds, and the calibration figures
(in-sample). The AuditorParams defaults are these values; bench/sentence_pool.py reports the
held-out halves (docs/benchmarks.md).
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


BASE = ("support", "similarity", "idf_coverage", "idf_context", "answer_fit", "focus", "anchors", "chunk_rank")
SETS = ("devbench", "qasper", "in_domain")
# The blind sets' calibration halves (bench/blind2, bench/blind3: answerable questions with
# verbatim evidence), optional (`--sets`); bench/blind has no split and is never read.
MORE_SETS = ("blind2", "blind3")


def labelled_questions(ready: set[str], sets=SETS) -> list[dict]:
    """Every question of `sets` whose papers are all in `ready`, each marked with its set
    ("set") and split ("split"): devbench's from agent.local.calibration, the others' from
    their own rows."""
    from refusals import load_blind, load_set

    out = [{**q, "set": "devbench"} for q in common.with_splits(common.load_questions())
           if "devbench" in sets and set(q["expected_doc_ids"]) <= ready]
    out += [q for name in sets if name in MORE_SETS for q in load_blind(name) if set(q["papers"]) <= ready]
    return out + [q for name in sets if name in ("qasper", "in_domain") for q in load_set(name) if q["paper"] in ready]


class Retrievers:
    """Each question's retriever, memoised (bench/devbench.py): a QASPER-style question asks
    within its paper, so it goes to a collection holding only that paper (bench/refusals.py
    --scope paper); every other question to the whole collection."""

    def __init__(self, collection, mode: str) -> None:
        from devbench import _MemoRetriever as MemoRetriever

        from agent.retrieval import CollectionRetriever

        self._make = lambda c: MemoRetriever(CollectionRetriever(c, mode=mode))
        self.whole = self._make(collection)
        self.own: dict[str, object] = {}

    def __call__(self, question: dict):
        from refusals import paper_collection

        if question.get("set") != "qasper":
            return self.whole
        if question["paper"] not in self.own:
            self.own[question["paper"]] = self._make(paper_collection(question["paper"]))
        return self.own[question["paper"]]


def _rows(questions, cfg, params, retriever_for, embed):
    """Every candidate sentence of every fact of the answerable questions, with all its
    features and its label (and "fact || sentence", the sentence before it and its chunk id); and per set
    how many gold spans the loop's sources hold."""
    from agent import benchmark as bm
    from agent.configs import build_roles
    from agent.local.auditor import LocalAuditor
    from agent.local.candidates import candidates, plan_facts
    from agent.loop import AgentLoop

    qids, fidx, xs, ys, quotes, before, chunks = [], [], [], [], [], [], []
    recall: Counter = Counter()
    # Every candidate the gates let through, whatever the current model thinks of it.
    every = LocalAuditor(embed, params=replace(params, answer_partial_min=0.0))
    for q in questions:
        if q["expected_behavior"] != "ANSWER" or not q.get("required_evidence_spans"):
            continue
        roles = build_roles(cfg, "local", embed=embed)
        roles.auditor = LocalAuditor(embed, params=params)
        result = AgentLoop(cfg, roles, retriever_for(q), concurrent=False).run(q["question"])
        spans = q["required_evidence_spans"]
        recall[f"{q['set']}:spans"] += len(spans)
        recall[f"{q['set']}:in_sources"] += bm.spans_covered(spans, [s.text for s in result.sources])
        facts = plan_facts(q["question"], result.plan)
        previous = {c.quote: c.previous for c in candidates(facts, result.plan.premise, result.sources)}
        for f, ranked in enumerate(every.rank_sentences(q["question"], result.plan, result.sources)):
            for quote, chunk_id, _, x in ranked:
                quotes.append(f"{facts[f]} || {quote}")
                chunks.append(chunk_id)
                before.append(previous.get(quote, ""))
                qids.append(f"{q['set']}:{q['question_id']}")
                fidx.append(f)
                xs.append(x)
                ys.append(holds_span(quote, spans))
    return qids, fidx, xs, ys, dict(recall), quotes, before, chunks


def scifact_rows(embed, limit: int = 0):
    """SciFact calibration claims with rationale sentences (agent.local.calibration.
    scifact_split): each claim is one need, its cited abstract one chunk, a rationale
    sentence a positive. Answer type, focus and chunk rank are the same for every candidate
    of a claim, so these groups only teach the weights of the features that vary (support,
    similarity, IDF coverage, anchors, ...)."""
    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.local.calibration import CALIBRATION, scifact_split
    from agent.types import Plan, Source

    data = common.SHARED / "scifact"
    claims = [c for c in map(json.loads, (data / "claims_train_labeled.jsonl").open())
              if c["evidence"] and scifact_split(c["id"]) == CALIBRATION]
    claims = claims[:limit] if limit else claims
    wanted = {int(d) for c in claims for d in c["evidence"]}
    corpus = {}
    for line in (data / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        if row["doc_id"] in wanted:
            corpus[row["doc_id"]] = row
    every = LocalAuditor(embed, params=replace(AuditorParams(), answer_partial_min=0.0))
    qids, xs, ys = [], [], []
    for c in claims:
        doc_id, evidence = next(iter(c["evidence"].items()))
        doc = corpus.get(int(doc_id))
        if not doc:
            continue
        gold = [doc["sentences"][i] for e in evidence for i in e["sentences"] if i < len(doc["sentences"])]
        source = Source(chunk_id=int(doc_id), document_id=int(doc_id), document_title=doc["title"],
                        text="\n\n".join(doc["sentences"]))
        (ranked,) = every.rank_sentences(c["claim"], Plan(facts=[c["claim"]], sub_queries=[c["claim"]]), [source])
        for quote, _, _, x in ranked:
            qids.append(f"S{c['id']}")
            xs.append(x)
            ys.append(holds_span(quote, gold))
    return np.array(qids), np.zeros(len(qids), dtype=int), np.array(xs), np.array(ys, dtype=float)


def fit(x: np.ndarray, y: np.ndarray, groups: np.ndarray, columns: list[int], l2: float):
    """Weights over all FEATURES (0 outside `columns`) and the bias of P(answers): the
    conditional logit ranks a fact's candidates, one logistic fit on its score calibrates."""
    from agent.local.selection import fit_listwise, fit_logistic

    w = np.zeros(x.shape[1])
    w[columns] = fit_listwise(x[:, columns], y, groups, l2=l2)
    # P(answers) is calibrated on the question sets' candidates only: SciFact abstracts hold
    # far more positives per candidate than a question's retrieved chunks do.
    own = np.array([not str(g).startswith("S") for g in groups])
    (a,), b = fit_logistic((x[own] @ w)[:, None], y[own], l2=0.0)
    return tuple(round(float(v) * a, 4) for v in w), b


def _leave_one_out(x, y, groups, qids, score) -> tuple[int, float, int]:
    """(facts whose first candidate holds a gold span, the sum over facts of 1 / the rank of
    their first gold candidate, facts that have one), each question's facts ranked by the
    weights `score(train)` fitted without that question."""
    hits = total = 0
    reciprocal = 0.0
    for qid in sorted(q for q in set(qids) if not str(q).startswith("S")):  # SciFact rows always train
        test = qids == qid
        w = np.asarray(score(~test))
        for g in np.unique(groups[test]):
            idx = np.flatnonzero(groups == g)
            if y[idx].any():
                total += 1
                order = idx[np.argsort(-(x[idx] @ w), kind="stable")]
                hits += y[order[0]] > 0
                reciprocal += 1.0 / (1 + int(np.flatnonzero(y[order] > 0)[0]))
    return int(hits), reciprocal, total


# The L2 penalties tried for the conditional logit (bench/calibrate_selection.py --l2 auto).
L2_GRID = (0.003, 0.01, 0.03, 0.1, 0.3)


def choose_l2(x, y, groups, qids, columns: list[int]) -> tuple[float, dict]:
    """The L2 penalty of the grid with the best leave-one-question-out ranking: the most facts
    whose first candidate holds a gold span, then the highest mean reciprocal rank of the
    first gold candidate (which counts every fact, not only those decided at rank 1), then
    the larger penalty (the smoother model the data cannot tell apart)."""
    scores = {}
    for l2 in L2_GRID:
        hits, reciprocal, total = _leave_one_out(
            x, y, groups, qids, lambda tr, l2=l2: fit(x[tr], y[tr], groups[tr], columns, l2)[0])
        scores[l2] = (hits, round(reciprocal / max(total, 1), 4))
    best = max(L2_GRID, key=lambda v: (*scores[v], v))
    return best, {str(v): {"top1": h, "mrr": m} for v, (h, m) in scores.items()}


def choose_features(x, y, groups, qids, l2: float) -> tuple[list[str], dict]:
    """BASE, then each other feature added while it raises leave-one-question-out top-1 by at
    least one fact, then each chosen one dropped while neither top-1 nor the mean reciprocal
    rank falls."""
    from agent.local.selection import FEATURES

    def loo(names: list[str]) -> tuple[int, float]:
        cols = [FEATURES.index(n) for n in names]
        hits, reciprocal, total = _leave_one_out(x, y, groups, qids,
                                                 lambda tr: fit(x[tr], y[tr], groups[tr], cols, l2)[0])
        return hits, round(reciprocal / max(total, 1), 4)

    chosen = list(BASE)
    best = loo(chosen)
    trace = {"base": best}
    rest = [n for n in FEATURES if n not in chosen]
    while rest:
        scores = {n: loo([*chosen, n]) for n in rest}
        trace.update({f"+{n} (after {len(chosen)})": v for n, v in scores.items()})
        name = max(rest, key=lambda n: scores[n])
        if scores[name][0] < best[0] + 1:
            break
        chosen.append(name)
        best = scores[name]
        rest.remove(name)
    dropped = True
    while dropped and len(chosen) > 1:
        scores = {n: loo([c for c in chosen if c != n]) for n in chosen}
        trace.update({f"-{n} (from {len(chosen)})": v for n, v in scores.items()})
        name = max(chosen, key=lambda n: scores[n])
        dropped = scores[name][0] >= best[0] and scores[name][1] >= best[1]
        if dropped:
            chosen.remove(name)
            best = scores[name]
    return chosen, trace


def show(x, y, groups, quotes, weights) -> None:
    """Per fact with a gold candidate: its first candidate and the best-ranked gold one."""
    for g in dict.fromkeys(groups):
        idx = np.flatnonzero(groups == g)
        if not y[idx].any():
            continue
        order = idx[np.argsort(-(x[idx] @ np.asarray(weights)))]
        rank = next(r for r, i in enumerate(order, 1) if y[i])
        fact, first = str(quotes[order[0]]).split(" || ", 1)
        print(f"{g} rank {rank}/{len(idx)}  {fact}\n   first: {first[:160]}", file=sys.stderr)
        if rank > 1:
            gold = str(quotes[order[rank - 1]]).split(" || ", 1)[1]
            print(f"   gold:  {gold[:160]}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench"))
    parser.add_argument("--collection", default="devbench")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated question sets of SETS and MORE_SETS")
    # "auto" since the union of the calibration halves (stop 26): it chose 0.3 there. On the
    # devbench half alone it chose 0.01, which read worse held out, and 0.1 was kept then.
    parser.add_argument("--l2", default="auto",
                        help="the conditional logit's L2 penalty, or 'auto': chosen from L2_GRID by leave-one-question-out")
    parser.add_argument("--refresh", action="store_true", help="recompute the cached candidate features")
    parser.add_argument("--scifact", type=int, default=-1,
                        help="also fit on N SciFact calibration claims' rationales (0: all; -1: none)")
    parser.add_argument("--show", action="store_true", help="per fact: the first candidate and the best gold one")
    parser.add_argument("--fit-only", action="store_true", help="fit and report the model, skip the thresholds")
    args = parser.parse_args()
    common.django_setup(Path(args.var))

    from agent import benchmark as bm
    from agent.configs import build_roles, get_config
    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.local.selection import FEATURES
    from agent.loop import AgentLoop
    from agent.retrieval import portal_embed
    from agent.types import Outcome
    from knowledge.models import Collection

    collection = Collection.objects.get(slug=args.collection)
    ready = {n.removesuffix(".pdf")
             for n in collection.documents.filter(status="ready").values_list("original_name", flat=True)}
    sets = tuple(n for n in SETS + MORE_SETS if n in args.sets.split(","))
    questions = [q for q in labelled_questions(ready, sets) if q["split"] == "calibration"]
    cfg = get_config("agentic")
    retriever_for = Retrievers(collection, cfg.retrieval_mode)
    embed = portal_embed()

    # 1. Candidates and labels (cached: retrieval and features do not change between fits).
    cache = Path(args.var) / f"selection_rows_{args.collection}_{'-'.join(sets)}.npz"
    if cache.exists() and not args.refresh:
        data = np.load(cache, allow_pickle=True)
        qids, fidx, x, y, quotes = data["qids"], data["fidx"], data["x"], data["y"], data["quotes"]
        recall = dict(data["recall"].item())
    else:
        rows = _rows(questions, cfg, AuditorParams(), retriever_for, embed)
        qids, fidx, x, y, recall = np.array(rows[0]), np.array(rows[1]), np.array(rows[2]), \
            np.array(rows[3], dtype=float), rows[4]
        quotes = np.array(rows[5])
        np.savez(cache, qids=qids, fidx=fidx, x=x, y=y, recall=np.array(recall, dtype=object), quotes=quotes,
                 previous=np.array(rows[6]), chunks=np.array(rows[7]))
    if args.scifact >= 0:
        extra = Path(args.var) / f"selection_rows_scifact_{args.scifact}.npz"
        if not extra.exists() or args.refresh:
            np.savez(extra, *scifact_rows(embed, args.scifact))
        more = np.load(extra)
        qids, fidx, x, y = (np.concatenate([a, more[f"arr_{i}"]]) for i, a in enumerate((qids, fidx, x, y)))
        quotes = np.concatenate([quotes, np.array([""] * len(more["arr_0"]))])
    groups = np.array([f"{q}/{f}" for q, f in zip(qids, fidx)])

    # 2. The model, its features and its penalty (features chosen at the former penalty 0.1,
    # then the penalty for them).
    l2 = 0.1 if args.l2 == "auto" else float(args.l2)
    names, trace = choose_features(x, y, groups, qids, l2)
    columns = [FEATURES.index(n) for n in names]
    l2_trace = {}
    if args.l2 == "auto":
        l2, l2_trace = choose_l2(x, y, groups, qids, columns)
    weights, bias = fit(x, y, groups, columns, l2)
    shipped = _leave_one_out(x, y, groups, qids, lambda tr: AuditorParams().selection_weights)
    per_set = {name: int(sum(str(q).startswith(f"{name}:") for q in set(qids))) for name in sets}
    print(json.dumps({"candidates": len(y), "positives": int(y.sum()), "answerable_questions": per_set,
                      "facts_with_gold": len({g for g in groups[y > 0]}), "gold_spans_in_sources": recall,
                      "leave_one_question_out (top1, mrr)": trace,
                      "shipped_model (top1, sum 1/rank, facts; not refitted)": shipped, "features": names,
                      "l2 (leave-one-question-out top1, mrr)": l2_trace, "l2": l2,
                      "weights": dict(zip(FEATURES, weights)), "bias": bias}, indent=1), file=sys.stderr, flush=True)
    if args.show:
        show(x, y, groups, quotes, weights)
    if args.fit_only:
        return

    # 3. Thresholds, with the whole loop over every calibration question.
    fitted = replace(AuditorParams(), selection_weights=weights, selection_bias=bias)
    results = []
    for answer_min, partial_min in itertools.product([0.02, 0.04, 0.08, 0.12], [0.02, 0.04, 0.08]):
        if partial_min > answer_min or answer_min - partial_min > 0.08:
            continue
        params = replace(fitted, answer_min=answer_min, answer_partial_min=partial_min)
        tally: Counter = Counter()
        for q in questions:
            r = build_roles(cfg, "local", embed=embed)
            r.auditor = LocalAuditor(embed, params=params)
            out = AgentLoop(cfg, r, retriever_for(q), concurrent=False).run(q["question"]).answer.outcome
            tally[(q["expected_behavior"], out.value)] += 1
        said = (Outcome.ANSWER.value, Outcome.PARTIAL.value)
        answered = sum(tally[(bm.ANSWER, o)] for o in said)
        full = tally[(bm.ANSWER, Outcome.ANSWER.value)]
        oos_answered = sum(tally[(bm.REFUSE, o)] for o in said)
        unanswerable_answered = sum(tally[("REFUSE_UNANSWERABLE", o)] for o in said)
        debunked = tally[(bm.DEBUNK, Outcome.FALSE_PREMISE.value)]
        results.append({"answer_min": answer_min, "answer_partial_min": partial_min, "answered": answered,
                        "full": full, "oos_answered": oos_answered, "unanswerable_answered": unanswerable_answered,
                        "debunked": debunked, "tally": dict(tally)})
        print(answer_min, partial_min, answered, full, oos_answered, unanswerable_answered, debunked,
              file=sys.stderr, flush=True)
    # No out-of-scope question answered (ANSWER or PARTIAL); then the most answerable questions
    # answered less three per unanswerable one answered, the most of them fully, the most false
    # premises corrected, and on ties the highest thresholds (the most conservative choice the
    # data cannot tell apart).
    safe = [r for r in results if r["oos_answered"] == 0] or results
    best = max(safe, key=lambda r: (r["answered"] - 3 * r["unanswerable_answered"], r["full"], r["debunked"],
                                    r["answer_partial_min"], r["answer_min"]))
    tally = best["tally"]
    print(json.dumps({
        "selection_weights": list(weights), "selection_bias": bias, "answer_min": best["answer_min"],
        "answer_partial_min": best["answer_partial_min"], "calibration_questions": len(questions),
        "grid": [{k: v for k, v in r.items() if k != "tally"} for r in results],
        "calibration_tally": {f"{e}->{o}": n for (e, o), n in sorted(tally.items())},
    }, indent=1))


if __name__ == "__main__":
    main()
