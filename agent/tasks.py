"""Celery tasks of the agent: thin, they load by id and call agent.services."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

logger = logging.getLogger(__name__)

SWEEP_SOFT_TIME_LIMIT = 100
SWEEP_TIME_LIMIT = 120


@shared_task(
    name="agent.answer_run", queue="answer", acks_late=True, ignore_result=True,
    soft_time_limit=settings.ANSWER_SOFT_TIME_LIMIT, time_limit=settings.ANSWER_TIME_LIMIT,
)
def answer_run(run_id: int) -> None:
    """Answer one run. Safe to deliver twice: only the delivery that claims QUEUED->RUNNING runs
    the loop. Every path leaves the run DONE or FAILED with a reason."""
    from celery.exceptions import SoftTimeLimitExceeded

    from agent import services
    from agent.llm import LLMError

    try:
        services.run_execute(run_id=run_id)
    except SoftTimeLimitExceeded:
        services.run_fail(run_id=run_id, error=(
            f"Answering took longer than {settings.ANSWER_SOFT_TIME_LIMIT} s and was stopped. "
            "Try a narrower question or ask an operator to raise PORTAL_ANSWER_SOFT_TIME_LIMIT."))
    except LLMError as exc:
        logger.warning("run %s: LLM failed (%s): %s", run_id, exc.kind, exc)
        services.run_fail(run_id=run_id, error=f"The language model gave no usable answer: {exc}", usage=exc.usage)
    except Exception as exc:
        logger.exception("run %s failed", run_id)
        services.run_fail(run_id=run_id, error=f"The answer could not be produced: {type(exc).__name__}: {exc}")


# Its own queue, which both workers take: on `answer` it would wait behind every queued run
# (a benchmark queues dozens). Both limits are explicit: a hard limit alone inherits
# CELERY_TASK_SOFT_TIME_LIMIT (240 s), and Celery refuses to send a task whose soft limit
# is above its hard one, so beat never sent this one.
@shared_task(name="agent.sweep", queue="sweep", acks_late=False, ignore_result=True,
             soft_time_limit=SWEEP_SOFT_TIME_LIMIT, time_limit=SWEEP_TIME_LIMIT)
def sweep() -> None:
    """Periodic (celery beat): requeue, re-send or fail jobs and runs no worker will finish."""
    from agent.sweeper import sweep as sweep_rows
    from agent.sweeper import sweep_record

    sweep_record(sweep_rows())
