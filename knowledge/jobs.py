"""The lifecycle of a background job's row, for ingest jobs and agent runs alike.

The row is the truth; the task message is only a nudge. A row goes QUEUED -> RUNNING ->
DONE or FAILED, and every move is one conditional UPDATE, so of two deliveries of a task,
or a worker and the sweeper, only one wins:

- `claim`: QUEUED, or RUNNING but stale, becomes RUNNING with attempts + 1. A RUNNING row
  is stale once it started more than its task's hard time limit + GRACE ago: Celery kills a
  task at its hard limit, so no live worker can still hold it (that is how Redis'
  redelivery after visibility_timeout takes a dead attempt over). After MAX_ATTEMPTS claims
  the row gives up (FAILED, with a reason) instead of killing workers forever.
- `heartbeat`: progress of a RUNNING row. `finish` / `fail`: DONE / FAILED, never touching
  a row that is already final.
- `sweep`, for each kind: stale RUNNING rows are requeued (their task re-sent) or, at
  MAX_ATTEMPTS, given up; QUEUED rows whose message may have been lost (the broker was
  down) are re-sent, once per RESEND_AFTER.

Each kind of job is a `JobKind`: its model (a `Status` with QUEUED, RUNNING, DONE, FAILED,
and `attempts`, `started_at`, `finished_at`, `updated_at`, `error`), its task, its hard time
limit, and what its claim and stop set. knowledge declares the ingest kind
(knowledge.ingest.INGEST_JOB), the agent its run kind (agent.services.RUN_JOB), and
agent.sweeper sweeps both: knowledge imports nothing from agent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.module_loading import import_string

from knowledge.dispatch import send_task

MAX_ATTEMPTS = 3
# Past the hard time limit, how long before a RUNNING row counts as dead (Celery's kill and
# the row's last write need a moment).
GRACE = timedelta(seconds=5)
RESEND_AFTER = timedelta(seconds=120)
_DIED = "The worker stopped unexpectedly {n} times {doing}; giving up."


@dataclass(frozen=True)
class JobKind:
    name: str  # "jobs", "runs": the sweep report's keys
    model: Any
    task: str  # dotted path of the Celery task that runs one row by id
    time_limit_setting: str  # the settings name of that task's hard time limit, in seconds
    doing: str  # for the give-up message: "while answering"
    claimed: Mapping[str, Any] = field(default_factory=dict)  # set on claim (first progress key)
    stopped: Mapping[str, Any] = field(default_factory=dict)  # set on requeue and on any end
    requeued: Mapping[str, Any] = field(default_factory=dict)  # set on requeue, besides `stopped`
    # Clears what a dead attempt left behind, before the next one (runs: steps, citations).
    reset: Callable[[int], None] | None = None
    # After a row gave up (ingest: its document is FAILED too).
    gave_up: Callable[[int, str], None] | None = None

    def stale(self, now: datetime) -> Q:
        limit = timedelta(seconds=getattr(settings, self.time_limit_setting))
        return Q(status=self.model.Status.RUNNING, started_at__lt=now - limit - GRACE)


def claim(kind: JobKind, pk: int, *, now: datetime | None = None) -> bool:
    """QUEUED (or stale RUNNING) -> RUNNING; True when this call won the row."""
    now = now or timezone.now()
    claimable = kind.model.objects.filter(Q(status=kind.model.Status.QUEUED) | kind.stale(now), pk=pk)
    with transaction.atomic():
        won = claimable.filter(attempts__lt=MAX_ATTEMPTS).update(
            status=kind.model.Status.RUNNING, started_at=now, updated_at=now, attempts=F("attempts") + 1,
            error="", **kind.claimed,
        ) == 1
        if won and kind.reset:
            kind.reset(pk)
    if not won:
        _give_up(kind, claimable.filter(attempts__gte=MAX_ATTEMPTS), now)
    return won


def heartbeat(kind: JobKind, pk: int, **fields: Any) -> None:
    """Record progress of a row (its updated_at too)."""
    kind.model.objects.filter(pk=pk).update(updated_at=timezone.now(), **fields)


def finish(kind: JobKind, pk: int, **fields: Any) -> bool:
    """RUNNING -> DONE with `fields`; False when the row is not RUNNING (gone, final, requeued)."""
    now = timezone.now()
    return kind.model.objects.filter(pk=pk, status=kind.model.Status.RUNNING).update(
        status=kind.model.Status.DONE, finished_at=now, updated_at=now, **{**kind.stopped, **fields}) == 1


def fail(kind: JobKind, pk: int, error: str, **fields: Any) -> bool:
    """Any row not final -> FAILED with a reason; False when it was final already (or gone)."""
    now = timezone.now()
    return kind.model.objects.filter(pk=pk).exclude(status__in=kind.model.FINAL).update(
        status=kind.model.Status.FAILED, error=error[:2000], finished_at=now, updated_at=now,
        **{**kind.stopped, **fields}) == 1


def _give_up(kind: JobKind, rows, now: datetime) -> list[int]:
    given_up = []
    for row in rows.only("pk", "attempts"):
        error = _DIED.format(n=row.attempts, doing=kind.doing)
        if rows.filter(pk=row.pk).update(status=kind.model.Status.FAILED, error=error, finished_at=now,
                                         updated_at=now, **kind.stopped):
            if kind.gave_up:
                kind.gave_up(row.pk, error)
            given_up.append(row.pk)
    return given_up


def _requeue(kind: JobKind, row, now: datetime) -> bool:
    """A dead attempt back to QUEUED (only if no one moved it since it was read)."""
    moved = kind.model.objects.filter(pk=row.pk, status=kind.model.Status.RUNNING, started_at=row.started_at).update(
        status=kind.model.Status.QUEUED, updated_at=now, **{**kind.stopped, **kind.requeued})
    if moved and kind.reset:
        kind.reset(row.pk)
    return bool(moved)


def sweep(kinds: Sequence[JobKind], *, now: datetime, no_worker_alive: bool = False) -> dict[str, list[int]]:
    """For each kind: requeue or give up its dead RUNNING rows, re-send its waiting QUEUED ones.

    Returns {"<kind>_requeued" / "_failed" / "_resent": [ids]}. `no_worker_alive`: every
    RUNNING row is a dead attempt, whatever its age.
    """
    report: dict[str, list[int]] = {}
    for kind in kinds:
        status = kind.model.Status
        dead = Q(status=status.RUNNING, started_at__lt=now) if no_worker_alive else kind.stale(now)
        stuck = kind.model.objects.filter(dead)
        failed = _give_up(kind, stuck.filter(attempts__gte=MAX_ATTEMPTS), now)
        requeued = [row.pk for row in stuck.filter(attempts__lt=MAX_ATTEMPTS).only("pk", "started_at")
                    if _requeue(kind, row, now)]
        # updated_at of a QUEUED row is when it was last sent, so a long queue (a benchmark)
        # gets one extra message per row every RESEND_AFTER, not one per sweep.
        waiting = kind.model.objects.filter(status=status.QUEUED, updated_at__lt=now - RESEND_AFTER)
        task = import_string(kind.task)
        resent = []
        for pk in list(waiting.values_list("pk", flat=True)) + requeued:
            if send_task(task, pk):
                kind.model.objects.filter(pk=pk, status=status.QUEUED).update(updated_at=now)
                if pk not in requeued:
                    resent.append(pk)
        report |= {f"{kind.name}_requeued": requeued, f"{kind.name}_failed": failed, f"{kind.name}_resent": resent}
    return report
