"""manage.py import_benchmark --collection SLUG --name NAME FILE: a benchmark JSON file into a collection."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from agent.benchmark import service as sb
from knowledge.models import Collection, Membership, Role


class Command(BaseCommand):
    help = "Import a benchmark file (devbench format) into a collection as a named set. All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--collection", required=True, help="collection slug")
        parser.add_argument("--name", required=True, help="name of the new benchmark set")
        parser.add_argument("--description", default="")
        parser.add_argument("--user", help="username recorded as the creator (default: a collection owner)")
        parser.add_argument(
            "--allow-unknown-documents", action="store_true",
            help="import even if expected documents are not in the collection (they are listed as a warning)",
        )

    def handle(self, *args, **opts):
        collection = Collection.objects.filter(slug=opts["collection"]).first()
        if collection is None:
            raise CommandError(f"No collection with slug {opts['collection']!r}.")
        user = None
        if opts["user"]:
            user = get_user_model().objects.filter(username=opts["user"]).first()
            if user is None:
                raise CommandError(f"No user called {opts['user']!r}.")
        else:
            owner = Membership.objects.filter(collection=collection, role=Role.OWNER).select_related("user").first()
            user = owner.user if owner else None
        try:
            text = opts["file"].read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise CommandError(f"Cannot read {opts['file']}: {exc}") from None
        try:
            bset, warnings = sb.benchmark_import(
                collection=collection, user=user, name=opts["name"], text=text,
                description=opts["description"], allow_unknown_documents=opts["allow_unknown_documents"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        for warning in warnings:
            self.stderr.write(self.style.WARNING(warning))
        self.stdout.write(self.style.SUCCESS(
            f"Imported {bset.questions.count()} questions into set {bset.name!r} of {collection.slug}."
        ))
