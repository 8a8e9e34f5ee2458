"""Celery tasks of the knowledge app: thin wrappers that load ids and call knowledge.ingest."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings


@shared_task(
    name="knowledge.ingest_document",
    queue="ingest",
    acks_late=True,
    ignore_result=True,
    soft_time_limit=settings.INGEST_SOFT_TIME_LIMIT,
    time_limit=settings.INGEST_TIME_LIMIT,
)
def ingest_document(job_id: int) -> None:
    """Run one IngestJob. Safe to deliver twice: the job is claimed with a conditional
    UPDATE, so a second delivery of a running or finished job does nothing."""
    from knowledge.ingest import job_run

    job_run(job_id=job_id)
