"""Writes for runs: create (validated, queued after commit) and execute (the loop, recorded)."""

from __future__ import annotations

import logging
import time
import unicodedata
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F

from agent.models import Citation, Run, RunStep
from knowledge import jobs
from knowledge.jobs import JobKind
from knowledge.models import Chunk, Collection

logger = logging.getLogger(__name__)

_ALLOWED_CONTROL = {"\n", "\r", "\t"}


def question_clean(question: str) -> str:
    """The question stripped, or ValidationError saying what is wrong with it."""
    if not isinstance(question, str):
        raise ValidationError("The question must be text.", code="invalid")
    if "\x00" in question or any(
        unicodedata.category(ch) in ("Cc", "Cs", "Co") and ch not in _ALLOWED_CONTROL for ch in question
    ):
        raise ValidationError(
            "The question contains control or binary characters; type or paste plain text.", code="binary"
        )
    question = question.strip()
    if not question:
        raise ValidationError("Type a question first.", code="empty")
    limit = settings.QUESTION_MAX_CHARS
    if len(question) > limit:
        raise ValidationError(
            f"The question is {len(question)} characters long; the limit is {limit}. Shorten it.", code="too_long"
        )
    return question


def _enqueue(run_id: int) -> None:
    from agent.tasks import answer_run
    from knowledge.dispatch import send_task_on_commit

    # A broker that is down loses only the nudge; the sweeper re-sends it for the QUEUED row.
    send_task_on_commit(answer_run, run_id)


def run_create(*, collection: Collection, user, question: str, config_name: str | None = None,
               benchmark_run=None, benchmark_question=None, enqueue: bool = True) -> Run:
    """Validate the question and configuration, save a QUEUED Run and queue it after commit.

    enqueue=False leaves it queued for the caller to execute in-process (run_execute).
    """
    from agent.configs import config_hash, config_record, get_config

    question = question_clean(question)
    config_name = config_name or settings.DEFAULT_RUN_CONFIG
    try:
        config = get_config(config_name)
    except ValueError as exc:
        raise ValidationError(str(exc), code="unknown_config") from None
    record = config_record(config, backend=settings.LLM_BACKEND, model=settings.LLM_MODEL)
    run = Run(
        collection=collection, user=user, question=question, config_name=config.name,
        config=record, config_hash=config_hash(record), index_version=collection.index_version,
        benchmark_run=benchmark_run, benchmark_question=benchmark_question,
    )
    # A run from `manage.py ask` has no user; everything else must be valid.
    run.full_clean(exclude=["user"] if user is None else None)
    with transaction.atomic():
        run.save()
        if enqueue:
            _enqueue(run.pk)
    return run


def _run_reset(run_id: int) -> None:
    # The next attempt writes a clean trace: the steps of a dead one are removed.
    RunStep.objects.filter(run_id=run_id).delete()
    Citation.objects.filter(run_id=run_id).delete()


# The lifecycle of a Run row (knowledge.jobs): claim, progress, end, sweep.
RUN_JOB = JobKind(
    name="runs", model=Run, task="agent.tasks.answer_run", time_limit_setting="ANSWER_TIME_LIMIT",
    doing="while answering", claimed={"stage": "PLANNING", "progress_current": 0}, stopped={"stage": ""},
    requeued={"progress_current": 0}, reset=_run_reset,
)


def run_claim(run_id: int) -> Run | None:
    """Claim the run (knowledge.jobs.claim: QUEUED, or a dead attempt past its hard time
    limit, becomes RUNNING; after MAX_ATTEMPTS it ends FAILED); None when another delivery
    has it, or it is final or gone."""
    if not jobs.claim(RUN_JOB, run_id):
        return None
    return Run.objects.select_related("collection").get(pk=run_id)


def run_fail(*, run_id: int, error: str, usage=None) -> None:
    """End a run that is not final as FAILED with a reason (never touches a final run).

    The LLM calls, tokens and cost spent before the failure are kept: the steps that
    finished, plus `usage` of the call that failed (LLMError.usage), since they were billed.
    """
    from django.db.models import Sum

    spent = RunStep.objects.filter(run_id=run_id).aggregate(
        calls=Sum("llm_calls"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), cost=Sum("cost_usd")
    )
    jobs.fail(
        RUN_JOB, run_id, error,
        llm_calls=(spent["calls"] or 0) + (usage.calls if usage else 0),
        prompt_tokens=(spent["prompt"] or 0) + (usage.prompt_tokens if usage else 0),
        completion_tokens=(spent["completion"] or 0) + (usage.completion_tokens if usage else 0),
        cost_usd=(spent["cost"] or Decimal(0)) + Decimal(str(round(usage.cost_usd, 6) if usage else 0)),
    )


def run_execute(*, run_id: int, roles=None, retriever=None) -> Run | None:
    """Claim the run and answer it; returns None if another delivery already has it.

    Writes a RunStep per step as it finishes, stage/progress as the loop moves, then the
    outcome, answer and Citation rows in one transaction. Errors propagate to the caller
    (the task), which marks the run FAILED with a reason.
    """
    from agent.configs import RunConfig, build_roles
    from agent.loop import AgentLoop, Stage, StepRecord
    from agent.retrieval import CollectionRetriever, ThreadRetriever, portal_embed
    from agent.types import STEP_SCHEMA_VERSION

    run = run_claim(run_id)
    if run is None:
        logger.info("run %s is gone, final or taken by another delivery", run_id)
        return None
    known = {f.name for f in RunConfig.__dataclass_fields__.values()}
    config = RunConfig(**{k: v for k, v in run.config.items() if k in known})
    backend = run.config.get("backend", settings.LLM_BACKEND)
    roles = roles or build_roles(config, backend, embed=portal_embed())
    retrieval_usage = None
    if retriever is None:
        inner = CollectionRetriever(run.collection, mode=config.retrieval_mode, rerank=config.rerank)
        retrieval_usage = inner.take_usage
        concurrent = inner.thread_safe
        retriever = ThreadRetriever(inner) if concurrent else inner
    else:
        concurrent = getattr(retriever, "thread_safe", True)
    ordinal = [0]
    max_progress = 6 + 3 * config.max_retries

    def on_step(step: StepRecord) -> None:
        ordinal[0] += 1
        data_in, data_out = step.step.columns()
        RunStep.objects.create(
            run=run, ordinal=ordinal[0], kind=step.kind, attempt=step.attempt, input=data_in,
            output=data_out, schema_version=STEP_SCHEMA_VERSION, duration_ms=step.duration_ms,
            llm_calls=step.usage.calls,
            prompt_tokens=step.usage.prompt_tokens, completion_tokens=step.usage.completion_tokens,
            cost_usd=Decimal(str(round(step.usage.cost_usd, 6))),
        )
        jobs.heartbeat(RUN_JOB, run.pk, progress_current=min(ordinal[0], max_progress), progress_max=max_progress)

    def on_stage(stage: Stage) -> None:
        jobs.heartbeat(RUN_JOB, run.pk, stage=stage.value)

    started = time.perf_counter()
    loop = AgentLoop(config, roles, retriever, on_step=on_step, on_stage=on_stage, concurrent=concurrent,
                     retrieval_usage=retrieval_usage)
    result = loop.run(run.question)
    latency = int((time.perf_counter() - started) * 1000)
    _save_result(run, result, latency)
    run.refresh_from_db()
    return run


@transaction.atomic
def _save_result(run: Run, result, latency_ms: int) -> None:
    answer = result.answer
    by_id = {s.chunk_id: s for s in result.sources}
    live = set(Chunk.objects.filter(pk__in=[c.chunk_id for c in answer.citations]).values_list("pk", flat=True))
    for ref in answer.citations:
        source = by_id[ref.chunk_id]
        Citation.objects.create(
            run=run, marker=ref.marker, chunk_id=ref.chunk_id if ref.chunk_id in live else None,
            document_title=source.document_title[:500], page=source.page, chunk_text=source.text,
            quote=ref.quote, quote_start=ref.quote_start, verified=ref.verified,
        )
    usage = result.usage
    jobs.finish(
        RUN_JOB, run.pk, outcome=answer.outcome.value, verdict=result.verdict,
        answer=answer.text, missing_evidence=answer.missing_note, suggestions=answer.suggestions,
        retries=result.retries,
        llm_calls=usage.calls, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
        cost_usd=Decimal(str(round(usage.cost_usd, 6))), latency_ms=latency_ms,
        context_chunk_ids=[s.chunk_id for s in result.sources], progress_current=F("progress_max"),
    )
