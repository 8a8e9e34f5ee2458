"""Why an answer moved between two ingests: each audit's sources and each need's best candidates.

    .venv/bin/python bench/selection_trace.py --var var/bench-blind --questions bench/blind3/questions.jsonl \
        --ids E16,E19 --out /tmp/trace.json

Runs the questions (config `agentic`, local backend) on the collection "blind" of --var and
records, at every audit, the sources in order (each as paper#ordinal:sha256 of its text, which
compare across ingests where chunk ids do not) and, per need, the best candidates with
P(answers) and their selection features (agent.local.auditor.LocalAuditor.rank_sentences,
read-only: the audit itself is the auditor's own). Run it on two var folders and compare: a
feature that moved while the sentence stayed the same says which statistic moved
(docs/benchmarks.md, "Clean text under re-ingest (stop 28)").
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import _devbench_common as common


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--var", required=True)
    parser.add_argument("--questions", required=True, help="JSON lines with question_id and question")
    parser.add_argument("--ids", required=True, help="comma-separated question ids")
    parser.add_argument("--out", required=True)
    parser.add_argument("--top", type=int, default=8, help="candidates kept per need")
    args = parser.parse_args()
    common.django_setup(Path(args.var), fresh=False)
    from agent.local import auditor as local_auditor
    from agent.local.candidates import candidates, plan_facts
    from agent.local.selection import FEATURES
    from agent.services import run_create, run_execute
    from knowledge.models import Chunk, Collection

    collection = Collection.objects.get(slug="blind")
    names: dict[int, str] = {}

    def ident(pk: int) -> str:
        if pk not in names:
            c = Chunk.objects.select_related("document").filter(pk=pk).first()
            names[pk] = (f"{c.document.original_name[:12]}#{c.ordinal}:{hashlib.sha256(c.text.encode()).hexdigest()[:6]}"
                         if c else f"?{pk}")
        return names[pk]

    audits: list[dict] = []
    audit = local_auditor.LocalAuditor.audit

    def recording_audit(self, question, plan, sources, *, can_retry):  # type: ignore[no-untyped-def]
        result = audit(self, question, plan, sources, can_retry=can_retry)
        ranked = self.rank_sentences(question, plan, sources)
        audits.append({
            "verdict": result.verdict.value,
            "candidates": len(candidates(plan_facts(question, plan), plan.premise, sources)),
            "sources": [f"{i}:{ident(s.chunk_id)}{' pool' if s.pool else ''}" for i, s in enumerate(sources)],
            "needs": [[{"quote": quote[:160], "chunk": ident(chunk_id), "p": round(p, 4),
                        "x": {n: round(float(v), 3) for n, v in zip(FEATURES, x, strict=True)}}
                       for quote, chunk_id, p, x in need[: args.top]] for need in ranked],
        })
        return result

    local_auditor.LocalAuditor.audit = recording_audit
    wanted = args.ids.split(",")
    out = {}
    for line in Path(args.questions).read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if q["question_id"] not in wanted:
            continue
        audits.clear()
        run = run_create(collection=collection, user=collection.created_by, question=q["question"],
                         config_name="agentic", enqueue=False)
        run_execute(run_id=run.pk)
        run.refresh_from_db()
        out[q["question_id"]] = {"outcome": run.outcome, "answer": run.answer, "audits": list(audits)}
        print(q["question_id"], run.outcome, (run.answer or "")[:200], file=sys.stderr)
    Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
