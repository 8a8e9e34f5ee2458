"""Celery tasks of the knowledge app: thin wrappers that load ids and call knowledge.ingest or
knowledge.indexing."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

# Both tasks may run as long as an ingestion, and are safe to deliver twice.
_INGEST_LIKE = {
    "acks_late": True,
    "ignore_result": True,
    "soft_time_limit": settings.INGEST_SOFT_TIME_LIMIT,
    "time_limit": settings.INGEST_TIME_LIMIT,
}


@shared_task(name="knowledge.ingest_document", queue="ingest", **_INGEST_LIKE)
def ingest_document(job_id: int) -> None:
    """Run one IngestJob. Safe to deliver twice: the job is claimed with a conditional
    UPDATE, so a second delivery of a running or finished job does nothing."""
    from knowledge.ingest import job_run

    job_run(job_id=job_id)


@shared_task(name="knowledge.merge_index", queue="sweep", **_INGEST_LIKE)
def merge_index(collection_id: int) -> None:
    """Fold a collection's index segments into one (knowledge.indexing.merge.index_merge), off the
    ingest queue so uploads never wait in line behind it. Safe to deliver twice: a second
    run finds one segment and does nothing; a collection that is gone is skipped."""
    import logging

    from knowledge.indexing.merge import index_merge
    from knowledge.models import Collection

    collection = Collection.objects.filter(pk=collection_id).first()
    if collection is None:
        logging.getLogger(__name__).info("merge of collection %s skipped: it is gone", collection_id)
        return
    index_merge(collection=collection)
