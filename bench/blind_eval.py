"""Blind evaluation: the questions of bench/blind/questions.jsonl (or bench/blind2, --questions),
written without looking at devbench or the agent's rules, answered by chosen configurations with the
local backend.

    .venv/bin/python bench/blind_eval.py                          # agentic and hybrid, fresh ingest
    .venv/bin/python bench/blind_eval.py --configs agentic --keep # reuse var/bench-blind's index
    .venv/bin/python bench/blind_eval.py --out /tmp/blind.json
    .venv/bin/python bench/blind_eval.py --keep --questions bench/blind2/questions.jsonl --split calibration

A set whose questions carry a `split` (bench/blind2) can be asked one half at a time: fit on
`--split calibration`, report on `--split test`. With `--split all` every question is asked and the
figures are printed for the whole set and for each split.

For reporting only: never tune a threshold, prompt or rule on these questions (bench/blind/README.md).

The papers go into a fresh collection through the portal's own pipeline and the questions become
a benchmark set (bench/_devbench_common.py), each question x configuration an ordinary Run
answered in-process (agent.benchmark.service), exactly as `manage.py benchmark --in-process`
does. Writes a JSON with each run's outcome, answer, citations (document, page, quote) and
latency, and prints per configuration: outcomes per category, answerable questions refused,
out-of-scope questions answered, false premises corrected (FALSE_PREMISE), clarifications given
to vague questions, evidence hits and latency p50.

A vague question expects CLARIFY, which the benchmark format has no behaviour for: it is
imported as "not answerable" (REFUSE_OUT_OF_SCOPE) and scored here against its own
expected_outcome, never by the report's refusal figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from difflib import SequenceMatcher
from pathlib import Path

import _devbench_common as common

QUESTIONS = Path(__file__).resolve().parent / "blind" / "questions.jsonl"
BEHAVIOR = {"ANSWER": "ANSWER", "FALSE_PREMISE": "DEBUNK_FALSE_PREMISE", "REFUSAL": "REFUSE_OUT_OF_SCOPE",
            "CLARIFY": "REFUSE_OUT_OF_SCOPE"}
ANSWERED = ("ANSWER", "PARTIAL")
# A cited quote "hits" a gold span when they share this many normalised characters in a row
# (about six words), or the whole of the shorter one when it is shorter than that.
HIT_MIN_CHARS = 30


def load_questions(path: Path = QUESTIONS, split: str = "all") -> list[dict]:
    """The set's questions; with a split other than "all", only those of that split (the set must have splits)."""
    questions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if split == "all":
        return questions
    if any("split" not in q for q in questions):
        sys.exit(f"{path} has questions without a split: use --split all")
    return [q for q in questions if q["split"] == split]


def as_benchmark(questions: list[dict]) -> list[dict]:
    """The blind questions in the benchmark format agent.benchmark.parse_benchmark reads."""
    out = []
    for q in questions:
        behavior = BEHAVIOR[q["expected_outcome"]]
        out.append({
            "question_id": q["question_id"], "question": q["question"], "category": q["category"],
            "answerable": behavior == "ANSWER", "expected_behavior": behavior,
            "expected_doc_ids": [Path(d).stem for d in q["documents"]],
            "expected_pages": [{"doc_id": Path(e["document"]).stem, "page": e["page"]} for e in q["evidence"]],
            "required_evidence_spans": [e["text"] for e in q["evidence"]],
            "reference_answer": q["gold_answer"], "expected_outcome": q["expected_outcome"],
        })
    return out


def overlaps(quote: str, span: str) -> bool:
    """Whether a cited quote and a gold span share a long enough run of text (after
    agent.benchmark.normalise, so hyphenation, spacing and ligatures do not matter)."""
    from agent import benchmark as bm

    a, b = bm.normalise(quote), bm.normalise(span)
    if not a or not b:
        return False
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size >= min(HIT_MIN_CHARS, len(a), len(b))


def summarise(config: str, rows: list[dict], split: str = "all") -> dict:
    """The figures the brief asks for, from the per-run rows of one configuration (and one split)."""
    from agent import benchmark as bm

    def count(pred, among) -> str:
        members = [r for r in rows if among(r)]
        return f"{sum(pred(r) for r in members)}/{len(members)}"

    per_category: dict[str, dict[str, int]] = {}
    for r in rows:
        per_category.setdefault(r["category"], Counter())[r["outcome"]] += 1
    latencies = [r["latency_ms"] for r in rows if r["latency_ms"] is not None]
    p50 = bm.percentile(latencies, 50)
    return {
        "config": config, "split": split, "questions": len(rows),
        "outcomes per category": {c: dict(n) for c, n in sorted(per_category.items())},
        "expected outcome met": count(lambda r: r["outcome"] == r["expected_outcome"], lambda r: True),
        "answerable refused": count(lambda r: r["outcome"] == "REFUSAL", lambda r: r["expected_outcome"] == "ANSWER"),
        "answerable answered": count(lambda r: r["outcome"] in ANSWERED, lambda r: r["expected_outcome"] == "ANSWER"),
        "out-of-scope answered": count(lambda r: r["outcome"] in ANSWERED, lambda r: r["category"] == "out_of_scope"),
        "false premises corrected": count(lambda r: r["outcome"] == "FALSE_PREMISE",
                                          lambda r: r["category"] == "false_premise"),
        "clarify given": count(lambda r: r["outcome"] == "CLARIFY", lambda r: r["category"] == "vague"),
        "evidence hit (quote)": count(lambda r: r["evidence_hit_quote"], lambda r: r["has_evidence"]),
        "evidence hit (cited chunk)": count(lambda r: r["evidence_hit_chunk"], lambda r: r["has_evidence"]),
        "failed": count(lambda r: r["outcome"] == bm.OUT_FAILED, lambda r: True),
        "latency p50 ms": None if p50 is None else round(p50),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--configs", default="agentic,hybrid", help="comma-separated configuration names")
    parser.add_argument("--questions", default=str(QUESTIONS))
    parser.add_argument("--split", default="all", choices=("calibration", "test", "all"),
                        help="ask only one half of a set with splits (bench/blind2): fit on calibration, report on test")
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"), help="its database and index")
    parser.add_argument("--keep", action="store_true", help="reuse the database and index of an earlier run")
    parser.add_argument("--collection", default="blind",
                        help="its collection's slug (with --var var/bench --keep --collection devbench: reuse "
                             "bench/devbench.py's ingested papers)")
    parser.add_argument("--out", help="results JSON (default: VAR/blind-results-<time>.json)")
    parser.add_argument("--only-ready", action="store_true",
                        help="with --keep: ingest nothing, ask only the questions whose papers are ready "
                             "(a partial measurement; the counts say how many were asked)")
    args = parser.parse_args()
    questions = load_questions(Path(args.questions), args.split)
    by_id = {q["question_id"]: q for q in questions}
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]

    var = Path(args.var)
    common.django_setup(var, fresh=not args.keep)
    from agent import benchmark as bm
    from agent.benchmark import service as sb
    from agent.models import Citation, Run
    from agent.services import run_create, run_execute

    started = time.perf_counter()
    if args.only_ready:
        from knowledge.models import Collection

        collection = Collection.objects.get(slug=args.collection)
        user = collection.created_by
        ready = set(collection.documents.filter(status="ready").values_list("original_name", flat=True))
        questions = [q for q in questions if set(q["documents"]) <= ready]
        print(f"{len(ready)} papers ready, {len(questions)} questions asked", file=sys.stderr)
    else:
        user, collection = common.collection_with_papers(common.paper_stems(), slug=args.collection)
    ingest_s = time.perf_counter() - started
    text = json.dumps(as_benchmark(questions))
    name = f"blind-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
    bset = common.benchmark_set(collection, user, json.loads(text), name=name, declare_splits=False)
    # Load models and the index once, so the first question's latency is not the loading time.
    run_execute(run_id=run_create(collection=collection, user=user, question="warm up", config_name=configs[0],
                                  enqueue=False).pk)
    label, runs = sb.benchmark_start(benchmark_set=bset, user=user, configs=configs, enqueue=False)
    order = {c: i for i, c in enumerate(configs)}
    # Question by question, every configuration in turn: stopped half way, the finished runs
    # still compare the configurations on the same questions.
    runs = sorted(runs, key=lambda r: (r.benchmark_question.question_id, order[r.config_name]))
    for n, run in enumerate(runs, 1):
        sb.run_execute_in_process(run)
        print(f"[{n}/{len(runs)}] {run.config_name} {run.benchmark_question.question_id}", file=sys.stderr, flush=True)

    done = Run.objects.filter(pk__in=[r.pk for r in runs])
    records = {rec.run_id: rec for rec in sb.run_records(runs=done)}
    cites: dict[int, list[Citation]] = {}
    for c in Citation.objects.filter(run__in=done).select_related("chunk__document"):
        cites.setdefault(c.run_id, []).append(c)
    rows = []
    for run in done.select_related("benchmark_question"):
        q = by_id[run.benchmark_question.question_id]
        rec = records.get(run.pk)
        spans = [e["text"] for e in q["evidence"]]
        mine = cites.get(run.pk, [])
        rows.append({
            "config": run.config_name, "question_id": q["question_id"], "category": q["category"],
            "split": q.get("split"),
            "question": q["question"], "expected_outcome": q["expected_outcome"],
            "outcome": rec.outcome if rec else bm.OUT_FAILED, "status": run.status, "answer": run.answer,
            "citations": [{"marker": c.marker, "document": c.chunk.document.original_name if c.chunk else c.document_title,
                           "page": c.page, "quote": c.quote, "verified": c.verified} for c in mine],
            "latency_ms": run.latency_ms,
            "has_evidence": bool(spans),
            "evidence_hit_quote": any(overlaps(c.quote, s) for c in mine if c.quote for s in spans),
            "evidence_hit_chunk": bool(rec) and any(bm.citation_supports(c, rec.question) for c in rec.citations),
        })
    rows.sort(key=lambda r: (r["question_id"], order[r["config"]]))
    splits = sorted({r["split"] for r in rows if r["split"]}) if args.split == "all" else []
    summaries = [summarise(c, [r for r in rows if r["config"] == c], args.split) for c in configs]
    summaries += [summarise(c, [r for r in rows if r["config"] == c and r["split"] == s], s)
                  for s in splits for c in configs]
    out = Path(args.out) if args.out else var / f"blind-results-{label}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"label": label, "configs": configs, "ingest_s": round(ingest_s),
                               "summary": summaries, "runs": rows}, indent=1, ensure_ascii=False))
    for s in summaries:
        print(json.dumps(s, ensure_ascii=False))
    print(f"wrote {out} ({len(rows)} runs; answering took {time.perf_counter() - started - ingest_s:.0f} s)")


if __name__ == "__main__":
    main()
