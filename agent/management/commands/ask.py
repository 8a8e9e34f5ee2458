"""Ask a collection a question from the command line.

    manage.py ask --collection SLUG "question" [--config NAME] [--json] [--via-worker]
    manage.py ask --collection SLUG --questions FILE [--config NAME]   # one JSON line per question

Runs the loop in this process unless --via-worker (then it queues the run on the `answer`
queue and waits for a worker to finish it).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from agent.models import Run
from knowledge.models import Collection


def run_as_dict(run: Run) -> dict[str, Any]:
    """The whole run as plain data: outcome, answer, citations, steps, retrieved chunks, costs."""
    from knowledge.models import Chunk

    chunks = Chunk.objects.select_related("document").in_bulk(run.context_chunk_ids)
    return {
        "id": run.pk, "question": run.question, "config": run.config_name, "config_hash": run.config_hash,
        "status": run.status, "outcome": run.outcome, "verdict": run.verdict, "answer": run.answer,
        "missing_evidence": run.missing_evidence, "error": run.error, "retries": run.retries,
        "latency_ms": run.latency_ms, "llm_calls": run.llm_calls, "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens, "cost_usd": float(run.cost_usd),
        "citations": [
            {"marker": c.marker, "chunk_id": c.chunk_id, "document": c.document_title,
             "file_name": c.chunk.document.original_name if c.chunk else "", "page": c.page,
             "quote": c.quote, "verified": c.verified, "chunk_text": c.chunk_text}
            for c in run.citations.select_related("chunk__document")
        ],
        "retrieved": [
            {"chunk_id": cid, "file_name": chunks[cid].document.original_name, "page": chunks[cid].page_start,
             "section": chunks[cid].section_title}
            for cid in run.context_chunk_ids if cid in chunks
        ],
        "steps": [
            {"kind": s.kind, "attempt": s.attempt, "duration_ms": s.duration_ms, "llm_calls": s.llm_calls,
             "prompt_tokens": s.prompt_tokens, "completion_tokens": s.completion_tokens,
             "cost_usd": float(s.cost_usd), "input": s.input, "output": s.output}
            for s in run.steps.all()
        ],
    }


class Command(BaseCommand):
    help = "Answer a question (or a file of questions) over a collection and print the result."

    def add_arguments(self, parser) -> None:
        parser.add_argument("question", nargs="?", default="")
        parser.add_argument("--collection", required=True, help="the collection's slug")
        parser.add_argument("--config", default=settings.DEFAULT_RUN_CONFIG)
        parser.add_argument("--json", action="store_true", help="print the whole run as JSON")
        parser.add_argument("--via-worker", action="store_true", help="queue it for a worker and wait")
        parser.add_argument("--questions", help="a JSON list of strings or of objects with a `question` field")
        parser.add_argument("--timeout", type=float, default=float(settings.ANSWER_TIME_LIMIT) + 30)

    def handle(self, *args: Any, **opts: Any) -> None:
        collection = Collection.objects.filter(slug=opts["collection"]).first()
        if collection is None:
            raise CommandError(f"No collection with slug {opts['collection']!r}.")
        if opts["questions"]:
            for question in self._questions(Path(opts["questions"])):
                run = self._answer(collection, question, opts)
                self.stdout.write(json.dumps(run_as_dict(run) if run else {"question": question, "error": "invalid"}))
            return
        if not opts["question"]:
            raise CommandError("Give a question, or --questions FILE.")
        run = self._answer(collection, opts["question"], opts)
        if opts["json"]:
            self.stdout.write(json.dumps(run_as_dict(run), indent=2))
        else:
            self._print(run)

    def _questions(self, path: Path) -> list[str]:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise CommandError(f"{path}: {exc}") from None
        if not isinstance(data, list):
            raise CommandError(f"{path} must hold a JSON list.")
        out = []
        for item in data:
            q = item.get("question") if isinstance(item, dict) else item
            if not isinstance(q, str):
                raise CommandError(f"{path}: every item must be a string or have a `question` string.")
            out.append(q)
        return out

    def _answer(self, collection: Collection, question: str, opts: dict[str, Any]) -> Run | None:
        from agent import services

        try:
            run = services.run_create(collection=collection, user=None, question=question,
                                      config_name=opts["config"], enqueue=opts["via_worker"])
        except ValidationError as exc:
            if opts["questions"]:
                self.stderr.write(f"skipped {question[:60]!r}: {' '.join(exc.messages)}")
                return None
            raise CommandError(" ".join(exc.messages)) from None
        if opts["via_worker"]:
            deadline = time.monotonic() + opts["timeout"]
            while time.monotonic() < deadline:
                run.refresh_from_db()
                if run.is_final:
                    return run
                time.sleep(0.2)
            raise CommandError(f"Run {run.pk} is not finished after {opts['timeout']:.0f} s (status {run.status}).")
        from agent.tasks import answer_run

        # The task function itself, called in this process: the same claim and failure handling.
        answer_run(run.pk)
        run.refresh_from_db()
        return run

    def _print(self, run: Run) -> None:
        w = self.stdout.write
        if run.status == Run.Status.FAILED:
            w(f"FAILED: {run.error}")
            return
        w(f"{run.outcome} (verdict {run.verdict or '-'}, config {run.config_name}, "
          f"{run.latency_ms} ms, {run.retries} retries, {run.llm_calls} LLM calls)")
        w("")
        w(run.answer)
        if run.missing_evidence:
            w("")
            w(f"Missing: {run.missing_evidence}")
        cits = list(run.citations.select_related("chunk__document"))
        if cits:
            w("")
            for c in cits:
                name = c.chunk.document.original_name if c.chunk else c.document_title
                w(f"[{c.marker}] {name}, p. {c.page}{'' if c.verified else ' (unverified quote)'}")
        w("")
        w("steps: " + ", ".join(f"{s.kind}#{s.attempt} {s.duration_ms} ms" for s in run.steps.all()))
