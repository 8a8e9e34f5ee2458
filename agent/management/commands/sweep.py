"""Requeue, re-send or fail ingest jobs and runs that no worker is going to finish."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from agent.sweeper import sweep


class Command(BaseCommand):
    help = "Sweep stuck ingest jobs and runs (also runs every minute from celery beat)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: object, **options: object) -> None:
        report = sweep()
        if options["json"]:
            self.stdout.write(json.dumps(vars(report)))
            return
        for name, ids in vars(report).items():
            self.stdout.write(f"{name.replace('_', ' ')}: {len(ids)}" + (f"  {ids}" if ids else ""))
