"""Multi-part and multi-hop questions, per part: does each part's sub-query retrieve its
evidence, does the selection put a gold sentence first, does the answer hold every part?

    nice .venv/bin/python bench/multipart.py --var var/bench-blind --collection blind --split calibration
    ... --split test --show        # one line per question, the plan's facts and sub-queries too
    ... --sets multipart           # only bench/multipart_questions.jsonl (multipart, devbench, blind2, blind3)
    ... --trace MP02,D03           # per fact: P(answered), best candidates, each gold span's rank

The questions: bench/multipart_questions.jsonl (each part's evidence spans in `part_spans`)
and devbench's answerable questions that ask two things (category answerable_multi_hop, or
a second asking clause ", and what/how/which ...", or a comparison), and the multi_part
questions of bench/blind2 and bench/blind3 (each evidence span a part); each with its split.
Run through the agentic loop with the local roles (retrieval memoised, one thread). Per
evidence span (bench/sentence_pool.py's funnel, plus where the first pass found it):

- q1: the top k of the plan's first sub-query holds it; later: the top k of a later
  sub-query of the plan does (a part's own search);
- chunks: any chunk the run retrieved (every pass, the pool too); top1: the selection's
  first sentence of some fact holds it; answer: a sentence of the answer does.

A part (multipart set: its spans; devbench: each span is a part) counts at a stage when
one of its spans does. "all parts answered": every part in the answer; "partial noted":
PARTIAL with a missing-evidence note. Outcomes by question.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import _devbench_common as common
from sentence_pool import follow

STAGES = ("q1", "later", "chunks", "top1", "answer")
# A second question in one: ", and what ...", "; how ...", a comparison of two things.
_TWO_ASKS = re.compile(r",?\s+and\s+(?:\w+ly\s+)?(?:(?:in|on|at|for|from|with|by|to)\s+)?"
                       r"(?:what|how|which|who|why|when|where|is|are|was|were|did|does|do|can)\b|;\s"
                       r"|\b(?:compare|differ|versus|vs\.?)\b", re.IGNORECASE)


def load(sets: list[str], split: str, ready: set[str]) -> list[dict]:
    out: list[dict] = []
    if "multipart" in sets:
        path = common.ROOT / "bench" / "multipart_questions.jsonl"
        for line in path.open(encoding="utf-8"):
            q = json.loads(line) if line.strip() else None
            if q and q["split"] == split and q["paper"] in ready:
                out.append({**q, "set": "multipart"})
    if "devbench" in sets:
        for q in common.with_splits(common.load_questions()):
            if (q["split"] == split and q["expected_behavior"] == "ANSWER" and set(q["expected_doc_ids"]) <= ready
                    and (q["category"] == "answerable_multi_hop" or _TWO_ASKS.search(q["question"]))):
                out.append({**q, "set": "devbench", "part_spans": [[s] for s in q["required_evidence_spans"]]})
    for name in ("blind2", "blind3"):
        if name not in sets:
            continue
        for line in (common.ROOT / "bench" / name / "questions.jsonl").open(encoding="utf-8"):
            q = json.loads(line) if line.strip() else None
            if (q and q["category"] == "multi_part" and q.get("split") == split
                    and {d.removesuffix(".pdf") for d in q["documents"]} <= ready):
                spans = [e["text"] for e in q["evidence"]]
                out.append({**q, "set": name, "required_evidence_spans": spans, "part_spans": [[s] for s in spans]})
    return out


def _trace(q: dict, result, auditor, retriever, k: int) -> None:
    """Where each part is lost: per fact, P(answered) of its best candidate, its three best
    candidates and the rank of a candidate holding each gold span; per sub-query, the rank of
    each gold span's chunk in its top 3k."""
    from calibrate_selection import holds_span

    from agent import benchmark as bm
    from agent.local import sufficiency

    p = auditor.params
    spans = q["required_evidence_spans"]
    print(f"--- {q['question_id']} {q['question']}", file=sys.stderr)
    for sub in result.queries:
        hits = [h.text for h in retriever.retrieve(sub, k=3 * k)]
        ranks = [next((i for i, t in enumerate(hits, 1) if bm.spans_covered([s], [t]) > 0), None) for s in spans]
        print(f"  query {sub[:110]!r}: gold chunk ranks {ranks}", file=sys.stderr)
    ranked = auditor.rank_sentences(q["question"], result.plan, result.sources, need_features=p.need_features)
    audit = result.audit
    for n, (x, listed) in enumerate(ranked):
        need = sufficiency.probability(x, p.need_weights, p.need_bias) if x is not None else 0.0
        label = audit.facts[n].label.value if audit and n < len(audit.facts) else "-"
        gold = [next((i for i, (quote, *_) in enumerate(listed, 1) if holds_span(quote, [s])), None) for s in spans]
        fact = audit.facts[n].fact if audit and n < len(audit.facts) else "?"
        print(f"  fact {n + 1} {fact[:110]!r}: need {need:.2f} {label}; gold ranks {gold}", file=sys.stderr)
        for quote, _, answers, _ in listed[:3]:
            print(f"      {answers:.3f} {quote[:140]}", file=sys.stderr)
    for s in result.answer.sentences:
        print(f"  answer: {s.text[:160]}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="calibration", choices=("calibration", "test"))
    parser.add_argument("--config", default="agentic")
    parser.add_argument("--sets", default="multipart,devbench,blind2,blind3")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--trace", default="", help="comma-separated question ids: per fact, P(answered), its best "
                        "candidates and each gold span's rank (the other questions are skipped)")
    args = parser.parse_args()
    common.django_setup(Path(args.var))

    from devbench import _MemoRetriever as MemoRetriever

    from agent import benchmark as bm
    from agent.configs import build_roles, get_config
    from agent.local.auditor import LocalAuditor
    from agent.local.candidates import candidates, plan_facts
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    # The questions of the collection's ready papers, each run with memoised retrieval.
    cfg, embed = get_config(args.config), portal_embed()
    collection = Collection.objects.get(slug=args.collection)
    names = collection.documents.filter(status="ready").values_list("original_name", flat=True)
    questions = load(args.sets.split(","), args.split, {n.removesuffix(".pdf") for n in names})
    if args.trace:
        questions = [q for q in questions if q["question_id"] in args.trace.split(",")]
    retriever = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    tally: dict[str, Counter] = {}
    for q in questions:
        roles = build_roles(cfg, "local", embed=embed)
        result = AgentLoop(cfg, roles, retriever, concurrent=False).run(q["question"])
        outcome = result.answer.outcome.value
        every = LocalAuditor(embed, params=replace(roles.auditor.params, answer_partial_min=0.0))
        ranked = every.rank_sentences(q["question"], result.plan, result.sources)
        pool = [c.quote for c in candidates(plan_facts(q["question"], result.plan), result.plan.premise,
                                            result.sources)]
        rows = {s: r for s, r in zip(q["required_evidence_spans"], follow(q, result, ranked, pool), strict=True)}
        subs = list(result.plan.sub_queries)
        tops = [[h.text for h in retriever.retrieve(s, k=cfg.top_k)] for s in subs]
        for span, row in rows.items():
            row["q1"] = bool(tops) and bm.spans_covered([span], tops[0]) > 0
            row["later"] = any(bm.spans_covered([span], t) > 0 for t in tops[1:])
        c = tally.setdefault(q["set"], Counter())
        c["questions"] += 1
        c[f"outcome {outcome}"] += 1
        parts = [[rows[s] for s in spans] for spans in q["part_spans"]]
        c["parts"] += len(parts)
        for stage in STAGES:
            c[stage] += sum(any(r[stage] for r in part) for part in parts)
        held = all(any(r["answer"] for r in part) for part in parts)
        c["all parts answered"] += held
        c["partial noted"] += outcome == "PARTIAL" and bool(result.answer.missing_note)
        if args.show:
            marks = " ".join("".join("x" if any(r[s] for r in part) else "." for s in STAGES) for part in parts)
            print(f"{q['question_id']:5} {outcome:13} all={int(held)} {marks}", file=sys.stderr)
            print(f"      facts={result.plan.facts}\n      subs={subs}", file=sys.stderr)
            if result.answer.missing_note:
                print(f"      missing={result.answer.missing_note[:200]}", file=sys.stderr)
        if args.trace:
            _trace(q, result, every, retriever, cfg.top_k)
    out = {"split": args.split, "config": args.config}
    for name, c in tally.items():
        out[name] = {"questions": c["questions"], **{s: f"{c[s]}/{c['parts']}" for s in STAGES},
                     "all parts answered": f"{c['all parts answered']}/{c['questions']}",
                     "partial noted": c["partial noted"],
                     "outcomes": {k.removeprefix("outcome "): v for k, v in sorted(c.items()) if k.startswith("outcome")}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
