"""Devbench: every configuration over ../shared/data/devbench with the local backend.

    .venv/bin/python bench/devbench.py                 # full: 48 questions x 8 configurations
    .venv/bin/python bench/devbench.py --size small    # CI: 12 questions (2 per category), 3 configurations
    .venv/bin/python bench/devbench.py --configs agentic --show   # one configuration, per-question lines

Uses its own database and index under var/bench/ (built once from ../shared/data/papers with
the real ingestion pipeline, reused afterwards). Runs are ordinary Runs executed in-process
(agent.services.run_execute), so the numbers are those of the portal's own code path.

Metrics per configuration: outcome counts by category; answer rate on answerable questions;
refusals of out-of-scope; debunked false premises; citation precision (a cited chunk holds a
required evidence span, or is on an expected page of an expected document); evidence recall
(required spans present in the context handed to the generator); p50/p95 latency.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data"
ALL_CONFIGS = ["naive_dense", "bm25", "hybrid", "hybrid_rerank", "agentic_no_audit", "agentic_no_retry",
               "agentic", "agentic_rerank"]


def _norm(text: str) -> str:
    text = re.sub(r"(?<=[a-z])-\s+(?=[a-z])", "", text.lower())
    return re.sub(r"\s+", " ", text).strip()


def _setup():
    os.environ.setdefault("PORTAL_DEBUG", "1")
    os.environ.setdefault("PORTAL_VAR_DIR", str(ROOT / "var" / "bench"))
    os.environ.setdefault("PORTAL_LLM_BACKEND", "local")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    Path(os.environ["PORTAL_VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _collection():
    from django.contrib.auth import get_user_model
    from django.core.files import File

    from knowledge import services
    from knowledge.ingest import job_run
    from knowledge.models import Collection, IngestJob

    user, _ = get_user_model().objects.get_or_create(username="bench")
    collection = Collection.objects.filter(slug="devbench").first()
    if collection is None:
        collection = services.collection_create(name="devbench", user=user)
    pdfs = sorted((DATA / "papers").glob("*.pdf"))
    if collection.documents.filter(status="ready").count() < len(pdfs):
        t0 = time.perf_counter()
        for pdf in pdfs:
            with pdf.open("rb") as fh:
                doc, created = services.document_upload(collection=collection, user=user, uploaded_file=File(fh, name=pdf.name))
            for job in IngestJob.objects.filter(document=doc, status__in=["queued"]):
                job_run(job_id=job.pk)
        print(f"ingested {len(pdfs)} papers in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
        collection.refresh_from_db()
    return user, collection


def _pick(questions: list[dict], size: str) -> list[dict]:
    if size == "full":
        return questions
    per = defaultdict(list)
    for q in questions:
        per[q["category"]].append(q)
    return [q for cat in sorted(per) for q in per[cat][:2]]


def _score(q: dict, run) -> dict:
    from knowledge.models import Chunk

    spans = [_norm(s) for s in q["required_evidence_spans"]]
    pages = {(p["doc_id"], p["page"]) for p in q["expected_pages"]}
    cits = list(run.citations.all())
    good = 0
    for c in cits:
        text = _norm(c.chunk_text)
        chunk = Chunk.objects.select_related("document").filter(pk=c.chunk_id).first()
        stem = Path(chunk.document.original_name).stem if chunk else ""
        on_page = chunk is not None and any((stem, p) in pages for p in range(chunk.page_start, chunk.page_end + 1))
        good += bool(any(s in text for s in spans) or on_page)
    context = _norm(" ".join(Chunk.objects.filter(pk__in=run.context_chunk_ids).values_list("text", flat=True)))
    recall = sum(s in context for s in spans) / len(spans) if spans else None
    return {"citations": len(cits), "good_citations": good, "recall": recall}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", choices=["small", "full"], default="full")
    parser.add_argument("--configs", default="")
    parser.add_argument("--show", action="store_true", help="print one line per question")
    parser.add_argument("--calibrate", action="store_true",
                        help="grid ANCHOR_MIN and PREMISE_CONTRADICT_MIN of the local auditor (agentic)")
    args = parser.parse_args()
    _setup()
    from agent.services import run_create, run_execute

    user, collection = _collection()
    questions = _pick(json.loads((DATA / "devbench" / "questions.json").read_text()), args.size)
    if args.calibrate:
        _calibrate(collection, questions)
        return
    configs = [c for c in args.configs.split(",") if c] or (ALL_CONFIGS if args.size == "full" else
                                                            ["hybrid", "agentic_no_retry", "agentic"])
    from agent.local import embed as local_embed

    # Warm up models and the index once, so the first configuration does not pay for loading.
    warm = run_create(collection=collection, user=user, question="warm up", config_name="agentic", enqueue=False)
    run_execute(run_id=warm.pk)
    rows = []
    for config in configs:
        # Each configuration starts with a cold sentence-vector cache: no one profits from
        # the sentences an earlier configuration embedded.
        local_embed._CACHE.clear()
        outcomes: dict[str, Counter] = defaultdict(Counter)
        lat, cit_total, cit_good, recalls, calls = [], 0, 0, [], []
        for q in questions:
            run = run_create(collection=collection, user=user, question=q["question"], config_name=config, enqueue=False)
            run = run_execute(run_id=run.pk)
            s = _score(q, run)
            outcomes[q["expected_behavior"]][run.outcome] += 1
            lat.append(run.latency_ms)
            calls.append(run.llm_calls)
            if run.outcome != "REFUSAL":
                cit_total += s["citations"]
                cit_good += s["good_citations"]
            if s["recall"] is not None:
                recalls.append(s["recall"])
            if args.show:
                print(f"{config:16} {q['question_id']} {q['category'][:14]:14} {run.outcome:13} {run.verdict:22} "
                      f"retries={run.retries} cit={s['good_citations']}/{s['citations']} rec={s['recall']} "
                      f"{run.latency_ms}ms", file=sys.stderr)
        ans = outcomes["ANSWER"]
        n_ans = sum(ans.values())
        oos = outcomes["REFUSE_OUT_OF_SCOPE"]
        fp = outcomes["DEBUNK_FALSE_PREMISE"]
        lat.sort()
        rows.append({
            "config": config,
            "answerable answered": f"{n_ans - ans['REFUSAL']}/{n_ans}",
            "answerable refused": ans["REFUSAL"],
            "out-of-scope refused": f"{oos['REFUSAL']}/{sum(oos.values())}",
            "false premises debunked": f"{fp['FALSE_PREMISE']}/{sum(fp.values())}",
            "citation precision": round(cit_good / cit_total, 3) if cit_total else None,
            "evidence recall": round(statistics.mean(recalls), 3) if recalls else None,
            "p50 ms": lat[len(lat) // 2], "p95 ms": lat[min(len(lat) - 1, int(len(lat) * 0.95))],
            "LLM calls/q": round(statistics.mean(calls), 2),
        })
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


def _calibrate(collection, questions: list[dict]) -> None:
    """Score = answerable answered + out-of-scope refused + false premises debunked (agentic)."""
    import itertools

    from agent.configs import build_roles, get_config
    from agent.local import auditor
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever

    cfg = get_config("agentic")
    retriever = _MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    results = []
    for anchor_min, premise_min in itertools.product([0.5, 0.6, 0.75, 0.9, 1.0], [0.4, 0.45, 0.5, 0.55, 0.6]):
        auditor.ANCHOR_MIN, auditor.PREMISE_CONTRADICT_MIN = anchor_min, premise_min
        tally = Counter()
        for q in questions:
            out = AgentLoop(cfg, build_roles(cfg, "local"), retriever, concurrent=False).run(q["question"])
            o = out.answer.outcome.value
            tally[(q["expected_behavior"], o)] += 1
        score = (sum(n for (e, o), n in tally.items() if e == "ANSWER" and o != "REFUSAL")
                 + tally[("REFUSE_OUT_OF_SCOPE", "REFUSAL")] + tally[("DEBUNK_FALSE_PREMISE", "FALSE_PREMISE")])
        results.append((score, anchor_min, premise_min, dict(tally)))
        print(score, anchor_min, premise_min, sorted(tally.items()), file=sys.stderr, flush=True)
    best = max(results, key=lambda r: r[0])
    print(json.dumps({"best_score": best[0], "ANCHOR_MIN": best[1], "PREMISE_CONTRADICT_MIN": best[2],
                      "tally": {f"{e}->{o}": n for (e, o), n in best[3].items()}}, indent=1))


if __name__ == "__main__":
    main()
