"""Devbench: every configuration over ../shared/data/devbench with the local backend, one
compact table (the portal's full report is bench/benchmark_devbench.py).

    .venv/bin/python bench/devbench.py                 # full: the 24 held-out questions x 8 configurations
    .venv/bin/python bench/devbench.py --split calibration   # the 24 calibration questions
    .venv/bin/python bench/devbench.py --size small    # CI: 2 held-out questions per category, 3 configurations
    .venv/bin/python bench/devbench.py --configs agentic --show   # one configuration, per-question lines
    .venv/bin/python bench/devbench.py --calibrate     # grid over the auditor's parameters, calibration half only
    .venv/bin/python bench/devbench.py --calibrate-premise   # grid premise_rival_frame, calibration half only

Questions are split by agent.local.calibration (declared in code, by a hash of the question
id): thresholds are chosen on the "calibration" half only, figures are reported on "test".

Uses its own SQLite database and index under var/bench/ (built once from ../shared/data/papers
with the real ingestion pipeline, reused afterwards). The questions are imported once as a
benchmark set and each invocation is a benchmark run of it (agent.benchmark.service), answered
in-process one configuration at a time: models are warmed once, and each configuration starts
with a cold sentence-vector cache.

Every figure is agent.benchmark's, computed from the same RunRecords as the portal's
benchmark report (agent.benchmark.service.run_records): the outcome counts are its rates times
their denominators; citation precision, evidence recall, p50/p95 and LLM calls are its Metrics.
Since this script stopped keeping its own scorer (2026-11-29) these definitions changed:

- citation precision counts the citations of every run on a question with evidence (answerable
  or false premise), refusals included; citations given to out-of-scope questions are left out
  (the report counts them as hallucination). It used to count the citations of every
  non-refusal, out-of-scope ones included, which scored each as imprecise.
- evidence recall is required spans found / required spans, over all the runs of a
  configuration (not a mean of per-question shares), and a span counts when it is in any chunk
  the run retrieved (every retrieve step, not only the context handed to the generator).
- a span matches a chunk after agent.benchmark.normalise (letters and digits only, so
  hyphens, spaces and ligatures do not matter) and also when a chunk boundary cuts it
  (span_in_text); before, only lower case, de-hyphenation and collapsed whitespace.
- p50/p95 interpolate between ranks (numpy's default) instead of picking one run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from pathlib import Path

import _devbench_common as common

SMALL_CONFIGS = ["hybrid", "agentic_no_retry", "agentic"]


def _pick(questions: list[dict], size: str) -> list[dict]:
    """All questions, or the first two of each category (in the file's order)."""
    if size == "full":
        return questions
    per: dict[str, list[dict]] = {}
    for q in questions:
        per.setdefault(q["category"], []).append(q)
    return [q for cat in sorted(per) for q in per[cat][:2]]


def _count(rate: float | None, n: int) -> int:
    return round(rate * n) if rate is not None else 0


def _outcomes(config: str, records: list) -> dict:
    """The outcome counts of the table, read off agent.benchmark's rates and denominators."""
    from agent import benchmark as bm

    m = bm.group_metrics(config, "", records)
    oos = bm.group_metrics(config, bm.REFUSE, [r for r in records if r.question.expected_behavior == bm.REFUSE])
    refused = _count(m.wrongful_refusal, m.answerable_runs)
    return {
        "answered": m.answerable_runs - refused, "answerable": m.answerable_runs, "refused": refused,
        "oos_refused": _count(oos.refused, oos.runs), "oos": oos.runs,
        "debunked": _count(m.false_premise_debunked, m.false_premise_runs), "false_premises": m.false_premise_runs,
    }


def _row(config: str, records: list) -> dict:
    from agent import benchmark as bm

    m = bm.group_metrics(config, "", records)
    o = _outcomes(config, records)
    return {
        "config": config,
        "answerable answered": f"{o['answered']}/{o['answerable']}",
        "answerable refused": o["refused"],
        "out-of-scope refused": f"{o['oos_refused']}/{o['oos']}",
        "false premises debunked": f"{o['debunked']}/{o['false_premises']}",
        "citation precision": None if m.citation_precision is None else round(m.citation_precision, 3),
        "evidence recall": None if m.evidence_recall is None else round(m.evidence_recall, 3),
        "p50 ms": None if m.latency_p50_ms is None else round(m.latency_p50_ms),
        "p95 ms": None if m.latency_p95_ms is None else round(m.latency_p95_ms),
        "LLM calls/q": round(m.llm_calls / m.runs, 2) if m.runs else None,
    }


def _show(record, run) -> str:
    from agent import benchmark as bm

    q = record.question
    good = sum(bm.citation_supports(c, q) for c in record.citations)
    spans = q.required_evidence_spans
    covered = bm.spans_covered(spans, record.retrieved_texts)
    return (f"{record.config_name:16} {q.question_id} {q.category[:14]:14} {record.outcome:13} {run.verdict:22} "
            f"retries={run.retries} cit={good}/{len(record.citations)} rec={covered}/{len(spans)} {run.latency_ms}ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=["small", "full"], default="full")
    parser.add_argument("--configs", default="", help="comma-separated (default: all eight, or three with --size small)")
    parser.add_argument("--show", action="store_true", help="print one line per question")
    parser.add_argument("--calibrate", action="store_true",
                        help="grid anchor_min and premise_contradict_min of AuditorParams on the calibration half")
    parser.add_argument("--calibrate-premise", action="store_true",
                        help="grid premise_rival_frame of AuditorParams on the calibration half")
    parser.add_argument("--split", default="test", choices=["test", "calibration"],
                        help="test: the half no threshold was calibrated on")
    parser.add_argument("--only-ready", action="store_true",
                        help="ingest nothing: use the papers already in var/, and only the questions whose "
                             "expected papers are all there (the distractors are then fewer)")
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench"), help="folder of its database and index")
    parser.add_argument("--collection", default="devbench",
                        help="with --only-ready: the collection to answer over (e.g. 'blind', which "
                             "bench/blind_eval.py fills with the same 25 papers)")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    if args.only_ready:
        from knowledge.models import Collection

        collection = Collection.objects.get(slug=args.collection)
        user = collection.created_by
        ready = {n.removesuffix(".pdf") for n in
                 collection.documents.filter(status="ready").values_list("original_name", flat=True)}
        print(f"{len(ready)} papers ready: {', '.join(sorted(ready))}", file=sys.stderr)
    else:
        user, collection = common.collection_with_papers(common.paper_stems())
        ready = set(common.paper_stems())
    every = [q for q in common.with_splits(common.load_questions()) if set(q["expected_doc_ids"]) <= ready]
    if args.calibrate or args.calibrate_premise:
        grid = _PREMISE_GRID if args.calibrate_premise else _THRESHOLD_GRID
        _calibrate(collection, [q for q in every if q["split"] == "calibration"], grid)
        return
    questions = _pick([q for q in every if q["split"] == args.split], args.size)
    from agent.configs import CONFIG_NAMES

    configs = [c for c in args.configs.split(",") if c] or (list(CONFIG_NAMES) if args.size == "full" else SMALL_CONFIGS)
    from agent.benchmark import service as sb
    from agent.local import embed as local_embed
    from agent.models import Run
    from agent.services import run_create, run_execute

    bset = common.benchmark_set(collection, user, questions)
    print(f"split {args.split!r}: {len(questions)} questions", file=sys.stderr)
    # Warm up models and the index once, so the first configuration does not pay for loading.
    warm = run_create(collection=collection, user=user, question="warm up", config_name="agentic", enqueue=False)
    run_execute(run_id=warm.pk)
    _, runs = sb.benchmark_start(benchmark_set=bset, user=user, configs=configs, split=args.split, enqueue=False)
    rows = []
    for config in configs:
        # Each configuration starts with a cold sentence-vector cache: no one profits from
        # the sentences an earlier configuration embedded.
        local_embed.clear()
        mine = [r for r in runs if r.config_name == config]
        for run in mine:
            sb.run_execute_in_process(run)
        done = Run.objects.filter(pk__in=[r.pk for r in mine])
        records = sorted(sb.run_records(runs=done), key=lambda r: r.question.question_id)
        if args.show:
            by_id = done.in_bulk()
            for record in records:
                print(_show(record, by_id[record.run_id]), file=sys.stderr)
        failed = done.filter(status=Run.Status.FAILED).count()
        if failed:
            print(f"{config}: {failed} runs failed", file=sys.stderr)
        rows.append(_row(config, records))
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[k]) for k in keys) + " |")


class _MemoRetriever:
    """Retrieval is deterministic for a fixed index: remember it across grid points."""

    def __init__(self, inner) -> None:
        self.inner, self.memo = inner, {}

    def retrieve(self, query: str, *, k: int):
        if (query, k) not in self.memo:
            self.memo[(query, k)] = self.inner.retrieve(query, k=k)
        return self.memo[(query, k)]

    def retrieve_sentences(self, query: str, *, k: int):
        if (query, k, "sentences") not in self.memo:
            self.memo[(query, k, "sentences")] = self.inner.retrieve_sentences(query, k=k)
        return self.memo[(query, k, "sentences")]

    def retrieve_heads(self, query: str, *, k: int):
        if (query, k, "heads") not in self.memo:
            self.memo[(query, k, "heads")] = self.inner.retrieve_heads(query, k=k)
        return self.memo[(query, k, "heads")]

    def retrieve_within(self, query: str, *, k: int, document_ids):
        key = (query, k, "within", tuple(document_ids or ()))
        if key not in self.memo:
            self.memo[key] = self.inner.retrieve_within(query, k=k, document_ids=document_ids)
        return self.memo[key]

    def retrieve_sentences_within(self, query: str, *, k: int, document_ids):
        key = (query, k, "sentences within", tuple(document_ids or ()))
        if key not in self.memo:
            self.memo[key] = self.inner.retrieve_sentences_within(query, k=k, document_ids=document_ids)
        return self.memo[key]

    def vocabulary(self, document_id: int):
        # A document's whole vocabulary, as the portal's retriever gives the verifier (cached there).
        return self.inner.vocabulary(document_id)

    def neighbours(self, sources):
        key = tuple((s.chunk_id, s.query) for s in sources)
        if key not in self.memo:
            self.memo[key] = self.inner.neighbours(sources)
        return self.memo[key]


# AuditorParams fields and the values each grid tries.
_THRESHOLD_GRID = {"anchor_min": [0.5, 0.75, 0.9, 1.0], "premise_contradict_min": [0.4, 0.45, 0.5, 0.55, 0.6]}
# Above 1: the rival rule is off.
_PREMISE_GRID = {"premise_rival_frame": [1.01, 1.0, 0.5, 0.0]}


def _calibrate(collection, questions: list[dict], grid: dict[str, list[float]]) -> None:
    """Score = answerable answered + out-of-scope refused + false premises debunked (agentic),
    over the calibration half only; prints the best AuditorParams. A grid point that turns an
    answerable question into FALSE_PREMISE is never chosen (a wrong correction of a true
    premise is the failure the premise check must not have)."""
    from dataclasses import replace

    from agent import benchmark as bm
    from agent.configs import build_roles, get_config
    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever

    assert all(q["split"] == "calibration" for q in questions)
    cfg = get_config("agentic")
    retriever = _MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    specs = bm.parse_benchmark(json.dumps(questions))
    results = []
    base = AuditorParams()
    for point in itertools.product(*grid.values()):
        chosen = dict(zip(grid, point))
        params = replace(base, **chosen)
        records = []
        for n, q in enumerate(specs):
            roles = build_roles(cfg, "local")
            roles.auditor = LocalAuditor(params=params)
            out = AgentLoop(cfg, roles, retriever, concurrent=False).run(q.question)
            records.append(bm.RunRecord(run_id=n, config_name=cfg.name, question=q, outcome=out.answer.outcome.value))
        o = _outcomes(cfg.name, records)
        score = o["answered"] + o["oos_refused"] + o["debunked"]
        tally = Counter((r.question.expected_behavior, r.outcome) for r in records)
        wrong = tally[(bm.ANSWER, "FALSE_PREMISE")]
        results.append((score, chosen, dict(tally), wrong))
        print(score, chosen, sorted(tally.items()), file=sys.stderr, flush=True)
        for r in records:
            print(f"  {r.question.question_id} {r.question.expected_behavior} -> {r.outcome}", file=sys.stderr)
    # Ties go to the grid point closest to the defaults (the least fitted choice).
    allowed = [r for r in results if not r[3]] or results
    best = max(allowed, key=lambda r: (r[0], -sum(abs(v - getattr(base, k)) for k, v in r[1].items())))
    print(json.dumps({"calibration_questions": len(questions), "best_score": best[0], **best[1],
                      "tally": {f"{e}->{o}": n for (e, o), n in best[2].items()}}, indent=1))


if __name__ == "__main__":
    main()
