"""Is the answering sentence in the local auditor's candidate pool, and where does the
selection put it? Per devbench split, over the answerable questions.

    nice .venv/bin/python bench/sentence_pool.py --var var/bench-blind --collection blind --split calibration
    nice .venv/bin/python bench/sentence_pool.py ... --show     # one line per evidence span

Each answerable question is run through the agentic loop with the local roles (retrieval
memoised, one thread), and each of its required evidence spans is followed down the funnel:

- chunks: a chunk the run retrieved (every pass) holds it (agent.benchmark.span_in_text);
- pool: a candidate sentence of those chunks holds it (agent.local.candidates, before the
  answer-type and anchor gates; a sentence holds a span as in bench/calibrate_selection.py);
- ranked: a sentence the gates let through holds it (LocalAuditor.rank_sentences);
- rank: the best rank of such a sentence over the plan's facts (1 = the selection's first);
- answer: a sentence of the final answer holds it.

A question is "answered with gold" when a sentence of its answer holds one of its spans.
Uses the database and index of bench/devbench.py (`--var`, `--collection`), ingesting nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import _devbench_common as common
from calibrate_selection import holds_span

STAGES = ("chunks", "pool", "ranked", "top1", "top2", "answer")


def follow(question: dict, result, ranked: list[list[tuple]], pool: list[str]) -> list[dict]:
    """Per evidence span of the question: how far down the funnel it got."""
    from agent import benchmark as bm

    texts = [s.text for s in result.sources]
    answer = [s.text for s in result.answer.sentences]
    rows = []
    for span in question["required_evidence_spans"]:
        ranks = [i for fact in ranked for i, (quote, *_) in enumerate(fact, 1) if holds_span(quote, [span])]
        rank = min(ranks, default=None)
        rows.append(
            {
                "chunks": bm.spans_covered([span], texts) > 0,
                "pool": any(holds_span(s, [span]) for s in pool),
                "ranked": rank is not None,
                "top1": rank == 1,
                "top2": rank is not None and rank <= 2,
                "answer": any(holds_span(s, [span]) for s in answer),
                "rank": rank,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench"))
    parser.add_argument("--collection", default="devbench")
    parser.add_argument("--split", default="calibration", choices=["calibration", "test", "both"])
    parser.add_argument("--config", default="agentic")
    parser.add_argument("--pool", type=int, default=None, help="override RunConfig.pool")
    parser.add_argument("--sentence-pool", type=int, default=None, help="override RunConfig.sentence_pool")
    parser.add_argument(
        "--no-pointers",
        action="store_true",
        help="AuditorParams.pointers_answer=False: a sentence that points elsewhere cannot answer",
    )
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    common.django_setup(Path(args.var))

    from devbench import _MemoRetriever as MemoRetriever

    from agent.configs import build_roles, get_config
    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.local.candidates import candidates, plan_facts
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    collection = Collection.objects.get(slug=args.collection)
    ready = {
        n.removesuffix(".pdf")
        for n in collection.documents.filter(status="ready").values_list("original_name", flat=True)
    }
    cfg = get_config(args.config)
    overrides = {"pool": args.pool, "sentence_pool": args.sentence_pool}
    cfg = replace(cfg, **{name: v for name, v in overrides.items() if v is not None})
    retriever = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    params = replace(AuditorParams(), pointers_answer=not args.no_pointers)
    # The portal's embedder: sentence vectors from the EmbeddingCache table the index build filled.
    embed = portal_embed()
    splits = ["calibration", "test"] if args.split == "both" else [args.split]
    every = [
        q
        for q in common.with_splits(common.load_questions())
        if set(q["expected_doc_ids"]) <= ready
        and q["expected_behavior"] == "ANSWER"
        and q["required_evidence_spans"]
    ]
    # Warm the models and the index, so the first question's latency is not the load time.
    AgentLoop(cfg, build_roles(cfg, "local"), retriever, concurrent=False).run("warm up")
    report = {}
    for split in splits:
        questions = [q for q in every if q["split"] == split]
        spans: Counter = Counter()
        answered_gold = answered = 0
        latencies = []
        for q in questions:
            roles = build_roles(cfg, "local", embed=embed)
            roles.auditor = LocalAuditor(embed, params=params)
            started = time.perf_counter()
            result = AgentLoop(cfg, roles, retriever, concurrent=False).run(q["question"])
            latencies.append((time.perf_counter() - started) * 1000)
            ranked = roles.auditor.rank_sentences(q["question"], result.plan, result.sources)
            pool = [
                c.quote
                for c in candidates(
                    plan_facts(q["question"], result.plan), result.plan.premise, result.sources
                )
            ]
            rows = follow(q, result, ranked, pool)
            for row in rows:
                spans["spans"] += 1
                spans.update(stage for stage in STAGES if row[stage])
            got = any(row["answer"] for row in rows)
            answered += bool(result.answer.sentences)
            answered_gold += got
            if args.show:
                marks = " ".join(
                    "".join("x" if row[s] else "." for s in STAGES) + f"@{row['rank']}" for row in rows
                )
                print(
                    f"{split:11} {q['question_id']} {result.answer.outcome.value:13} gold={int(got)} {marks}",
                    file=sys.stderr,
                    flush=True,
                )
        report[split] = {
            "questions": len(questions),
            "answered": answered,
            "answered_with_gold": answered_gold,
            "spans": {stage: f"{spans[stage]}/{spans['spans']}" for stage in STAGES},
            "loop_p50_ms": round(statistics.median(latencies)) if latencies else None,
        }
    print(json.dumps({"config": cfg.as_dict(), **report}, indent=1))


if __name__ == "__main__":
    main()
