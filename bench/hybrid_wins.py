"""Where the audited loop loses to the plain hybrid baseline: the answerable questions of one
split that `hybrid` answers quoting a gold span (or citing a chunk holding one) and `agentic`
does not (refused, PARTIAL, asked back, or another sentence chosen).

    nice .venv/bin/python bench/hybrid_wins.py --var var/bench-blind --split calibration
    ... --sets blind3 --ids E17      # one question, its whole trace
    ... --all                       # every answerable question, not only the losses

Both configurations run in-process on the same retriever (bench/refusals.py's sets: qasper
at collection scope, in_domain, devbench, blind2, blind3). For each loss it prints both
answers with each cited quote marked GOLD when it holds an evidence span, the agentic audit
(verdict, reason, premise and whether it was confirmed, each need's probability and its best
candidates with P(answers)), and where each of hybrid's cited sentences and each gold span
went in the agentic run (bench/refusals.py where_lost: not retrieved, not a candidate, gated
by which gate, or ranked with its P(answers) and the need probability it would give as the
need's best sentence). Read-only: nothing is tuned here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import _devbench_common as common


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="calibration", choices=("calibration", "test"))
    parser.add_argument("--sets", default="qasper,in_domain,devbench,blind2,blind3")
    parser.add_argument("--ids", default="", help="only these question ids (comma-separated)")
    parser.add_argument("--all", action="store_true", help="trace every answerable question")
    parser.add_argument("--out", default="", help="also write the per-question rows as JSON")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from devbench import _MemoRetriever as MemoRetriever
    from refusals import _holds, split_questions, where_lost

    from agent.configs import build_roles, get_config
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    collection = Collection.objects.get(slug=args.collection)
    questions = [q for q in split_questions(collection, args.sets.split(","), args.split)
                 if q["expected_behavior"] == "ANSWER" and q.get("required_evidence_spans")]
    if args.ids:
        questions = [q for q in questions if q["question_id"] in args.ids.split(",")]
    retriever = MemoRetriever(CollectionRetriever(collection, mode="rrf"))
    rows = []
    for q in questions:
        spans = q["required_evidence_spans"]
        results = {}
        for name in ("hybrid", "agentic"):
            cfg = get_config(name)
            roles = build_roles(cfg, "local", embed=portal_embed())
            results[name] = (AgentLoop(cfg, roles, retriever, concurrent=False).run(q["question"]), roles)
        marks = {}
        for name, (result, _) in results.items():
            by_chunk = {s.chunk_id: s for s in result.sources}
            quoted = any(_holds(span, c.quote) or _holds(c.quote, span) for c in result.answer.citations
                         if c.quote for span in spans)
            chunk = any(_holds(span, by_chunk[c.chunk_id].text) for c in result.answer.citations
                        if c.chunk_id in by_chunk for span in spans)
            marks[name] = (result.answer.outcome.value, quoted, chunk)
        h, a = marks["hybrid"], marks["agentic"]
        lost = (h[1] and not a[1]) or (h[2] and not a[2]) or (a[0] != "ANSWER" and (h[1] or h[2]))
        row = {"id": q["question_id"], "set": q.get("set", "devbench"), "question": q["question"],
               "hybrid": h, "agentic": a, "loss": lost}
        print(f"{row['set']} {q['question_id']} hybrid {h} agentic {a}{'  <<< LOSS' if lost else ''}", flush=True)
        if lost or args.all:
            agentic, roles = results["agentic"]
            hybrid = results["hybrid"][0]
            print(f"  Q: {q['question']}")
            for name, (result, _) in results.items():
                print(f"  {name} {result.answer.outcome.value}: {result.answer.text[:600]!r}")
                for c in result.answer.citations:
                    gold = any(_holds(span, c.quote) or _holds(c.quote, span) for span in spans)
                    print(f"    [{c.marker}]{' GOLD' if gold else ''} {c.quote[:150]!r}")
            audit = agentic.audit
            if audit is not None:
                print(f"  audit {audit.verdict.value} retries={agentic.retries}: {audit.reason[:200]}")
                print(f"  premise {agentic.plan.premise!r} confirmed={audit.premise.confirmed} "
                      f"contradicted={audit.premise.contradicted} support={audit.premise.support}")
                for f in audit.facts:
                    print(f"  need {f.fact[:80]!r} {f.label.value}: "
                          + " | ".join(f"{s.score:.3f} {s.quote[:80]!r}" for s in f.sentences))
            hybrid_quotes = [c.quote for c in hybrid.answer.citations if c.quote]
            for line in where_lost(q["question"], hybrid_quotes, agentic, roles.auditor, retriever, 5):
                print("  hybrid's" + line[1:])
            for line in where_lost(q["question"], spans, agentic, roles.auditor, retriever, 5):
                print("  gold's" + line[1:])
        rows.append(row)
    print(json.dumps({"split": args.split, "answerable": len(rows), "losses": [r["id"] for r in rows if r["loss"]]}))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
