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
        --cache var/refuse/runs

every question of both splits is run through the whole loop, QASPER-style questions
(bench/qasper_style_questions.jsonl) on a collection holding only their paper
(bench/refusals.py --scope paper), in-domain and devbench questions on the whole collection;
rows are the needs of each run's final audit (bench/_sufficiency_rows.run_rows): a need of an
answerable question one of whose candidates holds a gold span is answered, every need of an
unanswerable or out-of-scope question is not (other needs of answerable questions are left
out of the fit and kept for the outcome count). The features (--run-features) are fitted on
the calibration half only, class-balanced; need_min is the grid point of lowest whole-run
cost on the calibration half (each question's outcome recounted from its needs: all
answered ANSWER, some PARTIAL, none REFUSAL), never one that answers an out-of-scope
calibration question. Whenever the selection model (agent.local.selection) changes, rerun
this command: the best logit is its output.

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


# The --runs model: the default model's features keep their weights (AuditorParams), the
# added ones are fitted on top of them (an offset), so a need the added features say nothing
# about (0) keeps its probability.
RUN_FEATURES = "miss_and_gap"
RUN_GRID = [0.2, 0.25, 0.3, 0.35, 0.4]
WAIVER_GRID = [0.6, 0.65, 0.7, 0.75, 0.8, 1.01]


def _run_outcome(row: dict, probs: list[float], need_min: float, waiver: float) -> str:
    """A run's outcome recounted from its needs' probabilities as agent.local.verdict takes
    it: all answered ANSWER, some PARTIAL, none REFUSAL; a one-need question whose premise
    no sentence confirmed is answered (PARTIAL) only at P >= `waiver`; a FALSE_PREMISE
    stays one."""
    from agent.local.sufficiency import ALL_FEATURES

    if row["outcome"] == "FALSE_PREMISE":
        return "FALSE_PREMISE"
    said = [p >= need_min for p in probs]
    first = row["needs"][0]["x"] if row["needs"] else None
    if len(probs) == 1 and first is not None and first[ALL_FEATURES.index("premise_unconfirmed")]:
        return "PARTIAL" if said[0] and probs[0] >= waiver else "REFUSAL"
    return "ANSWER" if said and all(said) else "PARTIAL" if any(said) else "REFUSAL"


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


def runs_main(args) -> None:
    """--runs: fit the added need features and choose need_min and premise_unconfirmed_min
    on whole runs (module docstring)."""
    import pickle

    from refusals import load_set, paper_collection

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
    whole = CollectionRetriever(collection, mode=cfg.retrieval_mode)
    own: dict[str, CollectionRetriever] = {}

    def retriever_for(q: dict):
        if q.get("set") != "qasper":
            return whole
        if q["paper"] not in own:
            own[q["paper"]] = CollectionRetriever(paper_collection(q["paper"]), mode=cfg.retrieval_mode)
        return own[q["paper"]]

    path = Path(args.cache) / "run_rows.pkl" if args.cache else None
    if path and path.exists():
        rows = pickle.loads(path.read_bytes())
    else:
        rows = run_rows(questions, retriever_for)
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(pickle.dumps(rows))
    # The base model: the two-feature default (its weights, not the current AuditorParams'
    # if those already carry added features).
    base_names, base_weights, base_bias = ("best_logit", "support"), (0.619, 3.2922), -0.6589
    added = tuple(n for n in args.run_features.split(",") if n)
    base_cols = [ALL_FEATURES.index(n) for n in base_names]
    new_cols = [ALL_FEATURES.index(n) for n in added]
    fit_rows = [(np.asarray(n["x"], dtype=float), int(r["expected"] == "ANSWER")) for r in rows
                if r["split"] == CALIBRATION for n in r["needs"]
                if n["x"] is not None and (n["gold"] or r["expected"] != "ANSWER")]
    x = np.array([f for f, _ in fit_rows])
    y = np.array([t for _, t in fit_rows], dtype=float)
    w_new = fit_offset(x[:, base_cols], x[:, new_cols], y, base_weights, base_bias, l2=args.l2) if added else []
    names = base_names + added
    weights = tuple(base_weights) + tuple(round(float(w), 4) for w in w_new)
    cols = base_cols + new_cols

    def prob(v) -> float:
        return 0.0 if v is None else probability(np.asarray(v, dtype=float)[cols], weights, base_bias)

    probs = {r["id"]: [prob(n["x"]) for n in r["needs"]] for r in rows}
    splits = {sp: [r for r in rows if (r["split"] == CALIBRATION) == (sp == "calibration")]
              for sp in ("calibration", "held_out")}
    grid = []
    for t in RUN_GRID:
        for waiver in WAIVER_GRID:
            cal = _run_tally(splits["calibration"], probs, t, waiver)
            grid.append({"need_min": t, "premise_unconfirmed_min": waiver, "calibration_cost": round(_run_cost(cal), 4),
                         "out_of_scope_answered": sum(c.get("ANSWER", 0) + c.get("PARTIAL", 0) for k, c in cal.items()
                                                      if k.endswith("REFUSE_OUT_OF_SCOPE")),
                         "calibration": cal, "held_out": _run_tally(splits["held_out"], probs, t, waiver)})
    # Lowest calibration cost among the points that answer no out-of-scope calibration
    # question; ties go to the more cautious point (higher need_min, then higher waiver).
    allowed = [g for g in grid if not g["out_of_scope_answered"]] or grid[-1:]
    best = min(allowed, key=lambda g: (g["calibration_cost"], -g["need_min"], -g["premise_unconfirmed_min"]))
    scores = [prob(f) for f, _ in fit_rows]
    print(json.dumps({
        "need_features": list(names), "need_weights": list(weights), "need_bias": base_bias,
        "need_min": best["need_min"], "premise_unconfirmed_min": best["premise_unconfirmed_min"],
        "fit_rows": {"answered": int(y.sum()), "unanswered": int(len(y) - y.sum())},
        "calibration_auc": {"base": auc([probability(f[base_cols], base_weights, base_bias) for f, _ in fit_rows],
                                        list(y)),
                            "with_added": auc(scores, list(y))},
        "recorded_outcomes": {sp: {k: dict(Counter(r["outcome"] for r in rs if f"{r['set']}:{r['expected']}" == k))
                                   for k in sorted({f"{r['set']}:{r['expected']}" for r in rs})}
                              for sp, rs in splits.items()},
        "chosen": best, "grid": grid,
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
