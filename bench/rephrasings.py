"""Clarify rephrasings answered: each rephrasing a CLARIFY run offers, asked back, before and
after it was limited to its paper.

    nice -n 10 .venv/bin/python bench/rephrasings.py --var var/bench-blind --split calibration
    nice -n 10 .venv/bin/python bench/rephrasings.py --var var/bench-blind --split test

The questions are bench/clarify.py's that may be asked back: the blind2 and blind3 vague ones
and the QASPER-style ones asked of the whole collection. Each is answered by the agentic
configuration; every rephrasing of a CLARIFY run is then asked twice:
- before: as the rephrasing read before stop 28 (the paper named by its title, `paper_name`
  without the text's short name), of the whole collection;
- after: as the run offers it (the text's short name), limited to its documents
  (Run.suggestion_documents), as the run page and the API ask it.
Counted per way: answered from its paper (ANSWER/PARTIAL, every citation in the paper's
documents), answered from another paper, refused, false premise, clarify. Each line is printed
to read against the paper.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import _devbench_common as common
import clarify as clarify_bench


def classify(run, documents: set[int]) -> str:
    if run.outcome in ("ANSWER", "PARTIAL"):
        cited = set(run.citations.exclude(chunk=None).values_list("chunk__document_id", flat=True))
        return "answered from its paper" if cited and cited <= documents else "answered from another paper"
    return {"REFUSAL": "refused", "FALSE_PREMISE": "false premise", "CLARIFY": "clarify"}.get(run.outcome, run.outcome)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="calibration", choices=("calibration", "test"))
    args = parser.parse_args()
    common.django_setup(Path(args.var), fresh=False)
    from agent.local.clarify import paper_name, rephrase, unresolved_referent
    from agent.services import run_create, run_execute
    from agent.types import Source
    from knowledge.models import Collection, Document

    collection = Collection.objects.get(slug=args.collection)

    def ask(question: str, documents=()):
        run = run_create(collection=collection, user=collection.created_by, question=question,
                         config_name="agentic", enqueue=False, documents=documents)
        run_execute(run_id=run.pk)
        run.refresh_from_db()
        return run

    rows = [r for r in clarify_bench.load(args.split)
            if r["set"] in ("blind2", "blind3", "qasper") and r["want"] in ("CLARIFY", "scope")]
    counts = {"before": Counter(), "after": Counter()}
    asked = 0
    for row in rows:
        run = ask(row["question"])
        print(row["set"], row["id"], run.outcome, row["question"], flush=True)
        if run.outcome != "CLARIFY":
            continue
        asked += 1
        for question, documents in run.suggested:
            if not documents:
                continue
            doc = Document.objects.get(pk=documents[0])
            titled = Source(chunk_id=0, document_id=doc.pk, document_title=doc.title, file_name=doc.original_name,
                            text="")
            old = rephrase(row["question"], unresolved_referent(row["question"]), paper_name(titled))
            for way, q, scope in (("before", old, ()), ("after", question, documents)):
                asked_run = ask(q, scope)
                what = classify(asked_run, set(documents))
                counts[way][what] += 1
                print(f"  {way:6} {what:28} {q} -> {asked_run.answer[:160]!r}", flush=True)
    print(f"\n{args.split}: {len(rows)} questions, {asked} asked back")
    for way, c in counts.items():
        print(way, dict(c), f"of {sum(c.values())}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
