"""Create the demo user and the "Demo" collection for `make run` (idempotent)."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from knowledge import services
from knowledge.management.commands.ingest import ingest_paths
from knowledge.models import Collection

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "grounded-demo"


class Command(BaseCommand):
    help = "Create the demo user and a Demo collection loaded with the project's own docs."

    def handle(self, *args: object, **options: object) -> None:
        User = get_user_model()
        user, created = User.objects.get_or_create(username=DEMO_USERNAME, defaults={"email": "demo@example.org"})
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        collection = Collection.objects.filter(slug="demo").first()
        if collection is None:
            collection = services.collection_create(name="Demo", user=user, description="Grounded's own documentation.")
        # The project's own docs are the demo corpus, so a new user can ask at once. Run
        # inline: `make run` starts the worker only after this command. Files already there
        # (same sha256) are skipped, so running this twice is cheap.
        docs = sorted((settings.BASE_DIR / "docs").glob("*.md"))
        if docs:
            summary = ingest_paths(collection=collection, user=user, paths=docs, inline=True, timeout=0)
            self.stdout.write(
                f"Demo corpus: {len(summary['ready'])} ingested, {len(summary['duplicate'])} already there, "
                f"{len(summary['failed']) + len(summary['refused'])} failed"
            )
        self.stdout.write(f"Demo login: {DEMO_USERNAME} / {DEMO_PASSWORD}  (collection: {collection.name})")
