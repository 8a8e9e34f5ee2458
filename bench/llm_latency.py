"""LLM calls per question and `agentic` latency as a multiple of `hybrid`, on the openai backend.

    .venv/bin/python bench/llm_latency.py --size small       # CI: 12 questions, 0.2 s per call
    .venv/bin/python bench/llm_latency.py --size full        # 48 questions, 1.0 s per call
    .venv/bin/python bench/llm_latency.py --latency 2.0      # another per-call time

The model is the fake OpenAI server of tests/fake_openai.py, started in this process,
sleeping a fixed time per chat call: what it measures is the loop's call structure, not a
model's quality. It plays the model as an oracle that knows each devbench question's
expected behaviour: answerable questions get SUFFICIENT (a deterministic `--retry-share`
of them first asks for one retry, as a real auditor sometimes does), out-of-scope ones
INSUFFICIENT_REFUSE, false premises FALSE_PREMISE with a verified quote; it cites the numbered
sentence that holds one of the question's gold evidence spans when one is shown (else the
first). Retrieval is the
portal's own (BM25 + dense + RRF over the papers of ../shared/data, ingested with the real
pipeline into var/bench-llm/ once and reused), and runs are ordinary Runs executed by
agent.services.run_execute, so the timings are those of the portal's code path.

Rows: `hybrid` (retrieve, one generate call: the baseline), `agentic` (the default LLM
roles: simple questions planned locally, the audit call drafts the answer), and
`agentic_3call` (the same loop with both shortcuts off: plan, audit, generate).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from _shared_data import SHARED

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = SHARED

from bench.devbench import _pick  # noqa: E402  (the same small slice: 2 questions per category)
from tests.fake_openai import FakeOpenAI, Reply  # noqa: E402

_QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.S)


class OracleModel:
    """Fake-server responder that answers each role like a model that behaves as expected."""

    def __init__(self, questions: list[dict], retry_share: float) -> None:
        from agent.prompts import unescape_data

        self._unescape = unescape_data
        self.behaviour = {q["question"].strip(): q["expected_behavior"] for q in questions}
        # The gold evidence: an oracle cites it when it is shown (the premise gate and the local
        # gate set aside a sentence that does not disagree with the premise or answer the question).
        self.spans = {q["question"].strip(): [re.sub(r"\s+", " ", s).lower() for s in q.get("required_evidence_spans") or []]
                      for q in questions}
        # Deterministic choice of the answerable questions whose first audit asks for a retry.
        self.retry_first = {
            q["question"].strip() for q in questions
            if q["expected_behavior"] == "ANSWER"
            and int(hashlib.sha256(q["question_id"].encode()).hexdigest(), 16) % 1000 < retry_share * 1000
        }
        self.audits: Counter[tuple[str, str]] = Counter()
        self.lock = threading.Lock()
        self.run_tag = ""  # audit passes are counted per (row, question)

    def __call__(self, body: dict[str, Any]) -> Reply:
        from tests.fake_openai import numbered_sentences

        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        m = _QUESTION.search(text)
        question = self._unescape(m.group(1)).strip() if m else ""
        if name == "PlanOut":
            return Reply(content={"complexity": "comparison", "needs": [question],
                                  "sub_queries": [question, f"{question} results"][:2], "premise": ""})
        if name == "QueriesOut":
            return Reply(content={"sub_queries": [f"{question} evidence"]})
        if name != "AnswerOut":
            return Reply(content={})
        sentences = numbered_sentences(text)
        needs = m.group(1).count("\n") + 1 if (m := re.search(r"<needs>\n(.*?)\n</needs>", text, re.S)) else 1
        with self.lock:
            self.audits[(self.run_tag, question)] += 1
            passes = self.audits[(self.run_tag, question)]
        behaviour = self.behaviour.get(question, "ANSWER")
        nothing = {"needs": [], "premise": {"contradicted": False, "sentence": 0}, "answer": []}
        if behaviour == "REFUSE_OUT_OF_SCOPE" or not sentences:
            return Reply(content=nothing)
        spans = self.spans.get(question, [])
        first = next((n for n in sorted(sentences)
                      if any(span in re.sub(r"\s+", " ", self._unescape(sentences[n])).lower() for span in spans)),
                     min(sentences))
        if behaviour == "DEBUNK_FALSE_PREMISE":
            return Reply(content={**nothing, "premise": {"contradicted": True, "sentence": first}})
        if question in self.retry_first and passes == 1 and self.run_tag != "hybrid":
            return Reply(content=nothing)
        return Reply(content={"needs": [{"need": i, "sentences": [first]} for i in range(1, needs + 1)],
                              "premise": {"contradicted": False, "sentence": 0},
                              "answer": [{"text": self._unescape(sentences[first]), "sentences": [first]}]})


def _setup(server: FakeOpenAI, var_dir: Path) -> None:
    os.environ["PORTAL_DEBUG"] = "1"
    os.environ["PORTAL_VAR_DIR"] = str(var_dir)
    os.environ["PORTAL_LLM_BACKEND"] = "openai"
    os.environ["PORTAL_OPENAI_BASE_URL"] = server.base_url
    os.environ["PORTAL_OPENAI_API_KEY"] = "bench"
    os.environ["PORTAL_LLM_MODEL"] = "gpt-4o-mini"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    var_dir.mkdir(parents=True, exist_ok=True)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _collection(papers: list[Path]):
    from django.contrib.auth import get_user_model
    from django.core.files import File

    from knowledge import services
    from knowledge.ingest import job_run
    from knowledge.models import Collection, IngestJob

    user, _ = get_user_model().objects.get_or_create(username="bench")
    collection = Collection.objects.filter(slug="llm-latency").first() or services.collection_create(
        name="llm-latency", user=user)
    have = set(collection.documents.filter(status="ready").values_list("original_name", flat=True))
    todo = [p for p in papers if p.name not in have]
    t0 = time.perf_counter()
    for pdf in todo:
        with pdf.open("rb") as fh:
            doc, _ = services.document_upload(collection=collection, user=user, uploaded_file=File(fh, name=pdf.name))
        for job in IngestJob.objects.filter(document=doc, status__in=["queued"]):
            job_run(job_id=job.pk)
    if todo:
        print(f"ingested {len(todo)} papers in {time.perf_counter() - t0:.0f}s", file=sys.stderr)
    collection.refresh_from_db()
    return user, collection


def _roles(row: str):
    from agent.configs import Roles
    from agent.llm import LLMClient
    from agent.llm_roles import llm_roles
    from agent.verify import CitationVerifier

    if row != "agentic_3call":
        return None  # the portal's default roles for the run's configuration
    r = llm_roles(LLMClient.from_settings(), plan_simple_locally=False, draft_in_audit=False)
    return Roles(r["planner"], r["auditor"], r["reformulator"], r["generator"], CitationVerifier())


def _outcomes(rs: dict[str, dict]) -> str:
    """Outcome counts by expected behaviour, e.g. "answer: ANSWER 5, REFUSAL 1"."""
    by: dict[str, Counter] = defaultdict(Counter)
    for r in rs.values():
        by[r["expected"].split("_")[0].lower()][r["outcome"]] += 1
    return "; ".join(f"{k}: " + ", ".join(f"{o} {n}" for o, n in sorted(c.items())) for k, c in sorted(by.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=["small", "full"], default="small")
    parser.add_argument("--latency", type=float, default=None, help="seconds per chat call (small 0.2, full 1.0)")
    parser.add_argument("--retry-share", type=float, default=1 / 6,
                        help="share of answerable questions whose first audit asks for a retry")
    parser.add_argument("--var", default=str(ROOT / "var" / "bench-llm"))
    args = parser.parse_args()
    latency = args.latency if args.latency is not None else (0.2 if args.size == "small" else 1.0)

    questions = _pick(json.loads((DATA / "devbench" / "questions.json").read_text()), args.size)
    server = FakeOpenAI(latency=latency).start()
    _setup(server, Path(args.var))
    oracle = OracleModel(questions, args.retry_share)
    server.responder = oracle
    from agent.services import run_create, run_execute

    papers = sorted((DATA / "papers").glob("*.pdf"))
    if args.size == "small":
        wanted = {d for q in questions for d in q.get("expected_doc_ids", [])}
        papers = [p for p in papers if p.stem in wanted] or papers[:4]
    user, collection = _collection(papers)

    rows = [("hybrid", "hybrid"), ("agentic", "agentic"), ("agentic_3call", "agentic")]
    # One untimed question per configuration first: the first run of a process loads the
    # embedding model and the index, which would otherwise be billed to the first row.
    for _row, config in rows[:2]:
        oracle.run_tag = "warm-up"
        warm = run_create(collection=collection, user=user, question=questions[0]["question"], config_name=config,
                          enqueue=False)
        run_execute(run_id=warm.pk)
    results: dict[str, dict[str, dict]] = {}
    from agent.local import embed as sentence_embed

    for row, config in rows:
        oracle.run_tag = row
        results[row] = {}
        # The sentence embeddings are cached per process: without this, every row after the
        # first would find its candidate sentences already embedded and look faster.
        sentence_embed.clear()
        for q in questions:
            run = run_create(collection=collection, user=user, question=q["question"], config_name=config,
                             enqueue=False)
            run = run_execute(run_id=run.pk, roles=_roles(row))
            if run.status != "done":
                raise SystemExit(f"{row} {q['question_id']} failed: {run.error}")
            results[row][q["question_id"]] = {"ms": run.latency_ms, "calls": run.llm_calls,
                                              "prompt": run.prompt_tokens, "completion": run.completion_tokens,
                                              "cost": float(run.cost_usd),
                                              "retries": run.retries, "outcome": run.outcome,
                                              "expected": q["expected_behavior"]}
    server.stop()

    base = results["hybrid"]
    cmd = f".venv/bin/python bench/llm_latency.py --size {args.size}" + (
        f" --latency {args.latency}" if args.latency is not None else "")
    print(f"\nCommand: `{cmd}`  \n{len(questions)} devbench questions, {len(papers)} papers, "
          f"fake model sleeping {latency:.2f} s per call, retry share {args.retry_share:.2f}.\n")
    print("| configuration | LLM calls / question (mean) | calls by expected behaviour (mean) | retries | "
          "p50 latency | p95 latency | p50 / hybrid p50 | median per-question ratio to hybrid | outcomes |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    p50_base = statistics.median(r["ms"] for r in base.values())
    for row, _ in rows:
        rs = results[row]
        ms = sorted(r["ms"] for r in rs.values())
        by: dict[str, list[int]] = defaultdict(list)
        for r in rs.values():
            by[r["expected"]].append(r["calls"])
        by_text = ", ".join(f"{k.split('_')[0].lower()} {statistics.mean(v):.2f}" for k, v in sorted(by.items()))
        ratios = [rs[qid]["ms"] / max(base[qid]["ms"], 1) for qid in rs]
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        print(f"| {row} | {statistics.mean(r['calls'] for r in rs.values()):.2f} | {by_text} | "
              f"{sum(r['retries'] for r in rs.values())} | {statistics.median(ms) / 1000:.2f} s | {p95 / 1000:.2f} s | "
              f"{statistics.median(ms) / p50_base:.2f}x | {statistics.median(ratios):.2f}x | {_outcomes(rs)} |")
    # Tokens as the fake server counts them (4 characters a token, the real prompts) and
    # what they would cost at the configured model's prices (gpt-4o-mini here).
    print("\n| configuration | prompt tokens / question (mean) | completion tokens / question (mean) | "
          "cost / question (gpt-4o-mini) |")
    print("| --- | --- | --- | --- |")
    for row, _ in rows:
        rs = list(results[row].values())
        print(f"| {row} | {statistics.mean(r['prompt'] for r in rs):.0f} | "
              f"{statistics.mean(r['completion'] for r in rs):.0f} | ${statistics.mean(r['cost'] for r in rs):.6f} |")


if __name__ == "__main__":
    main()
