"""What the in-paper need search (agent.local.need_search, RunConfig.need_search) would add to
the chunks a run reads, before any audit: per answerable question of one split, its plan and
first retrieval (the loop's own, with the pools), each need's paper and search, and whether
the gold evidence spans are in a chunk read without the search, or in the search's top k, for
the chunk-level (fused, retrieve_within) and the sentence-level search (retrieve_sentences_within).

    nice .venv/bin/python bench/need_search.py --var var/bench-blind --split calibration
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import _devbench_common as common

DEPTHS = (1, 2, 3, 5, 10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="calibration", choices=("calibration", "test"))
    parser.add_argument("--sets", default="qasper,in_domain,devbench,blind2,blind3,blind")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from refusals import _holds, split_questions

    from agent.configs import build_roles, get_config
    from agent.local.candidates import plan_facts
    from agent.local.need_search import need_searches
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    cfg = get_config("agentic")
    collection = Collection.objects.get(slug=args.collection)
    questions = split_questions(collection, args.sets.split(","), args.split)
    questions = [q for q in questions if q["expected_behavior"] == "ANSWER" and q.get("required_evidence_spans")]
    retriever = CollectionRetriever(collection, mode=cfg.retrieval_mode)
    roles = build_roles(cfg, "local", embed=portal_embed())
    total = base = 0
    gained = {(kind, k): 0 for kind in ("chunk", "sentence") for k in DEPTHS}
    added = {(kind, k): 0 for kind in ("chunk", "sentence") for k in DEPTHS}
    searches_per_question: list[int] = []
    costs: dict[str, list[float]] = {"chunk": [], "sentence": []}
    for q in questions:
        loop = AgentLoop(cfg, roles, retriever, concurrent=False)
        plan = roles.planner.plan(q["question"])
        sources = loop._retrieve(list(plan.sub_queries), 0, deep=True, premises=plan.premises)
        own = [s for s in sources if not s.premise_search]
        have = {s.chunk_id for s in own}
        searches = need_searches(plan_facts(q["question"], plan), own, anchor_min=roles.auditor.params.anchor_min)
        searches_per_question.append(len(searches))
        found: dict[str, list] = {"chunk": [], "sentence": []}
        for query, documents in searches:
            for kind, search in (("chunk", retriever.retrieve_within), ("sentence", retriever.retrieve_sentences_within)):
                started = time.perf_counter()
                hits = search(query, k=30, document_ids=documents)
                costs[kind].append((time.perf_counter() - started) * 1000)
                found[kind].append(hits)
        spans = q["required_evidence_spans"]
        read = [any(_holds(span, s.text) for s in own) for span in spans]
        total += len(spans)
        base += sum(read)
        notes = []
        for kind, lists in found.items():
            for k in DEPTHS:
                extra = {h.chunk_id: h for hits in lists for h in hits[:k] if h.chunk_id not in have}
                added[(kind, k)] += len(extra)
                new = sum(not r and any(_holds(span, h.text) for h in extra.values()) for span, r in zip(spans, read))
                gained[(kind, k)] += new
                if new and k == 5:
                    notes.append(f"{kind}+{new}")
        for span, r in zip(spans, read):
            if not r and searches:
                at = {kind: min((n for hits in lists for n, h in enumerate(hits, 1) if _holds(span, h.text)),
                                default=None) for kind, lists in found.items()}
                notes.append(f"unread span at {at}")
        print(q["question_id"], f"read {sum(read)}/{len(spans)}",
              [(query[:60], documents) for query, documents in searches], " ".join(notes), flush=True)
    n = len(questions)
    print(f"\n{n} answerable questions, {total} gold spans, read without the search {base}")
    print(f"searches per question: mean {sum(searches_per_question) / max(n, 1):.2f}, "
          f"questions with none {searches_per_question.count(0)}")
    for kind in ("chunk", "sentence"):
        if costs[kind]:
            print(f"{kind}: p50 {statistics.median(costs[kind]):.0f} ms per search")
        for k in DEPTHS:
            print(f"  {kind} top {k}: spans read {base} -> {base + gained[(kind, k)]}, "
                  f"new chunks {added[(kind, k)]} ({added[(kind, k)] / max(n, 1):.1f} per question)")


if __name__ == "__main__":
    main()
