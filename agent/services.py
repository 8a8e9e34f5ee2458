"""Writes for runs: create (validated, queued after commit) and execute (the loop, recorded)."""

from __future__ import annotations

import logging
import time
import unicodedata
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from agent.models import Citation, Run, RunStep
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


def run_claim(run_id: int) -> Run | None:
    """QUEUED -> RUNNING with a conditional UPDATE: of two deliveries of one task only one wins.

    A run left RUNNING by a worker that was killed is claimable again once it has been
    RUNNING for longer than the hard time limit (no live worker can still hold it then):
    that is how Redis' redelivery after visibility_timeout finishes it. The dead attempt's
    steps are cleared so the trace is that of one attempt; after MAX_ATTEMPTS claims the
    run ends FAILED instead of killing workers forever.
    """
    from agent.sweeper import MAX_ATTEMPTS

    now = timezone.now()
    dead = Q(status=Run.Status.RUNNING, started_at__lt=now - timedelta(seconds=settings.ANSWER_TIME_LIMIT + 5))
    claimable = Run.objects.filter(Q(status=Run.Status.QUEUED) | dead, pk=run_id)
    with transaction.atomic():
        claimed = claimable.filter(attempts__lt=MAX_ATTEMPTS).update(
            status=Run.Status.RUNNING, started_at=now, updated_at=now, attempts=F("attempts") + 1,
            stage="PLANNING", progress_current=0, answer_preview="",
        )
        if claimed == 1:
            RunStep.objects.filter(run_id=run_id).delete()
            Citation.objects.filter(run_id=run_id).delete()
    if claimed != 1:
        claimable.filter(attempts__gte=MAX_ATTEMPTS).update(
            status=Run.Status.FAILED, finished_at=now, stage="",
            error=f"The worker stopped unexpectedly {MAX_ATTEMPTS} times while answering; giving up.",
        )
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
    Run.objects.filter(pk=run_id).exclude(status__in=Run.FINAL).update(
        status=Run.Status.FAILED, error=error[:2000], finished_at=timezone.now(), stage="",
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
    from agent.llm_roles import streaming_answer
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
        Run.objects.filter(pk=run.pk).update(progress_current=min(ordinal[0], max_progress),
                                             progress_max=max_progress, updated_at=timezone.now())

    def on_stage(stage: Stage) -> None:
        Run.objects.filter(pk=run.pk).update(stage=stage.value, updated_at=timezone.now())

    started = time.perf_counter()
    loop = AgentLoop(config, roles, retriever, on_step=on_step, on_stage=on_stage, concurrent=concurrent,
                     retrieval_usage=retrieval_usage)
    sink = _preview_writer(run.pk) if backend != "local" and settings.LLM_STREAM else None
    with streaming_answer(sink):
        result = loop.run(run.question)
    latency = int((time.perf_counter() - started) * 1000)
    _save_result(run, result, latency)
    run.refresh_from_db()
    return run


# The preview is written at most this often: a model streams tens of tokens a second, and
# the page polls once a second.
PREVIEW_WRITE_SECONDS = 0.4


def _preview_writer(run_id: int):
    """A sink for agent.llm_roles.streaming_answer: the answer so far into Run.answer_preview.

    Touches updated_at, so the run page's polling cursor changes and it re-renders.
    """
    last = [0.0]

    def write(text: str) -> None:
        now = time.monotonic()
        if now - last[0] < PREVIEW_WRITE_SECONDS:
            return
        last[0] = now
        Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(
            answer_preview=text[:20000], updated_at=timezone.now())

    return write


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
    Run.objects.filter(pk=run.pk).update(
        status=Run.Status.DONE, stage="", outcome=answer.outcome.value, verdict=result.verdict,
        answer=answer.text, missing_evidence=answer.missing_note, suggestions=answer.suggestions,
        retries=result.retries,
        llm_calls=usage.calls, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
        cost_usd=Decimal(str(round(usage.cost_usd, 6))), latency_ms=latency_ms,
        context_chunk_ids=[s.chunk_id for s in result.sources], finished_at=timezone.now(),
        progress_current=F("progress_max"),
    )
