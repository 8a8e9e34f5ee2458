"""Is the answering sentence in the local auditor's candidate pool, and where does the
selection put it? Per split, over the answerable questions of every labelled set with
verbatim evidence spans (devbench, the QASPER-style and the in-domain questions:
bench/calibrate_selection.py's SETS and their splits; a QASPER-style question asked of a
collection holding only its paper), per set and all sets together.

    nice .venv/bin/python bench/sentence_pool.py --var var/bench-blind --collection blind --split calibration
    nice .venv/bin/python bench/sentence_pool.py ... --show     # one line per question
    nice .venv/bin/python bench/sentence_pool.py ... --sets devbench    # only that set (comma-separated)
    nice .venv/bin/python bench/sentence_pool.py ... --params '{"selection_bias": -6.2}'  # AuditorParams overrides
    nice .venv/bin/python bench/sentence_pool.py ... --variants 0:0:1,15:0:1,15:5:0
        # pool:sentence_pool:pointers_answer[:heads[:neighbours]] (RunConfig.pool,
        # RunConfig.sentence_pool, AuditorParams.pointers_answer, RunConfig.heads,
        # RunConfig.neighbours), one JSON line per variant and split

Each answerable question is run through the agentic loop with the local roles (retrieval
memoised, one thread), and each of its required evidence spans is followed down the funnel:

- chunks: a chunk the run retrieved (every pass) holds it (agent.benchmark.span_in_text);
- pool: a candidate sentence of those chunks holds it (agent.local.candidates, before the
  answer-type and anchor gates; a sentence holds a span as in bench/calibrate_selection.py);
- ranked: a sentence the gates let through holds it (LocalAuditor.rank_sentences, with no
  floor on P(answers));
- rank: the best rank of such a sentence over the plan's facts (1 = the selection's first);
- answer: a sentence of the final answer (ANSWER or PARTIAL) holds it.

A question is "answered with gold" when a sentence of its answer holds one of its spans.
Every question of the split (unanswerable, out-of-scope and false-premise ones too) is
counted by set:expected behaviour -> outcome, with the loop's p50 latency (one thread, a warm process).
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
from calibrate_selection import SETS, Retrievers, holds_span, labelled_questions

STAGES = ("chunks", "pool", "ranked", "top1", "top2", "answer")


def follow(question: dict, result, ranked: list[list[tuple]], pool: list[str]) -> list[dict]:
    """Per evidence span of the question: how far down the funnel it got."""
    from agent import benchmark as bm

    texts = [s.text for s in result.sources]
    # A refusal's sentences are the closest evidence it shows, not an answer.
    answered = result.answer.outcome.value in ("ANSWER", "PARTIAL")
    answer = [s.text for s in result.answer.sentences] if answered else []
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


def _variant(text: str) -> dict:
    """ "pool:sentence_pool:pointers[:heads[:neighbours]]" (e.g. "15:5:0", "0:5:0:3:1") as
    overrides of the run and the auditor (heads, neighbours: 0 when left out)."""
    pool, sentence_pool, pointers, heads, neighbours = ([int(v) for v in text.split(":")] + [0, 0])[:5]
    return {"pool": pool, "sentence_pool": sentence_pool, "pointers_answer": bool(pointers), "heads": heads,
            "neighbours": neighbours}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench"))
    parser.add_argument("--collection", default="devbench")
    parser.add_argument("--split", default="calibration", choices=["calibration", "test", "both"])
    parser.add_argument("--config", default="agentic")
    parser.add_argument(
        "--variants",
        default="",
        help="comma-separated pool:sentence_pool:pointers_answer[:heads[:neighbours]], e.g. 0:0:1,0:5:0:3:1 "
        "(default: the config's own)",
    )
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated question sets")
    parser.add_argument("--params", default="", help='AuditorParams fields to override, as JSON')
    args = parser.parse_args()
    common.django_setup(Path(args.var))

    from agent.configs import build_roles, get_config
    from agent.local.auditor import AuditorParams
    from agent.loop import AgentLoop
    from agent.retrieval import portal_embed
    from knowledge.models import Collection

    collection = Collection.objects.get(slug=args.collection)
    ready = {
        n.removesuffix(".pdf")
        for n in collection.documents.filter(status="ready").values_list("original_name", flat=True)
    }
    base = get_config(args.config)
    retriever_for = Retrievers(collection, base.retrieval_mode)
    # The portal's embedder: sentence vectors from the EmbeddingCache table the index build filled.
    embed = portal_embed()
    splits = ["calibration", "test"] if args.split == "both" else [args.split]
    sets = [n for n in SETS if n in args.sets.split(",")]
    every = labelled_questions(ready, sets)
    overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.params or "{}").items()}
    variants = [_variant(v) for v in args.variants.split(",") if v] or [
        {
            "pool": base.pool,
            "sentence_pool": base.sentence_pool,
            "pointers_answer": AuditorParams().pointers_answer,
            "heads": base.heads,
            "neighbours": base.neighbours,
        }
    ]
    # Warm the models and the index, so the first question's latency is not the load time.
    AgentLoop(base, build_roles(base, "local", embed=embed), retriever_for.whole, concurrent=False).run("warm up")
    for variant in variants:
        cfg = replace(base, pool=variant["pool"], sentence_pool=variant["sentence_pool"], heads=variant["heads"],
                      neighbours=variant["neighbours"])
        params = replace(AuditorParams(), pointers_answer=variant["pointers_answer"], **overrides)
        for split in splits:
            per_set = {
                name: _measure([q for q in every if q["split"] == split and q["set"] == name], cfg, params,
                               retriever_for, embed, show=args.show)
                for name in sets
            }
            print(json.dumps({**variant, "split": split, "params": args.params, "all": _total(per_set.values()),
                              **{name: _summary(m) for name, m in per_set.items()}}), flush=True)


def _summary(m: dict) -> dict:
    """One set's funnel as printed: each stage as found/spans, the outcomes, the p50."""
    spans = m["spans"]
    return {
        "answered_with_gold": f"{m['answered_with_gold']}/{m['answerable']}",
        "spans": {stage: f"{spans[stage]}/{spans['spans']}" for stage in STAGES},
        "outcomes": dict(sorted(m["outcomes"].items())),
        "loop_p50_ms": round(statistics.median(m["latencies"])) if m["latencies"] else None,
    }


def _total(measures) -> dict:
    """The sets' funnels added up."""
    total = {"answered_with_gold": 0, "answerable": 0, "spans": Counter(), "outcomes": Counter(), "latencies": []}
    for m in measures:
        for key in ("answered_with_gold", "answerable", "spans", "outcomes", "latencies"):
            total[key] += m[key]
    return _summary(total)


def _measure(questions: list[dict], cfg, params, retriever_for, embed, *, show: bool) -> dict:
    """The funnel over the answerable questions (span counts per stage), and every
    question's outcome."""
    from agent.configs import build_roles
    from agent.local.auditor import LocalAuditor
    from agent.local.candidates import candidates, plan_facts
    from agent.loop import AgentLoop

    spans: Counter = Counter()
    outcomes: Counter = Counter()
    answered_gold = answerable = 0
    latencies = []
    for q in questions:
        roles = build_roles(cfg, "local", embed=embed)
        roles.auditor = LocalAuditor(embed, params=params)
        started = time.perf_counter()
        result = AgentLoop(cfg, roles, retriever_for(q), concurrent=False).run(q["question"])
        latencies.append((time.perf_counter() - started) * 1000)
        outcome = result.answer.outcome.value
        outcomes[f"{q['set']}:{q['expected_behavior']}->{outcome}"] += 1
        if q["expected_behavior"] != "ANSWER" or not q.get("required_evidence_spans"):
            if show:
                print(
                    f"{q['split']:11} {q['question_id']} {q['expected_behavior']:7} {outcome}",
                    file=sys.stderr,
                )
            continue
        # The selection's order of every candidate the gates let through (no probability floor).
        every = LocalAuditor(embed, params=replace(params, answer_partial_min=0.0))
        ranked = every.rank_sentences(q["question"], result.plan, result.sources)
        facts = plan_facts(q["question"], result.plan)
        pool = [c.quote for c in candidates(facts, result.plan.premise, result.sources)]
        rows = follow(q, result, ranked, pool)
        answerable += 1
        for row in rows:
            spans["spans"] += 1
            spans.update(stage for stage in STAGES if row[stage])
        got = any(row["answer"] for row in rows)
        answered_gold += got
        if show:
            marks = " ".join(
                "".join("x" if row[s] else "." for s in STAGES) + f"@{row['rank']}" for row in rows
            )
            print(
                f"{q['split']:11} {q['question_id']} ANSWER  {outcome:13} gold={int(got)} {marks}",
                file=sys.stderr,
            )
    return {"answered_with_gold": answered_gold, "answerable": answerable, "spans": spans, "outcomes": outcomes,
            "latencies": latencies}


if __name__ == "__main__":
    main()
