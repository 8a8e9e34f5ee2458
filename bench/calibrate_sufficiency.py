"""Fit the local auditor's "is this need answered?" model and choose its thresholds by a
stated cost, on declared calibration data only; report the same figures on held-out data.

    nice .venv/bin/python bench/calibrate_sufficiency.py --var var/bench-blind --collection blind
    nice .venv/bin/python bench/calibrate_sufficiency.py ... --loop        # + the whole loop, retries measured
    nice .venv/bin/python bench/calibrate_sufficiency.py ... --report-only # current AuditorParams, no fit

Data (agent.local.calibration declares the splits; bench/_sufficiency_rows.py builds the rows):

1. SciFact labelled train claims: the claim is the need, its cited abstracts the evidence.
   SUPPORT and CONTRADICT claims are "answered" (the abstract states the claim's matter,
   either way), NEI claims are not (the abstract is on topic and does not state it: the
   QASPER-style unanswerable case). Calibration claims fit; held-out claims are reported.
2. Devbench questions over the ingested papers (--var / --collection: the 25 papers), each
   planned and retrieved as the agentic loop's first pass does:
   - an answerable question's need is "answered" when one of its candidate sentences holds
     a gold evidence span (needs whose candidates hold none are left out: unknown);
   - the same question retrieved again with every chunk holding a gold span removed (the
     paper is about the topic but the evidence does not state it): each need "unanswered";
   - an out-of-scope question's needs: "unanswered".
   Calibration half fits; the test half is reported.
3. bench/in_domain_questions.jsonl (written for this, docs/benchmarks.md "Refusals, stop
   24"), over the same collection with its declared split: questions about a paper of the
   collection that the paper does not answer (each need "unanswered"; whole runs: an
   answer costs as for out-of-scope questions), and answerable questions of the same form
   with a stated span (rows and gold-removed twins as devbench's, kinds "*_in_domain").

Model: agent.local.sufficiency (logistic over the best candidate's selection logit, the
margin to the second and its own features), fitted with agent.local.selection.fit_logistic,
each data source weighted to the same total. Thresholds: need_min minimises
    cost = COST_ANSWER_UNANSWERED * (unanswered needs called answered)
         + COST_REFUSE_ANSWERED * (answered needs called missing)
over the calibration rows, each source's cost divided by its row count (so SciFact's many
claims do not drown devbench's questions). With --loop, premise_unconfirmed_min is then
chosen on the calibration half by the same cost over whole runs, and the loop is run with 0
and 2 retries to count how often a retry changes the outcome.

With --runs (the refit of the default model, one command):

    nice .venv/bin/python bench/calibrate_sufficiency.py --var var/bench-blind --collection blind --runs \
        --cache var/refuse/runs --cv --list

every question of both splits is run through the whole loop, QASPER-style questions
(bench/qasper_style_questions.jsonl) on a collection holding only their paper
(bench/refusals.py --scope paper), in-domain and devbench questions on the whole collection;
rows are the needs of each run's final audit (bench/_sufficiency_rows.run_rows): a need of an
answerable question one of whose candidates holds a gold span is answered, every need of an
unanswerable or out-of-scope question is not (other needs of answerable questions are left
out of the fit and kept for the outcome count). The features (--run-features, added to best
logit and support; --fit offset keeps those two weights, joint refits them) are fitted on the
calibration half only, class-balanced; --cv compares the models of CV_MODELS by their
leave-one-question-out whole-run cost on the calibration half. need_min and
premise_unconfirmed_min are the grid point of lowest whole-run cost on the calibration half
(--choose goal: the most unanswerable questions refused with answerable ones refused within
the issue's 2/30), each question's outcome recounted from its needs as agent.local.verdict
takes it (all answered ANSWER, some PARTIAL, none REFUSAL; the premise as the run's check
left it, an answering sentence that states it counting once its need is answered), never a
point that answers an out-of-scope calibration question. The recount at the runs' own
parameters must give their recorded outcomes (printed: recount_mismatches_at_run_parameters).
"tradeoff" lists, at the chosen waiver, each need_min's calibration and held-out figures;
--list prints each calibration run the chosen point gets wrong, with each need's P and
features. Whenever the selection model (agent.local.selection) changes, rerun this command
without the cache: the best logit is its output.

Prints JSON: the fitted AuditorParams fields and every figure, labelled calibration or held out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import _devbench_common as common
import numpy as np
from _sufficiency_rows import (
    IN_DOMAIN,
    GoldFreeRetriever,
    devbench_rows,
    load_in_domain,
    run_rows,
    scifact_rows,
)

COST_ANSWER_UNANSWERED = 3.0  # stating an answer the evidence does not hold
COST_REFUSE_ANSWERED = 1.0  # a refusal (or a "missing" part) the evidence could have answered
# The share of asked needs the evidence does not answer, assumed for the cost (the rows'
# own mix is set by how they were made: every answerable question gives a gold-removed
# twin). The devbench calibration half has 5 of 24 questions out of scope or false.
UNANSWERED_PRIOR = 0.25
GRID = [round(x / 100, 2) for x in range(5, 96, 5)]


def _select(row: dict, names) -> dict:
    from agent.local.sufficiency import ALL_FEATURES

    x = row["x"]
    return {**row, "x": None if x is None else np.array([x[ALL_FEATURES.index(n)] for n in names])}


def _fit(rows: list[dict], l2: float) -> tuple[tuple[float, ...], float]:
    """Logistic fit, class-balanced within each source and each source the same total: the
    probability is then on even odds, and the prior enters through the cost."""
    from agent.local.selection import fit_logistic

    fit_rows = [r for r in rows if r["x"] is not None]
    x = np.array([r["x"] for r in fit_rows])
    y = np.array([r["y"] for r in fit_rows], dtype=float)
    sw = np.zeros(len(fit_rows))
    sources = {r["source"] for r in fit_rows}
    for source in sources:
        for label in (0, 1):
            idx = [i for i, r in enumerate(fit_rows) if r["source"] == source and r["y"] == label]
            sw[idx] = len(fit_rows) / (2 * len(sources) * max(len(idx), 1))
    return fit_logistic(x, y, l2=l2, sample_weight=sw)


def _auc(rows: list[dict], weights, bias) -> float | None:
    from agent.local.sufficiency import auc

    a = auc(_probs(rows, weights, bias), [r["y"] for r in rows]) if rows else None
    return None if a is None else round(a, 3)


def _probs(rows: list[dict], weights, bias) -> list[float]:
    from agent.local.sufficiency import probability

    return [probability(r["x"], weights, bias) for r in rows]


def _weights(rows: list[dict]) -> np.ndarray:
    """Row weights: within each source, unanswered needs weigh UNANSWERED_PRIOR in all and
    answered ones the rest; each source weighs 1."""
    w = np.zeros(len(rows))
    for source in {r["source"] for r in rows}:
        for y, share in ((0, UNANSWERED_PRIOR), (1, 1 - UNANSWERED_PRIOR)):
            idx = [i for i, r in enumerate(rows) if r["source"] == source and r["y"] == y]
            w[idx] = share / max(len(idx), 1)
    return w


def _cost(rows: list[dict], probs: list[float], t: float) -> float:
    """The expected cost per need of deciding `answered` at p >= t, rows weighted by _weights,
    summed over sources."""
    w = _weights(rows)
    total = 0.0
    for wi, pi, r in zip(w, probs, rows):
        said = pi >= t
        total += wi * (COST_ANSWER_UNANSWERED if said and not r["y"] else
                       COST_REFUSE_ANSWERED if not said and r["y"] else 0.0)
    return total


def _figures(rows: list[dict], probs: list[float], t: float) -> dict:
    """Per source and kind: how many needs are called answered at threshold t; AUC."""
    from agent.local.sufficiency import auc

    out = {}
    for source in sorted({r["source"] for r in rows}):
        idx = [i for i, r in enumerate(rows) if r["source"] == source]
        kinds = Counter(rows[i]["kind"] for i in idx)
        called = Counter(rows[i]["kind"] for i in idx if probs[i] >= t)
        out[source] = {"auc": None if (a := auc([probs[i] for i in idx], [rows[i]["y"] for i in idx])) is None
                       else round(a, 3),
                       "called_answered": {k: f"{called[k]}/{n}" for k, n in sorted(kinds.items())}}
    return out


def _old_rule(rows: list[dict]) -> dict:
    """The former decision: a need is SUPPORTED as soon as one candidate passes the gates."""
    out = {}
    for source in sorted({r["source"] for r in rows}):
        kinds = Counter(r["kind"] for r in rows if r["source"] == source)
        called = Counter(r["kind"] for r in rows if r["source"] == source and r["x"] is not None)
        out[source] = {k: f"{called[k]}/{n}" for k, n in sorted(kinds.items())}
    return out


def _loop(cfg_name: str, params, questions: list[dict], retriever, *, retries: int | None = None,
          retry_depth: int | None = None) -> dict:
    """The whole agentic loop on each question (and each answerable one with its gold chunks
    removed): outcome per question id."""
    from agent import benchmark as bm
    from agent.configs import build_roles, get_config
    from agent.local.auditor import LocalAuditor
    from agent.loop import AgentLoop
    from agent.retrieval import portal_embed

    cfg = get_config(cfg_name)
    if retries is not None:
        cfg = replace(cfg, max_retries=retries)
    out = {}
    for q in questions:
        variants = [(q["question_id"], retriever)]
        if q["expected_behavior"] == bm.ANSWER:
            variants.append((q["question_id"] + "/no-gold", GoldFreeRetriever(retriever, q["required_evidence_spans"])))
        for key, r in variants:
            roles = build_roles(cfg, "local", embed=portal_embed())
            roles.auditor = LocalAuditor(embed=roles.auditor._embed, params=params)
            loop = AgentLoop(cfg, roles, r, concurrent=False)
            if retry_depth is not None:
                loop.retry_depth = retry_depth
            res = loop.run(q["question"])
            out[key] = (q["expected_behavior"], res.answer.outcome.value, res.retries, q.get("set", "devbench"))
    return out


def _tally(outcomes: dict) -> dict:
    t: Counter = Counter()
    for key, (expected, outcome, _, qset) in outcomes.items():
        kind = "gold_removed" if key.endswith("/no-gold") else expected
        t[f"{qset}:{kind}->{outcome}"] += 1
    return dict(sorted(t.items()))


def _loop_cost(outcomes: dict) -> float:
    """Whole runs, expected cost per question: an answer (ANSWER/PARTIAL) where the evidence
    holds none (out of scope, or gold removed) costs COST_ANSWER_UNANSWERED, a refusal of an
    answerable question COST_REFUSE_ANSWERED; the unanswerable runs weigh UNANSWERED_PRIOR
    in all, the answerable ones the rest (false premises are left to the premise check)."""
    from agent import benchmark as bm

    unanswerable = [v for k, v in outcomes.items() if v[0] in (bm.REFUSE, IN_DOMAIN) or k.endswith("/no-gold")]
    answerable = [v for k, v in outcomes.items() if v[0] == bm.ANSWER and not k.endswith("/no-gold")]
    said = sum(v[1] in ("ANSWER", "PARTIAL") for v in unanswerable)
    refused = sum(v[1] == "REFUSAL" for v in answerable)
    return (UNANSWERED_PRIOR * COST_ANSWER_UNANSWERED * said / max(len(unanswerable), 1)
            + (1 - UNANSWERED_PRIOR) * COST_REFUSE_ANSWERED * refused / max(len(answerable), 1))


# The --runs model: with --fit offset (the default) the two-feature model's features keep
# their weights (FORMER_BASE, fitted on SciFact and devbench rows) and the added ones are
# fitted on top of them, so a need the added features say nothing about (0) keeps its
# probability; with --fit joint every feature is fitted together on the whole runs' needs.
# --cv compares both over several added sets (CV_MODELS); focus_miss on offset was the
# cheapest with the fewest weights fitted on the runs (stop 26).
RUN_FEATURES = "focus_miss"
FORMER_BASE = (("best_logit", "support"), (0.619, 3.2922), -0.6589)
RUN_GRID = [round(x / 100, 2) for x in range(10, 61, 5)]
WAIVER_GRID = [0.6, 0.65, 0.7, 0.75, 0.8, 1.01]
# A waiver answers a one-need question whose premise nothing confirms, which is how an
# out-of-scope question looks answered ("Who won the 2022 FIFA World Cup?" from a sentence
# about the 2022 World Cup): a waiver point is only allowed when one grid step below it
# would still answer no out-of-scope calibration question, so that it keeps a margin.
WAIVER_MARGIN = 0.05
# answer_partial_min, the floor on a sentence's P(answers) below which it is no candidate at
# all: a need none of whose sentences clears it has P 0. The runs are made at FLOOR_RUN (every
# need keeps its best sentence) and recounted at each floor of FLOOR_GRID (a need whose best
# sentence is under it has no candidate), so the floor is chosen with need_min by the same cost.
FLOOR_RUN = 0.0
FLOOR_GRID = [0.0, 0.01, 0.02, 0.03, 0.04]
# The issue's bar for answerable questions (issue 14: "answerable refused <= 2/30").
ANSWERABLE_REFUSED_MAX = 2 / 30
ANSWERED = ("ANSWER", "PARTIAL")


def _run_outcome(row: dict, probs: list[float], need_min: float, waiver: float) -> str:
    """A run's outcome recounted from its needs' probabilities as agent.local.verdict takes
    it: all answered ANSWER, some PARTIAL, none REFUSAL. The premise: a FALSE_PREMISE or
    CLARIFY stays one, a versioned name no passage mentions refuses; a premise a sentence
    confirmed holds, one the one need's best sentence states (premise_check.answer_confirms)
    holds when that need is answered; a one-need question whose premise stays unconfirmed is
    answered (PARTIAL) only at P >= `waiver`."""
    from agent.local.sufficiency import ALL_FEATURES

    if row["outcome"] in ("FALSE_PREMISE", "CLARIFY"):
        return row["outcome"]
    said = [p >= need_min for p in probs]
    premise = row.get("premise")
    if premise is None:  # rows cached before stop 26: the run's own premise flag
        first = row["needs"][0]["x"] if row["needs"] else None
        if len(probs) == 1 and first is not None and first[ALL_FEATURES.index("premise_unconfirmed")]:
            return "PARTIAL" if said[0] and probs[0] >= waiver else "REFUSAL"
        return "ANSWER" if said and all(said) else "PARTIAL" if any(said) else "REFUSAL"
    if premise["unknown"]:
        return "REFUSAL"
    premise_ok = (not premise["text"] or premise["checked"]
                  or (len(said) == 1 and said[0] and premise["answer_confirms"]))
    if said and all(said) and premise_ok:
        return "ANSWER"
    if any(said) and (premise_ok or len(said) > 1):
        return "PARTIAL"
    if len(said) == 1 and said[0] and probs[0] >= waiver:
        return "PARTIAL"
    return "REFUSAL"


def _run_tally(rows: list[dict], probs: dict[str, list[float]], need_min: float, waiver: float) -> dict:
    """Per set and expected behaviour: the outcomes recounted (_run_outcome)."""
    tally: dict[str, Counter] = {}
    for r in rows:
        out = _run_outcome(r, probs[r["id"]], need_min, waiver)
        tally.setdefault(f"{r['set']}:{r['expected']}", Counter())[out] += 1
    return {k: dict(v) for k, v in sorted(tally.items())}


def _run_cost(tally: dict) -> float:
    """Expected cost per question, as _loop_cost: answering an unanswerable question costs
    COST_ANSWER_UNANSWERED, refusing an answerable one COST_REFUSE_ANSWERED, the unanswerable
    ones weighing UNANSWERED_PRIOR in all."""
    un, ans = Counter(), Counter()
    for kind, c in tally.items():
        (ans if kind.endswith(":ANSWER") else un).update(c)
    said = un["ANSWER"] + un["PARTIAL"]
    return (UNANSWERED_PRIOR * COST_ANSWER_UNANSWERED * said / max(sum(un.values()), 1)
            + (1 - UNANSWERED_PRIOR) * COST_REFUSE_ANSWERED * ans["REFUSAL"] / max(sum(ans.values()), 1))


def _summary(tally: dict) -> dict:
    """The issue's figures from a tally: answerable refused, unanswerable (QASPER-style and
    in-domain) refused, out of scope answered, each as x/N, and the answerable refusal rate."""
    def count(kinds, said) -> tuple[int, int]:
        cs = [c for k, c in tally.items() if any(k.endswith(kind) for kind in kinds)]
        return sum(c.get(s, 0) for c in cs for s in said), sum(sum(c.values()) for c in cs)

    ans = count([":ANSWER"], ["REFUSAL"])
    un = count([":REFUSE_UNANSWERABLE"], ["REFUSAL"])
    oos = count([":REFUSE_OUT_OF_SCOPE"], ANSWERED)
    per_set = {k.split(":")[0] + "_answerable_refused": f"{c.get('REFUSAL', 0)}/{sum(c.values())}"
               for k, c in tally.items() if k.endswith(":ANSWER")}
    per_set.update({k.split(":")[0] + "_unanswerable_refused": f"{c.get('REFUSAL', 0)}/{sum(c.values())}"
                    for k, c in tally.items() if k.endswith(":REFUSE_UNANSWERABLE")})
    return {"answerable_refused": f"{ans[0]}/{ans[1]}", "answerable_refused_rate": round(ans[0] / max(ans[1], 1), 4),
            "unanswerable_refused": f"{un[0]}/{un[1]}", "out_of_scope_answered": f"{oos[0]}/{oos[1]}",
            "oos_answered": oos[0], **per_set}


def _failures(rows: list[dict], probs: dict[str, list[float]], need_min: float, waiver: float) -> list[str]:
    """One line per run the recount gets wrong (an answerable question refused, or PARTIAL
    with no answer sentence in the recorded run; an unanswerable or out-of-scope one
    answered), with what decided it: each need's P and features, and the premise."""
    from agent.local.sufficiency import ALL_FEATURES

    out = []
    for r in rows:
        got = _run_outcome(r, probs[r["id"]], need_min, waiver)
        wrong = ((r["expected"] == "ANSWER" and (got == "REFUSAL" or (got == r["outcome"] == "PARTIAL"
                                                                       and not r.get("sentences", 1))))
                 or (r["expected"] != "ANSWER" and got in ANSWERED))
        if not wrong:
            continue
        premise = r.get("premise") or {}
        lines = [f"{r['id']} ({r['set']}) expected {r['expected']}, recounted {got}, recorded {r['outcome']} "
                 f"({r.get('sentences', '?')} sentences) | {r.get('reason', '')[:140]}",
                 f"    question: {r.get('question', '')}",
                 f"    premise: {premise.get('text', '')!r} checked={premise.get('checked')} "
                 f"answer_confirms={premise.get('answer_confirms')} unknown={premise.get('unknown')}"]
        for n, p in zip(r["needs"], probs[r["id"]]):
            x = n["x"]
            feats = "no candidate" if x is None else " ".join(
                f"{k}={x[ALL_FEATURES.index(k)]:.2f}" for k in ("best_logit", "support", "focus_miss", "fit_gap",
                                                               "miss_and_gap"))
            lines.append(f"    need P={p:.3f} gold={n['gold']} {feats} | {n.get('fact', '')[:90]}")
            lines.append(f"        best: {n.get('best', '')[:160]}")
        out.append("\n".join(lines))
    return out


def fit_offset(x_base: np.ndarray, x_new: np.ndarray, y: np.ndarray, base_weights, base_bias: float, *,
               l2: float = 1.0, steps: int = 100) -> np.ndarray:
    """Weights of the added features x_new of a logistic model whose other features x_base
    keep `base_weights` and `base_bias` (an offset): Newton steps on the class-balanced,
    L2-penalised log loss."""
    offset = x_base @ np.asarray(base_weights, dtype=float) + base_bias
    sw = np.where(y == 1, len(y) / (2 * max(y.sum(), 1)), len(y) / (2 * max((1 - y).sum(), 1)))
    w = np.zeros(x_new.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(offset + x_new @ w)))
        hessian = (x_new * (sw * p * (1 - p))[:, None]).T @ x_new + l2 * np.eye(len(w))
        w -= np.linalg.solve(hessian, x_new.T @ (sw * (p - y)) + l2 * w)
    return w


def _fit_runs(x: np.ndarray, y: np.ndarray, added: tuple[str, ...], mode: str, l2: float,
              ) -> tuple[tuple[str, ...], tuple[float, ...], float]:
    """The need model on whole runs' needs (rows x of ALL_FEATURES, y answered): with mode
    "joint" best_logit, support and `added` fitted together (class-balanced, L2), with
    "offset" only `added` on top of FORMER_BASE. Returns (features, weights, bias)."""
    from agent.local.selection import fit_logistic
    from agent.local.sufficiency import ALL_FEATURES

    base_names, base_weights, base_bias = FORMER_BASE
    if mode == "none":
        from agent.local.auditor import AuditorParams

        d = AuditorParams()
        return tuple(d.need_features), tuple(d.need_weights), d.need_bias
    if mode == "joint":
        names = base_names + tuple(n for n in added if n not in base_names)
        sw = np.where(y == 1, len(y) / (2 * max(y.sum(), 1)), len(y) / (2 * max((1 - y).sum(), 1)))
        weights, bias = fit_logistic(x[:, [ALL_FEATURES.index(n) for n in names]], y, l2=l2, sample_weight=sw)
        return names, weights, bias
    w_new = fit_offset(x[:, [ALL_FEATURES.index(n) for n in base_names]], x[:, [ALL_FEATURES.index(n) for n in added]],
                       y, base_weights, base_bias, l2=l2) if added else []
    return base_names + added, tuple(base_weights) + tuple(round(float(w), 4) for w in w_new), base_bias


# The models --cv compares: (fit mode, features added to best_logit and support).
CV_MODELS = [("offset", ()), ("offset", ("miss_and_gap",)), ("offset", ("focus_miss",)),
             ("offset", ("focus_miss", "miss_and_gap")), ("joint", ()), ("joint", ("miss_and_gap",)),
             ("joint", ("focus_miss",)), ("joint", ("focus_miss", "miss_and_gap")),
             ("joint", ("focus_miss", "fit_gap"))]


def _cross_validated(rows: list[dict], fit_rows: list, l2: float) -> list[dict]:
    """Per model of CV_MODELS: each calibration question's needs scored by the model fitted
    without that question's needs (leave one question out), then the whole-run cost on the
    calibration half recounted at each need_min of RUN_GRID (waiver off); the lowest cost
    and its need_min. What chooses the features and the fit without scoring a question by a
    fit that saw it."""
    from agent.local.calibration import CALIBRATION
    from agent.local.sufficiency import ALL_FEATURES, probability

    cal = [r for r in rows if r["split"] == CALIBRATION]
    x = np.array([f for f, _, _ in fit_rows])
    y = np.array([t for _, t, _ in fit_rows], dtype=float)
    ids = np.array([i for _, _, i in fit_rows])
    out = []
    for mode, added in CV_MODELS:
        probs = {}
        for r in cal:
            keep = ids != r["id"]
            names, weights, bias = _fit_runs(x[keep], y[keep], added, mode, l2)
            cols = [ALL_FEATURES.index(n) for n in names]
            probs[r["id"]] = [0.0 if n["x"] is None else
                              probability(np.asarray(n["x"], dtype=float)[cols], weights, bias) for n in r["needs"]]
        costs = {t: round(_run_cost(_run_tally(cal, probs, t, 1.01)), 4) for t in RUN_GRID}
        t_best = min(costs, key=lambda t: (costs[t], -t))
        out.append({"fit": mode, "added": list(added), "cv_cost": costs[t_best], "need_min": t_best,
                    "at_need_min": _summary(_run_tally(cal, probs, t_best, 1.01)), "cost_by_need_min": costs})
    return out


def runs_main(args) -> None:
    """--runs: fit the need model and choose need_min and premise_unconfirmed_min on whole
    runs (module docstring)."""
    import pickle

    from refusals import load_blind, load_set, paper_collection

    from agent.configs import get_config
    from agent.local.calibration import CALIBRATION
    from agent.local.sufficiency import ALL_FEATURES, auc, probability
    from agent.retrieval import CollectionRetriever
    from knowledge.models import Collection

    cfg = get_config("agentic")
    collection = Collection.objects.get(slug=args.collection)
    ready = {n.removesuffix(".pdf") for n in
             collection.documents.filter(status="ready").values_list("original_name", flat=True)}
    questions = [q for name in ("qasper", "in_domain") for q in load_set(name) if q["paper"] in ready]
    questions += [q for q in common.with_splits(common.load_questions())
                  if q["expected_behavior"] in ("ANSWER", "REFUSE_OUT_OF_SCOPE") and set(q["expected_doc_ids"]) <= ready]
    questions += [q for q in load_blind("blind2") if set(q["papers"]) <= ready]
    if args.only_calibration:
        # Held-out questions are not even run: nothing chosen here can have seen them.
        questions = [q for q in questions if q["split"] == CALIBRATION]
    whole = CollectionRetriever(collection, mode=cfg.retrieval_mode)
    own: dict[str, CollectionRetriever] = {}

    def retriever_for(q: dict):
        if q.get("set") != "qasper":
            return whole
        if q["paper"] not in own:
            own[q["paper"]] = CollectionRetriever(paper_collection(q["paper"]), mode=cfg.retrieval_mode)
        return own[q["paper"]]

    from agent.local.auditor import AuditorParams

    path = Path(args.cache) / "run_rows.pkl" if args.cache else None
    if path and path.exists():
        rows = pickle.loads(path.read_bytes())
    else:
        rows = run_rows(questions, retriever_for, replace(AuditorParams(), answer_partial_min=FLOOR_RUN))
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(pickle.dumps(rows))
    added = tuple(n for n in args.run_features.split(",") if n)
    fit_rows = [(np.asarray(n["x"], dtype=float), int(r["expected"] == "ANSWER"), r["id"]) for r in rows
                if r["split"] == CALIBRATION for n in r["needs"]
                if n["x"] is not None and (n["gold"] or r["expected"] != "ANSWER")]
    x = np.array([f for f, _, _ in fit_rows])
    y = np.array([t for _, t, _ in fit_rows], dtype=float)
    base_names, base_weights, base_bias = FORMER_BASE
    base_cols = [ALL_FEATURES.index(n) for n in base_names]
    names, weights, bias = _fit_runs(x, y, added, args.fit, args.l2)
    cols = [ALL_FEATURES.index(n) for n in names]

    best_logit = ALL_FEATURES.index("best_logit")

    def prob(v, floor: float = FLOOR_RUN) -> float:
        # Under the floor the best sentence, and so every sentence of the need, is no candidate.
        if v is None or 1 / (1 + np.exp(-float(v[best_logit]))) < floor:
            return 0.0
        return probability(np.asarray(v, dtype=float)[cols], weights, bias)

    probs_at = {floor: {r["id"]: [prob(n["x"], floor) for n in r["needs"]] for r in rows} for floor in FLOOR_GRID}
    probs = probs_at[FLOOR_RUN]
    recorded = {r["id"]: [n.get("p", 0.0) for n in r["needs"]] for r in rows}
    splits = {sp: [r for r in rows if (r["split"] == CALIBRATION) == (sp == "calibration")]
              for sp in ("calibration", "held_out")}
    grid = []
    for floor in FLOOR_GRID:
        for t in RUN_GRID:
            for waiver in WAIVER_GRID:
                cal = _run_tally(splits["calibration"], probs_at[floor], t, waiver)
                held = _run_tally(splits["held_out"], probs_at[floor], t, waiver)
                near = _summary(_run_tally(splits["calibration"], probs_at[floor], t, waiver - WAIVER_MARGIN))
                grid.append({"answer_partial_min": floor, "need_min": t, "premise_unconfirmed_min": waiver,
                             "calibration_cost": round(_run_cost(cal), 4), "oos_answered_near": near["oos_answered"],
                             "calibration": _summary(cal), "held_out": _summary(held),
                             "calibration_tally": cal, "held_out_tally": held})
    # The choice, on the calibration half only, among the points that answer no out-of-scope
    # calibration question, nor would at a waiver WAIVER_MARGIN lower: with --choose cost the lowest stated cost; with --choose goal
    # (the issue's bar) the most cautious point whose answerable refusal rate stays within
    # ANSWERABLE_REFUSED_MAX, i.e. the most unanswerable questions refused within it. Ties
    # go to the more cautious point (higher need_min, then higher waiver).
    allowed = [g for g in grid if not g["calibration"]["oos_answered"] and not g["oos_answered_near"]] or grid[-1:]
    if args.choose == "goal":
        within = [g for g in allowed if g["calibration"]["answerable_refused_rate"] <= ANSWERABLE_REFUSED_MAX]
        best = max(within or allowed, key=lambda g: (int(g["calibration"]["unanswerable_refused"].split("/")[0]),
                                                     -g["calibration_cost"], g["need_min"],
                                                     g["premise_unconfirmed_min"], g["answer_partial_min"]))
    else:
        best = min(allowed, key=lambda g: (g["calibration_cost"], -g["need_min"], -g["premise_unconfirmed_min"],
                                           -g["answer_partial_min"]))
    probs = probs_at[best["answer_partial_min"]]
    scores = [prob(f) for f, _, _ in fit_rows]
    # The recount at the parameters the runs were made with must give the recorded outcomes.
    if all(r.get("premise") for r in rows):
        d = AuditorParams()
        mismatched = [r["id"] for r in rows if _run_outcome(r, recorded[r["id"]], d.need_min, d.premise_unconfirmed_min)
                      not in (r["outcome"],) and not (r["outcome"] == "PARTIAL" and r.get("conflicts"))]
    else:
        mismatched = None
    if args.list:
        for line in _failures(splits["calibration"], probs, best["need_min"], best["premise_unconfirmed_min"]):
            print(line, file=sys.stderr)
    print(json.dumps({
        "fit": args.fit, "need_features": list(names), "need_weights": list(weights), "need_bias": bias,
        "need_min": best["need_min"], "premise_unconfirmed_min": best["premise_unconfirmed_min"],
        "answer_partial_min": best["answer_partial_min"], "choose": args.choose,
        "fit_rows": {"answered": int(y.sum()), "unanswered": int(len(y) - y.sum())},
        "calibration_auc": {"former_base": auc([probability(f[base_cols], base_weights, base_bias) for f, _, _ in fit_rows],
                                               list(y)),
                            "fitted": auc(scores, list(y))},
        "recount_mismatches_at_run_parameters": mismatched,
        "recorded_outcomes": {sp: {k: dict(Counter(r["outcome"] for r in rs if f"{r['set']}:{r['expected']}" == k))
                                   for k in sorted({f"{r['set']}:{r['expected']}" for r in rs})}
                              for sp, rs in splits.items()},
        "chosen": best,
        "feature_sets_cv": _cross_validated(rows, fit_rows, args.l2) if args.cv else None,
        "tradeoff": [{"need_min": g["need_min"], "cost": g["calibration_cost"], "calibration": g["calibration"],
                      "held_out": g["held_out"]} for g in grid
                     if g["premise_unconfirmed_min"] == best["premise_unconfirmed_min"]
                     and g["answer_partial_min"] == best["answer_partial_min"]],
        "grid": grid,
    }, indent=1, default=str))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--scifact-limit", type=int, default=0)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--loop", action="store_true", help="also run the whole loop (premise waiver, retries)")
    parser.add_argument("--report-only", action="store_true", help="no fit: report the current AuditorParams")
    parser.add_argument("--cache", default="", help="folder caching the rows (pickles) between fits")
    parser.add_argument("--runs", action="store_true", help="fit on whole runs (module docstring)")
    parser.add_argument("--run-features", default=RUN_FEATURES,
                        help="the --runs model's features added to best_logit and support (comma-separated)")
    parser.add_argument("--fit", default="offset", choices=("offset", "joint", "none"),
                        help="--runs: fit every feature on the runs' needs, or only the added ones on top of the "
                             "former two-feature model, or none (the shipped AuditorParams model; only the "
                             "thresholds are chosen)")
    parser.add_argument("--choose", default="cost", choices=("cost", "goal"),
                        help="--runs: need_min of lowest stated cost, or the most cautious within the issue's "
                             "answerable-refused bar")
    parser.add_argument("--only-calibration", action="store_true",
                        help="--runs: run the calibration halves only (no held-out figures)")
    parser.add_argument("--cv", action="store_true",
                        help="--runs: each candidate model's whole-run cost on the calibration half, leaving "
                             "each question out of its own fit")
    parser.add_argument("--list", action="store_true",
                        help="--runs: print each calibration run the chosen point gets wrong, with why (stderr)")
    parser.add_argument("--features", default="best_logit,support,focus_miss,fit_gap",
                        help="the model's features (of agent.local.sufficiency.ALL_FEATURES)")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    if args.runs:
        runs_main(args)
        return
    import pickle

    from devbench import _MemoRetriever as MemoRetriever

    from agent import benchmark as bm
    from agent.configs import build_roles, get_config
    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.local.calibration import CALIBRATION
    from agent.local.sufficiency import ALL_FEATURES, NEED_FEATURES
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    cfg = get_config("agentic")
    roles = build_roles(cfg, "local", embed=portal_embed())
    auditor = LocalAuditor(embed=roles.auditor._embed)
    collection = Collection.objects.filter(slug=args.collection).first() if args.collection else None
    questions, retriever = [], None
    if collection is not None:
        ready = {n.removesuffix(".pdf") for n in
                 collection.documents.filter(status="ready").values_list("original_name", flat=True)}
        questions = [q for q in common.with_splits(common.load_questions()) if set(q["expected_doc_ids"]) <= ready]
        # The in-domain unanswerable questions (their split is declared in the file).
        questions += [q for q in load_in_domain() if q["paper"] in ready]
        retriever = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    else:
        print("no collection: SciFact only", file=sys.stderr)

    def cached(name: str, make) -> list[dict]:
        path = Path(args.cache) / f"{name}.pkl" if args.cache else None
        if path and path.exists():
            return pickle.loads(path.read_bytes())
        made = make()
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(pickle.dumps(made))
        return made

    rows = cached(f"scifact-{args.scifact_limit}", lambda: scifact_rows(auditor, args.scifact_limit))
    if retriever is not None:
        rows += cached(f"devbench-{args.collection}", lambda: devbench_rows(auditor, roles, cfg, retriever, questions))
    calib_all = [r for r in rows if r["split"] == CALIBRATION]
    feature_sets = {}
    if not args.report_only:
        # Every candidate feature set's fit, reported (calibration and held-out AUC); the
        # model uses --features (see agent.local.sufficiency for why).
        for names in (NEED_FEATURES, ("best_logit",), ("best_logit", "margin", "support"),
                      ("best_logit", "support", "focus_miss"), ("best_logit", "support", "fit_gap"),
                      tuple(args.features.split(",")), ALL_FEATURES):
            w, b = _fit([_select(r, names) for r in calib_all], args.l2)
            feature_sets[",".join(names)] = {
                "weights": list(w),
                **{split: {src: _auc([_select(r, names) for r in rows if r["split"] == sp and r["source"] == src], w, b)
                           for src in ("scifact", "devbench")} for split, sp in (("calibration", CALIBRATION),
                                                                                ("held_out", "test"))}}
    base = AuditorParams()
    names = base.need_features if args.report_only else tuple(args.features.split(","))
    rows = [_select(r, names) for r in rows]
    calib = [r for r in rows if r["split"] == CALIBRATION]
    held = [r for r in rows if r["split"] != CALIBRATION]

    if args.report_only:
        weights, bias, t = base.need_weights, base.need_bias, base.need_min
    else:
        weights, bias = _fit(calib, args.l2)
        probs = _probs(calib, weights, bias)
        # Lowest cost; ties go to the higher threshold (the more cautious decision).
        t = min(GRID, key=lambda g: (round(_cost(calib, probs, g), 6), -g))
    params = replace(base, need_features=names, need_weights=tuple(weights), need_bias=bias, need_min=t,
                     need_partial_min=t)
    p_cal, p_held = _probs(calib, weights, bias), _probs(held, weights, bias)
    report = {
        "features": list(names), "need_weights": list(weights), "need_bias": bias, "need_min": t,
        "costs": {"answer_unanswered": COST_ANSWER_UNANSWERED, "refuse_answered": COST_REFUSE_ANSWERED,
                  "unanswered_prior": UNANSWERED_PRIOR},
        "rows": {"calibration": dict(Counter(f"{r['source']}:{r['kind']}" for r in calib)),
                 "held_out": dict(Counter(f"{r['source']}:{r['kind']}" for r in held))},
        "feature_sets_auc": feature_sets,
        "cost_by_threshold_calibration": {g: round(_cost(calib, p_cal, g), 3) for g in GRID},
        "calibration": _figures(calib, p_cal, t),
        "held_out": _figures(held, p_held, t),
        "former_rule_calibration": _old_rule(calib),
        "former_rule_held_out": _old_rule(held),
    }
    print(json.dumps(report, indent=1), flush=True)
    if not args.loop or retriever is None:
        return

    cal_q = [q for q in questions if q["split"] == CALIBRATION]
    test_q = [q for q in questions if q["split"] != CALIBRATION]
    loop = {}

    def choose(grid, make):
        """The grid point of lowest whole-run cost on the calibration half; ties go to the
        later (more cautious) point. A point that answers an out-of-scope calibration
        question is never chosen (the issue's goal is none answered; the last point of each
        grid is the most cautious one, so one is always left)."""
        best = None
        for value in grid:
            out = _loop("agentic", make(value), cal_q, retriever)
            c = round(_loop_cost(out), 4)
            print(f"{value}: cost {c} {_tally(out)}", file=sys.stderr, flush=True)
            loop.setdefault("grid", []).append({"value": value, "cost": c, "tally": _tally(out)})
            out_of_scope_answered = any(v[0] == bm.REFUSE and v[1] in ("ANSWER", "PARTIAL") for v in out.values())
            if (best is None or c <= best[0]) and not out_of_scope_answered:
                best = (c, value, out)
        return best

    if args.report_only:
        out = _loop("agentic", params, cal_q, retriever)
        best = (_loop_cost(out), None, out)
    else:
        # need_min on whole runs (the row-level choice above is reported, not used: the loop's
        # retries and multi-part questions change what one need's decision costs), then the
        # premise waiver at that need_min.
        best = choose(sorted({0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, t}),
                      lambda v: replace(params, need_min=v, need_partial_min=v))
        params = replace(params, need_min=best[1], need_partial_min=best[1])
        loop["need_min"] = best[1]
        best = choose([0.6, 0.65, 0.7, 0.75, 0.8, 1.01], lambda v: replace(params, premise_unconfirmed_min=v))
        params = replace(params, premise_unconfirmed_min=best[1])
        loop["premise_unconfirmed_min"] = best[1]
    loop["calibration_cost"] = best[0]
    loop["calibration_tally"] = _tally(best[2])
    no_retry = _loop("agentic", params, cal_q, retriever, retries=0)
    shallow = _loop("agentic", params, cal_q, retriever, retry_depth=1)
    loop["calibration_retried"] = sum(v[2] > 0 for v in best[2].values())
    # How often a retry changes the outcome (against the same loop without retries), with
    # the retry reading only its queries' first k chunks (depth 1, as before) or deeper.
    for name, runs in (("retry_depth_1", shallow), ("retry_depth_default", best[2])):
        loop[f"calibration_retry_changed_outcome_{name}"] = {
            k: f"{no_retry[k][1]}->{v[1]}" for k, v in runs.items() if v[1] != no_retry[k][1]}
    held_out = _loop("agentic", params, test_q, retriever)
    loop["held_out_tally"] = _tally(held_out)
    loop["held_out_by_question"] = {k: v[1] for k, v in sorted(held_out.items())}
    # The former decision on the same held-out runs: any candidate past the gates answers,
    # no premise waiver, a retry reads only its queries' first k chunks.
    former = _loop("agentic", replace(params, need_min=0.0, need_partial_min=0.0, premise_unconfirmed_min=1.01),
                   test_q, retriever, retry_depth=1)
    loop["held_out_tally_former_rule"] = _tally(former)
    loop["held_out_by_question_former_rule"] = {k: v[1] for k, v in sorted(former.items())}
    print(json.dumps(loop, indent=1))


if __name__ == "__main__":
    main()
