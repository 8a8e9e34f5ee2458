"""The sweeper: every ingest job and every run reaches a final state, whatever the broker did.

Celery's acks_late redelivers the task of a killed worker on Redis, but only after the
transport's visibility_timeout, and the filesystem transport (the embedded default) never
redelivers it. A message can also be lost before it was ever published (the broker was
down when the web request committed its row). So the database rows are swept, both kinds
by the one loop of knowledge.jobs.sweep (which owns the rules: stale, attempts, re-send):

1. RUNNING past its hard time limit (plus a grace period): no worker can still hold it,
   because Celery kills a task at its hard limit. Below MAX_ATTEMPTS it goes back to
   QUEUED and its task is re-sent; at MAX_ATTEMPTS it ends FAILED with a reason.
2. QUEUED for longer than RESEND_AFTER: its message may have been lost, so the task is
   re-sent. Sending twice is harmless: tasks claim their row with a conditional UPDATE,
   and only one delivery wins.

Runs from `celery beat` every SWEEP_INTERVAL seconds (agent.sweep task) and from
`manage.py sweep`. Each periodic sweep records its time in the shared cache, so
`manage.py sweep --status`, the staff status page and the run page can tell when beat
(or every worker taking the `sweep` queue) has stopped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from agent.models import Run
from agent.services import RUN_JOB
from knowledge import jobs
from knowledge.ingest import INGEST_JOB
from knowledge.models import IngestJob

logger = logging.getLogger(__name__)

LAST_SWEEP_KEY = "grounded:sweeper:last"
# A sweeper is late when this many intervals passed without a periodic sweep.
LATE_AFTER_INTERVALS = 3


@dataclass
class SweepReport:
    jobs_requeued: list[int] = field(default_factory=list)
    jobs_failed: list[int] = field(default_factory=list)
    jobs_resent: list[int] = field(default_factory=list)
    runs_requeued: list[int] = field(default_factory=list)
    runs_failed: list[int] = field(default_factory=list)
    runs_resent: list[int] = field(default_factory=list)

    def total(self) -> int:
        return sum(len(v) for v in vars(self).values())


def sweep(*, now: datetime | None = None, no_worker_alive: bool = False) -> SweepReport:
    """Requeue, re-send or fail every job and run that no worker is going to finish.

    `no_worker_alive`: the caller knows no worker is running (`manage.py run_all` before it
    starts the only ones), so every RUNNING row is a dead attempt, whatever its age: the
    work a Ctrl-C interrupted resumes at the next start, not a hard time limit later.
    """
    report = SweepReport(**jobs.sweep([INGEST_JOB, RUN_JOB], now=now or timezone.now(),
                                      no_worker_alive=no_worker_alive))
    if report.total():
        logger.warning("sweeper: %s", report)
    return report


def sweep_record(report: SweepReport, *, now: datetime | None = None) -> None:
    """Remember this periodic sweep (time and counts) for the health views; never fails the sweep."""
    value = {"at": (now or timezone.now()).isoformat(), "counts": {k: len(v) for k, v in vars(report).items()}}
    try:
        cache.set(LAST_SWEEP_KEY, value, timeout=None)
    except Exception:  # the cache (Redis) being down must not stop the sweep itself
        logger.warning("sweeper: could not record the sweep time", exc_info=True)


@dataclass
class SweepHealth:
    last_at: datetime | None
    counts: dict[str, int]
    interval: int
    now: datetime

    @property
    def age_seconds(self) -> int | None:
        return None if self.last_at is None else max(0, int((self.now - self.last_at).total_seconds()))

    @property
    def moved(self) -> str:
        """What the last sweep did, in words ('runs requeued 1, jobs resent 2'), or 'nothing'."""
        return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in self.counts.items() if v) or "nothing"

    @property
    def late(self) -> bool:
        """No periodic sweep for LATE_AFTER_INTERVALS intervals (or none recorded at all)."""
        age = self.age_seconds
        return age is None or age > LATE_AFTER_INTERVALS * self.interval


def sweep_health(*, now: datetime | None = None) -> SweepHealth:
    """When the last periodic sweep ran, as recorded by sweep_record (None: never, or the cache lost it)."""
    try:
        value = cache.get(LAST_SWEEP_KEY)
    except Exception:
        logger.warning("sweeper: could not read the last sweep time", exc_info=True)
        value = None
    last_at = datetime.fromisoformat(value["at"]) if value else None
    return SweepHealth(last_at=last_at, counts=(value or {}).get("counts", {}), interval=settings.SWEEP_INTERVAL,
                       now=now or timezone.now())


def run_overdue_seconds(run: Run, *, now: datetime | None = None) -> int:
    """Seconds a run that is not final has existed beyond its hard time limit (0 when within it)."""
    if run.is_final:
        return 0
    age = ((now or timezone.now()) - run.created_at).total_seconds()
    return max(0, int(age - settings.ANSWER_TIME_LIMIT))


def work_in_flight(*, now: datetime | None = None) -> dict[str, object]:
    """Counts for the staff status page: what is waiting, what is running, what is past its limit."""
    now = now or timezone.now()
    runs_late = Run.objects.exclude(status__in=Run.FINAL).filter(
        created_at__lt=now - timedelta(seconds=settings.ANSWER_TIME_LIMIT))
    jobs_late = IngestJob.objects.exclude(status__in=IngestJob.FINAL).filter(
        created_at__lt=now - timedelta(seconds=settings.INGEST_TIME_LIMIT))
    return {
        "runs_queued": Run.objects.filter(status=Run.Status.QUEUED).count(),
        "runs_running": Run.objects.filter(status=Run.Status.RUNNING).count(),
        "runs_late": list(runs_late.order_by("created_at").values_list("pk", flat=True)[:50]),
        "jobs_queued": IngestJob.objects.filter(status=IngestJob.Status.QUEUED).count(),
        "jobs_running": IngestJob.objects.filter(status=IngestJob.Status.RUNNING).count(),
        "jobs_late": list(jobs_late.order_by("created_at").values_list("pk", flat=True)[:50]),
    }
