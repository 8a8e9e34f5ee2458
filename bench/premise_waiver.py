"""Choose when an unconfirmed premise is waived (AuditorParams.premise_unconfirmed_min and
premise_waive_support, agent.local.premise_check.waive_unconfirmed) by the whole-run cost on
the calibration halves, and report the premise figures of any half.

    nice .venv/bin/python bench/premise_waiver.py --var var/bench-blind --collection blind --split calibration \
        --out var/waiver-cal.json          # run every calibration question once, choose the waiver
    .venv/bin/python bench/premise_waiver.py --rows var/waiver-cal.json   # recount from saved runs
    nice .venv/bin/python bench/premise_waiver.py ... --split test --out var/waiver-test.json  # report only

Questions (each declared split; the same sets for both halves):
- bench/premise_questions.jsonl: false premises (DEBUNK_FALSE_PREMISE) and true premises of
  the same form (ANSWER);
- bench/blind2/questions.jsonl and bench/blind3/questions.jsonl: answerable and multi-part
  (ANSWER), false premises, out of scope (vague ones are left out: CLARIFY comes before any
  premise check);
- devbench (bench/_devbench_common): every question whose papers are ready;
- bench/in_domain_questions.jsonl (whole collection) and bench/qasper_style_questions.jsonl
  (a collection holding only the question's paper, as bench/refusals.py --scope paper).

Each question runs once through the agentic loop (local backend, default parameters). The
final audit's inputs to the verdict are kept: with them agent.local.verdict.verdict_for gives
the outcome with and without the waiver, so every grid point is recounted exactly (the waiver
is consulted only by the final audit, after the retries: a retry is asked for whatever it says).
The cost of a grid point over the calibration runs: answerable questions refused + false
premises answered as if true (ANSWER/PARTIAL) + unanswerable or out-of-scope questions
answered, each 1; a point that answers an out-of-scope calibration question is never chosen,
and ties go to the more cautious point (the higher thresholds).

Prints per set: false premises corrected (FALSE_PREMISE), true-premise/answerable questions
wrongly given FALSE_PREMISE, answerable refused (and refused for the premise alone), out of
scope answered, false premises answered as if true; then, for --split calibration, the grid
and the chosen point.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import _devbench_common as common

NEED_GRID = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
SUPPORT_GRID = (0.42, 0.46, 0.5, 0.54, 0.58, 0.62, 0.66, 0.7, 0.75, 0.8, 0.9, 1.01)
ANSWERED = ("ANSWER", "PARTIAL")


def questions_of(split: str, ready: set[str]) -> list[dict]:
    """Every question of the sets above in `split`, as {"question_id", "set", "question",
    "expected_behavior", "paper" (qasper only), "split"}."""
    from premises import load as load_premise_set
    from refusals import load_set

    out = [{**q, "set": "premise"} for q in load_premise_set(split)]
    for blind in ("blind2", "blind3"):
        path = common.ROOT / "bench" / blind / "questions.jsonl"
        for line in path.open(encoding="utf-8"):
            q = json.loads(line) if line.strip() else None
            if not q or q["split"] != split or q["category"] == "vague":
                continue
            behaviour = {"FALSE_PREMISE": "DEBUNK_FALSE_PREMISE", "REFUSAL": "REFUSE_OUT_OF_SCOPE"}.get(
                q["expected_outcome"], "ANSWER")
            out.append({"question_id": q["question_id"], "set": blind, "question": q["question"],
                        "expected_behavior": behaviour, "split": split})
    out += [{**q, "set": "devbench"} for q in common.with_splits(common.load_questions())
            if q["split"] == split and set(q["expected_doc_ids"]) <= ready]
    out += [q for name in ("in_domain", "qasper") for q in load_set(name)
            if q["split"] == split and q["paper"] in ready]
    return out


def run_all(questions: list[dict], collection) -> list[dict]:
    """Each question through the loop; per run its outcome and the final audit's waiver inputs."""
    from devbench import _MemoRetriever as MemoRetriever
    from refusals import paper_collection

    import agent.local.auditor as auditor_module
    from agent.configs import build_roles, get_config
    from agent.local.verdict import verdict_for
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed

    state: dict = {}
    real_waive = auditor_module.waive_unconfirmed

    def waive(need_p, premise, params):
        state["need"] = (need_p, premise.support)
        return real_waive(need_p, premise, params)

    def verdict(audits, premise, conflicts, can_retry, *, premise_waived=False):
        need = state.pop("need", None)
        off = verdict_for(audits, premise, conflicts, can_retry, premise_waived=False)[0].value
        on = verdict_for(audits, premise, conflicts, can_retry, premise_waived=True)[0].value
        state["final"] = {"need_p": need[0] if need else None, "support": need[1] if need else None,
                          "off": off, "on": on, "waived": premise_waived, "can_retry": can_retry}
        return verdict_for(audits, premise, conflicts, can_retry, premise_waived=premise_waived)

    auditor_module.waive_unconfirmed = waive
    auditor_module.verdict_for = verdict
    cfg = get_config("agentic")
    whole = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    own: dict[str, object] = {}
    rows = []
    for q in questions:
        retriever = whole
        if q["set"] == "qasper":
            if q["paper"] not in own:
                own[q["paper"]] = MemoRetriever(CollectionRetriever(paper_collection(q["paper"]),
                                                                    mode=cfg.retrieval_mode))
            retriever = own[q["paper"]]
        state.clear()
        roles = build_roles(cfg, "local", embed=portal_embed())
        result = AgentLoop(cfg, roles, retriever, concurrent=False).run(q["question"])
        final = state.get("final", {})
        rows.append({"id": q["question_id"], "set": q["set"], "split": q["split"],
                     "expected": q["expected_behavior"], "outcome": result.answer.outcome.value,
                     "premise": result.plan.premise, "reason": result.audit.reason if result.audit else "",
                     **final})
        print(q["set"], q["question_id"], q["expected_behavior"], result.answer.outcome.value,
              json.dumps(final), file=sys.stderr, flush=True)
    return rows


def outcome_at(row: dict, need_min: float, unconfirmed_min: float, waive_support: float) -> str:
    """The run's outcome had the waiver been (unconfirmed_min, waive_support)."""
    if row.get("need_p") is None or row.get("can_retry") or row["on"] == row["off"]:
        return row["outcome"]
    waive = row["need_p"] >= unconfirmed_min or (row["need_p"] >= need_min and row["support"] >= waive_support)
    if waive == row["waived"]:
        return row["outcome"]
    return "PARTIAL" if waive else "REFUSAL"


def tally(rows: list[dict], outcome) -> dict:
    """The premise figures per set and in all, from `outcome(row)`."""
    by: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        o = outcome(r)
        for key in (r["set"], "all"):
            c = by[key]
            if r["expected"] == "DEBUNK_FALSE_PREMISE":
                c["false_premises"] += 1
                c["false_premises_corrected"] += o == "FALSE_PREMISE"
                c["false_premises_answered_as_true"] += o in ANSWERED
            elif r["expected"] == "ANSWER":
                c["answerable"] += 1
                c["answerable_refused"] += o == "REFUSAL"
                c["answerable_refused_premise"] += o == "REFUSAL" and "premise" in r["reason"]
                c["answerable_false_premise"] += o == "FALSE_PREMISE"
            else:
                kind = "out_of_scope" if r["expected"] == "REFUSE_OUT_OF_SCOPE" else "unanswerable"
                c[kind] += 1
                c[f"{kind}_answered"] += o in ANSWERED
    return {k: dict(v) for k, v in by.items()}


def cost(t: dict) -> int:
    a = t.get("all", {})
    return (a.get("answerable_refused", 0) + a.get("false_premises_answered_as_true", 0)
            + a.get("out_of_scope_answered", 0) + a.get("unanswerable_answered", 0))


def choose(rows: list[dict], need_min: float) -> tuple[list[dict], dict]:
    grid = []
    for u in NEED_GRID:
        for s in SUPPORT_GRID:
            t = tally(rows, lambda r, u=u, s=s: outcome_at(r, need_min, u, s))
            grid.append({"premise_unconfirmed_min": u, "premise_waive_support": s, "cost": cost(t),
                         "out_of_scope_answered": t.get("all", {}).get("out_of_scope_answered", 0),
                         "answerable_refused": t.get("all", {}).get("answerable_refused", 0),
                         "false_premises_answered_as_true": t.get("all", {}).get("false_premises_answered_as_true", 0)})
    floor = min(g["out_of_scope_answered"] for g in grid)
    allowed = [g for g in grid if g["out_of_scope_answered"] == floor]
    best = min(allowed, key=lambda g: (g["cost"], -g["premise_unconfirmed_min"], -g["premise_waive_support"]))
    return grid, best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="calibration", choices=("calibration", "test"))
    parser.add_argument("--out", help="write the runs here (JSON)")
    parser.add_argument("--rows", help="recount saved runs instead of running")
    parser.add_argument("--sets", default="premise,blind2,blind3,devbench,in_domain,qasper")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from agent.local.auditor import AuditorParams

    params = AuditorParams()
    if args.rows:
        rows = json.loads(Path(args.rows).read_text())
    else:
        from knowledge.models import Collection

        collection = Collection.objects.get(slug=args.collection)
        ready = {n.removesuffix(".pdf") for n in
                 collection.documents.filter(status="ready").values_list("original_name", flat=True)}
        chosen = set(args.sets.split(","))
        rows = run_all([q for q in questions_of(args.split, ready) if q["set"] in chosen], collection)
        if args.out:
            Path(args.out).write_text(json.dumps(rows, indent=1))
    report = {"split": rows[0]["split"] if rows else args.split,
              "as_run": tally(rows, lambda r: r["outcome"]),
              "params": {"need_min": params.need_min, "premise_unconfirmed_min": params.premise_unconfirmed_min,
                         "premise_waive_support": params.premise_waive_support}}
    if report["split"] == "calibration":
        grid, best = choose(rows, params.need_min)
        report["chosen"] = best
        report["at_chosen"] = tally(rows, lambda r: outcome_at(r, params.need_min, best["premise_unconfirmed_min"],
                                                               best["premise_waive_support"]))
        report["grid"] = [g for g in grid if g["premise_waive_support"] in (best["premise_waive_support"], 1.01)
                          or g["premise_unconfirmed_min"] in (best["premise_unconfirmed_min"], 1.01)]
        report["waivable"] = [{k: r.get(k) for k in ("id", "set", "expected", "outcome", "need_p", "support")}
                              for r in rows if r.get("need_p") is not None and r["on"] != r["off"]]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
