"""`manage.py ingest --collection SLUG [--create --owner USERNAME] PATH...`: load files or folders."""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser

from knowledge import services
from knowledge.management.commands._jobs import finish_jobs
from knowledge.models import Collection, IngestJob, Membership, Role

SUFFIXES = {".pdf", ".md", ".markdown", ".txt", ".html", ".htm"}


def collect_paths(paths: list[str]) -> list[Path]:
    """Files as given, and the PDF/Markdown/HTML/text files inside folders (recursively, sorted)."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
        elif path.is_file():
            found.append(path)
        else:
            raise CommandError(f"{raw} does not exist.")
    return found


def ingest_paths(*, collection: Collection, user, paths: list[Path], inline: bool, timeout: float, out=None) -> dict:
    """Upload each file through the same service as the web page, then finish the jobs."""
    summary: dict[str, list] = {"ready": [], "failed": [], "duplicate": [], "refused": [], "pending": []}
    job_ids: list[int] = []
    for path in paths:
        try:
            with path.open("rb") as handle:
                document, created = services.document_upload(
                    collection=collection, user=user, uploaded_file=File(handle, name=path.name)
                )
        except ValidationError as exc:
            summary["refused"].append({"file": str(path), "reason": " ".join(exc.messages)})
            continue
        if not created:
            summary["duplicate"].append({"file": str(path), "document": document.pk, "title": document.title})
            continue
        job_ids.append(document.jobs.order_by("-pk").values_list("pk", flat=True).first())
    jobs = finish_jobs(job_ids, inline=inline, timeout=timeout, out=out)
    for job_id in job_ids:
        job = jobs[job_id]
        entry = {"file": job.document.original_name, "document": job.document_id, "title": job.document.title}
        if job.status == IngestJob.Status.DONE:
            summary["ready"].append({**entry, "pages": job.document.pages, "chunks": job.chunks_total})
        elif job.status == IngestJob.Status.FAILED:
            summary["failed"].append({**entry, "reason": job.error})
        else:
            summary["pending"].append(entry)
    return summary


class Command(BaseCommand):
    help = "Ingest files or whole folders into a collection through the normal ingestion jobs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--collection", required=True, help="collection slug")
        parser.add_argument("--create", action="store_true", help="create the collection if it does not exist")
        parser.add_argument("--owner", help="username that uploads (and owns a created collection)")
        parser.add_argument("--inline", action="store_true",
                            help="run the jobs in this process instead of waiting for a worker")
        parser.add_argument("--timeout", type=float, default=3600, help="seconds to wait for workers")
        parser.add_argument("--json", action="store_true", help="print the summary as JSON")

    def handle(self, *args: object, **options) -> None:
        User = get_user_model()
        user = None
        if options["owner"]:
            user = User.objects.filter(username=options["owner"]).first()
            if user is None:
                raise CommandError(f"There is no user called {options['owner']!r}.")
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            if not options["create"]:
                raise CommandError(f"No collection {options['collection']!r}; add --create --owner USERNAME.")
            if user is None:
                raise CommandError("--create needs --owner USERNAME.")
            collection = services.collection_create(name=options["collection"], user=user)
            if collection.slug != options["collection"]:
                Collection.objects.filter(pk=collection.pk).update(slug=options["collection"])
                collection.slug = options["collection"]
        if user is None:
            owner = Membership.objects.filter(collection=collection, role=Role.OWNER).select_related("user").first()
            if owner is None:
                raise CommandError("The collection has no owner; pass --owner USERNAME.")
            user = owner.user
        paths = collect_paths(options["paths"])
        summary = ingest_paths(collection=collection, user=user, paths=paths, inline=options["inline"],
                               timeout=options["timeout"], out=self.stdout._out)
        if options["json"]:
            self.stdout.write(json.dumps(summary, indent=2))
            return
        for item in summary["failed"] + summary["refused"]:
            self.stdout.write(self.style.ERROR(f"failed: {item['file']}: {item['reason']}"))
        for item in summary["duplicate"]:
            self.stdout.write(f"already there: {item['file']} (as “{item['title']}”)")
        self.stdout.write(self.style.SUCCESS(
            f"{len(summary['ready'])} ready, {len(summary['failed']) + len(summary['refused'])} failed, "
            f"{len(summary['duplicate'])} duplicate" + (f", {len(summary['pending'])} still running" if summary["pending"] else "")
        ))
