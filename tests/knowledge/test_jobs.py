"""One job lifecycle (knowledge.jobs) for ingest jobs and agent runs: claim, end, give up, sweep."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from agent.models import Run
from agent.services import RUN_JOB
from agent.sweeper import sweep
from knowledge import jobs
from knowledge.ingest import INGEST_JOB
from knowledge.models import Document, IngestJob
from tests.factories import make_document

pytestmark = pytest.mark.django_db


def _job(collection, **fields) -> IngestJob:
    document = make_document(collection=collection, status=Document.Status.PROCESSING)
    return IngestJob.objects.create(document=document, **fields)


def _run(collection, user, **fields) -> Run:
    return Run.objects.create(collection=collection, user=user, question="q", config_name="agentic",
                              config_hash="x", **fields)


def _dead_since(limit: int) -> timezone.datetime:
    return timezone.now() - timedelta(seconds=limit) - jobs.GRACE - timedelta(seconds=1)


def test_of_two_claims_of_a_queued_row_only_one_wins(collection, alice):
    for kind, row in ((INGEST_JOB, _job(collection)), (RUN_JOB, _run(collection, alice))):
        assert jobs.claim(kind, row.pk)
        assert not jobs.claim(kind, row.pk)
        row.refresh_from_db()
        assert (row.status, row.attempts) == ("running", 1)


def test_a_running_row_is_taken_over_only_once_its_hard_time_limit_has_passed(collection, alice):
    for kind, limit, row in ((INGEST_JOB, settings.INGEST_TIME_LIMIT, _job(collection)),
                             (RUN_JOB, settings.ANSWER_TIME_LIMIT, _run(collection, alice))):
        type(row).objects.filter(pk=row.pk).update(status="running", attempts=1,
                                                   started_at=timezone.now() - timedelta(seconds=limit - 30))
        assert not jobs.claim(kind, row.pk), "a live worker may still hold it"
        type(row).objects.filter(pk=row.pk).update(started_at=_dead_since(limit))
        assert jobs.claim(kind, row.pk)
        row.refresh_from_db()
        assert (row.status, row.attempts) == ("running", 2)


def test_a_row_that_killed_its_worker_max_attempts_times_gives_up_with_a_reason(collection, alice):
    job = _job(collection, status=IngestJob.Status.RUNNING, attempts=jobs.MAX_ATTEMPTS,
               started_at=_dead_since(settings.INGEST_TIME_LIMIT))
    assert not jobs.claim(INGEST_JOB, job.pk)
    job.refresh_from_db()
    job.document.refresh_from_db()
    assert job.status == IngestJob.Status.FAILED
    assert job.error == "The worker stopped unexpectedly 3 times while ingesting this file; giving up."
    assert (job.document.status, job.document.error) == (Document.Status.FAILED, job.error)


def test_finish_and_fail_never_touch_a_final_row(collection, alice):
    run = _run(collection, alice, status=Run.Status.DONE, answer="kept")
    assert not jobs.fail(RUN_JOB, run.pk, "late failure")
    assert not jobs.finish(RUN_JOB, run.pk, answer="replaced")
    run.refresh_from_db()
    assert (run.status, run.answer, run.error) == (Run.Status.DONE, "kept", "")


def test_one_sweep_requeues_resends_and_gives_up_both_kinds_by_the_same_rules(collection, alice, monkeypatch):
    sent: list[tuple[str, int]] = []
    monkeypatch.setattr(jobs, "send_task", lambda task, pk: sent.append((task.name, pk)) or True)
    now = timezone.now()
    dead_job = _job(collection, status=IngestJob.Status.RUNNING, attempts=1,
                    started_at=_dead_since(settings.INGEST_TIME_LIMIT))
    dead_run = _run(collection, alice, status=Run.Status.RUNNING, attempts=1, stage="AUDITING",
                    started_at=_dead_since(settings.ANSWER_TIME_LIMIT))
    hopeless_run = _run(collection, alice, status=Run.Status.RUNNING, attempts=jobs.MAX_ATTEMPTS,
                        started_at=_dead_since(settings.ANSWER_TIME_LIMIT))
    waiting_job = _job(collection)
    IngestJob.objects.filter(pk=waiting_job.pk).update(updated_at=now - jobs.RESEND_AFTER - timedelta(seconds=1))
    live_run = _run(collection, alice, status=Run.Status.RUNNING, attempts=1, started_at=now)

    report = sweep(now=now)

    assert (report.jobs_requeued, report.jobs_resent, report.jobs_failed) == ([dead_job.pk], [waiting_job.pk], [])
    assert (report.runs_requeued, report.runs_resent, report.runs_failed) == ([dead_run.pk], [], [hopeless_run.pk])
    assert sorted(sent) == sorted([("knowledge.ingest_document", dead_job.pk),
                                   ("knowledge.ingest_document", waiting_job.pk), ("agent.answer_run", dead_run.pk)])
    dead_run.refresh_from_db()
    assert (dead_run.status, dead_run.stage) == (Run.Status.QUEUED, "")
    assert Run.objects.get(pk=live_run.pk).status == Run.Status.RUNNING
    assert sweep(now=now).total() == 0, "a second sweep at once re-sends nothing"
