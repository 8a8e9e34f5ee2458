"""Requeue, re-send or fail ingest jobs and runs that no worker is going to finish; or say when that last ran."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand

from agent.sweeper import LATE_AFTER_INTERVALS, sweep, sweep_health


class Command(BaseCommand):
    help = ("Sweep stuck ingest jobs and runs (celery beat does this every PORTAL_SWEEP_INTERVAL seconds); "
            "--status says when beat's last sweep ran and exits 1 when it is late.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument("--status", action="store_true",
                            help="do not sweep: show the last periodic sweep; exit code 1 when it is late")

    def handle(self, *args: object, **options: object) -> None:
        if options["status"]:
            self._status(as_json=bool(options["json"]))
            return
        report = sweep()
        if options["json"]:
            self.stdout.write(json.dumps(vars(report)))
            return
        for name, ids in vars(report).items():
            self.stdout.write(f"{name.replace('_', ' ')}: {len(ids)}" + (f"  {ids}" if ids else ""))

    def _status(self, *, as_json: bool) -> None:
        health = sweep_health()
        if as_json:
            self.stdout.write(json.dumps({
                "last_sweep": health.last_at.isoformat() if health.last_at else None,
                "age_seconds": health.age_seconds, "interval_seconds": health.interval, "late": health.late,
                "counts": health.counts,
            }))
        elif health.last_at is None:
            self.stdout.write(f"last sweep: none recorded (beat sends one every {health.interval} s)")
        else:
            self.stdout.write(f"last sweep: {health.last_at:%Y-%m-%d %H:%M:%S %Z} ({health.age_seconds} s ago), "
                              f"every {health.interval} s")
            self.stdout.write(f"it moved: {health.moved}")
        if health.late:
            self.stderr.write(
                f"The sweeper is late (no periodic sweep for over {LATE_AFTER_INTERVALS} intervals): is celery "
                "beat running, and does a worker take the `sweep` queue?")
            raise SystemExit(1)
