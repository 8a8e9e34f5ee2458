"""Create the demo user and the "Demo" collection for `make run` (idempotent)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from knowledge import services
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
        self.stdout.write(f"Demo login: {DEMO_USERNAME} / {DEMO_PASSWORD}  (collection: {collection.name})")
