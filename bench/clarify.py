"""Clarify from evidence (agent.local.clarify): which questions the auditor asks back, and the
grid its ClarifyParams were chosen on.

    nice -n 10 .venv/bin/python bench/clarify.py --var var/bench-blind --split calibration
    ... --split test --params '{"ratio": 0.5}'      # report one point on the held-out halves

Only a question that names nothing and leaves a referent unresolved (clarify.
unresolved_referent) can be asked back, so only those are run: the blind sets' (vague ones
expect CLARIFY, the others not), the premise set's, and the QASPER-style ones asked of the
whole collection (terse questions about one paper: there, CLARIFY is what the design asks
when the papers answer differently, so they are listed, not scored). Each is answered by the
agentic configuration with the auditor's answering candidates recorded; the grid then says,
per point, which questions would be asked back. Cost: vague questions not asked back +
others asked back (QASPER-style ones apart).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import replace
from pathlib import Path

import _devbench_common as common

SETS = {"blind": "blind/questions.jsonl", "blind2": "blind2/questions.jsonl", "blind3": "blind3/questions.jsonl",
        "premise": "premise_questions.jsonl", "qasper": "qasper_style_questions.jsonl"}
GRID = {"ratio": (0.3, 0.5, 0.7), "top": (3, 5, 8), "same_jaccard": (0.6,),
        "relevant_ratio": (0.6, 0.7, 0.8, 0.9, 0.95), "lead_share": (0.4, 0.5, 0.6, 1.01)}


def load(split: str) -> list[dict]:
    from agent.local.clarify import unresolved_referent

    out = []
    for name, path in SETS.items():
        for line in (common.ROOT / "bench" / path).open(encoding="utf-8"):
            if not line.strip():
                continue
            q = json.loads(line)
            # bench/blind has no split: all of it is held out.
            if q.get("split", "test") != split or not unresolved_referent(q["question"]):
                continue
            want = "scope" if name == "qasper" else ("CLARIFY" if q.get("category") == "vague" else "other")
            out.append({"set": name, "id": q["question_id"], "question": q["question"], "want": want})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="calibration", choices=("calibration", "test"))
    parser.add_argument("--params", default="", help="JSON of ClarifyParams fields: report that point only")
    args = parser.parse_args()
    common.django_setup(Path(args.var), fresh=False)
    from agent.local import auditor
    from agent.local.clarify import ClarifyParams, clarify_from_evidence, resolving_paper
    from agent.services import run_create, run_execute
    from knowledge.models import Collection

    collection = Collection.objects.get(slug=args.collection)
    # Every audit's, in order: the loop stops at the first that asks back, and until then
    # the audits are those of a run that never asks back.
    calls: dict[str, list[tuple[list, list | None, bool, list]]] = {}

    def record(question, ranked, params=None, *, relevant=None, answered=False, sources=None):
        calls.setdefault(question, []).append((ranked, relevant, answered, sources or []))
        return []

    auditor.clarify_from_evidence = record
    rows = load(args.split)
    for row in rows:
        run = run_create(collection=collection, user=collection.created_by, question=row["question"],
                         config_name="agentic", enqueue=False)
        run_execute(run_id=run.pk)
        run.refresh_from_db()
        row["outcome"] = run.outcome
        print(row["set"], row["id"], row["want"], run.outcome, row["question"], file=sys.stderr, flush=True)

    def asked_back(params: ClarifyParams) -> dict[str, list[str]]:
        # A question the planner already found vague ended CLARIFY before any audit.
        def first(question: str) -> list[str]:
            for ranked, relevant, answered, sources in calls.get(question, []):
                asks = clarify_from_evidence(question, ranked, params, relevant=relevant, answered=answered)
                # One paper the evidence points to is answered (or refused) from, not asked about.
                if asks and resolving_paper(ranked, sources, params, relevant=relevant) is None:
                    return asks
            return []

        return {r["id"]: ["(planner)"] if r["outcome"] == "CLARIFY" else first(r["question"]) for r in rows}

    def cost(asks: dict[str, list[str]]) -> int:
        return sum((r["want"] == "CLARIFY") != bool(asks[r["id"]]) for r in rows if r["want"] != "scope")

    points = ([replace(ClarifyParams(), **json.loads(args.params))] if args.params else
              [ClarifyParams(**dict(zip(GRID, values))) for values in itertools.product(*GRID.values())])
    for params in points:
        asks = asked_back(params)
        print(json.dumps({**{k: getattr(params, k) for k in GRID},
                          "cost": cost(asks),
                          "vague_asked_back": f"{sum(bool(asks[r['id']]) for r in rows if r['want'] == 'CLARIFY')}"
                                              f"/{sum(r['want'] == 'CLARIFY' for r in rows)}",
                          "others_asked_back": [r["id"] for r in rows if r["want"] == "other" and asks[r["id"]]],
                          "qasper_collection_asked_back":
                              f"{sum(bool(asks[r['id']]) for r in rows if r['want'] == 'scope')}"
                              f"/{sum(r['want'] == 'scope' for r in rows)}"}))
    if args.params:
        asks = asked_back(points[0])
        for r in rows:
            print(r["set"], r["id"], r["want"], "->", asks[r["id"]])
        # Papers per question, to read what the evidence said.
        for r in rows:
            ranked, relevant, _, _ = (calls.get(r["question"]) or [([], None, False, [])])[-1]
            for what, listed in (("answering", ranked), ("relevant", relevant)):
                print(r["id"], what, [(round(a, 3), s.document_title[:30], q[:70]) for a, s, q in (listed or [])[:6]])


if __name__ == "__main__":
    main()
