"""`manage.py reingest --collection SLUG`: re-run extraction and chunking for every document."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge import services
from knowledge.management.commands._jobs import finish_jobs
from knowledge.models import Collection, IngestJob


class Command(BaseCommand):
    help = "Re-extract and re-chunk every document of a collection (after a parser or chunker change)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True)
        parser.add_argument("--inline", action="store_true", help="run the jobs here instead of waiting for a worker")
        parser.add_argument("--timeout", type=float, default=3600)
        parser.add_argument("--reembed", action="store_true",
                            help="first switch the collection to the configured embedding model")

    def handle(self, *args: object, **options) -> None:
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            raise CommandError(f"No collection {options['collection']!r}.")
        if options["reembed"]:
            count = services.collection_reembed(collection=collection)
            self.stdout.write(f"re-embedded {count} passages with {collection.embedding_model}")
        job_ids = [services.document_reingest(document=d).pk for d in collection.documents.order_by("pk")]
        jobs = finish_jobs(job_ids, inline=options["inline"], timeout=options["timeout"], out=self.stdout._out)
        done = sum(1 for j in jobs.values() if j.status == IngestJob.Status.DONE)
        failed = [j for j in jobs.values() if j.status == IngestJob.Status.FAILED]
        for job in failed:
            self.stdout.write(self.style.ERROR(f"failed: {job.document.title}: {job.error}"))
        self.stdout.write(self.style.SUCCESS(f"{done} re-ingested, {len(failed)} failed, {len(jobs) - done - len(failed)} still running"))
