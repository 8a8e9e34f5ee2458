"""`make run`: web, workers and beat from the Procfile, supervised; the URL and login printed once all are up."""

from __future__ import annotations

import http.client
import os
import re
import sys
import threading
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agent.supervisor import ProcessSpec, Supervisor, parse_procfile

READY_TIMEOUT = 120.0
_CELERY_WORKER = re.compile(r"\bcelery\b.*\bworker\b")


def _web_answers(host: str, port: str) -> bool:
    """Any HTTP answer to one HEAD request (no redirects followed: one line in the web log)."""
    connection = http.client.HTTPConnection(host, int(port), timeout=2)
    try:
        connection.request("HEAD", "/")
        connection.getresponse()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def _workers_answering() -> int:
    from portal.celery import app

    return len(app.control.ping(timeout=1.0) or [])


def _demo_login() -> str:
    """'demo / grounded-demo' while the demo user still has the demo password, else ''."""
    from django.contrib.auth import get_user_model

    from knowledge.management.commands.demo_setup import DEMO_PASSWORD, DEMO_USERNAME

    user = get_user_model().objects.filter(username=DEMO_USERNAME).first()
    return f"{DEMO_USERNAME} / {DEMO_PASSWORD}" if user and user.check_password(DEMO_PASSWORD) else ""


class Command(BaseCommand):
    help = ("Run the Procfile's processes (web, workers, beat) under a supervisor that restarts the one "
            "that dies; Ctrl-C or SIGTERM stops them all once.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--procfile", default=str(Path(settings.BASE_DIR) / "Procfile"))
        parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
        parser.add_argument("--port", default=os.environ.get("PORT", "8000"))
        parser.add_argument("--stop-timeout", type=float, default=10.0,
                            help="seconds a process may take to stop before it is killed")
        parser.add_argument("--no-resume", action="store_true",
                            help="do not re-queue the runs and ingest jobs left running by the previous start "
                                 "(use when other workers share this database)")

    def handle(self, *args: object, **options: object) -> None:
        path = Path(str(options["procfile"]))
        try:
            specs = parse_procfile(path.read_text())
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if not options["no_resume"]:
            self._resume(specs)
        host, port = str(options["host"]), str(options["port"])
        env = {**os.environ, "HOST": host, "PORT": port}
        supervisor = Supervisor(specs, env=env, cwd=str(settings.BASE_DIR), out=sys.stdout,
                                stop_timeout=float(options["stop_timeout"]))
        threading.Thread(target=self._announce, args=(supervisor, specs, host, port), daemon=True).start()
        code = supervisor.run()
        if code:
            raise SystemExit(code)

    def _resume(self, specs: list[ProcessSpec]) -> None:
        """Work left RUNNING when the last run_all stopped (a worker killed after the stop
        timeout) goes back to the queue now: the workers about to start are the only ones."""
        from agent.sweeper import sweep

        if not any(_CELERY_WORKER.search(s.command) for s in specs):
            return
        report = sweep(no_worker_alive=True)
        resumed = len(report.runs_requeued) + len(report.jobs_requeued)
        if resumed:
            self.stdout.write(f"Re-queued {len(report.runs_requeued)} run(s) and {len(report.jobs_requeued)} "
                              "ingest job(s) left running when Grounded last stopped.")

    def _announce(self, supervisor: Supervisor, specs: list[ProcessSpec], host: str, port: str) -> None:
        """Print the URL and the login last: once the web server answers and every worker pings back."""
        workers = sum(1 for s in specs if _CELERY_WORKER.search(s.command))
        has_web = any(s.name == "web" for s in specs)
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if supervisor.stopping:
                return
            if (not has_web or _web_answers(host, port)) and (workers == 0 or _workers_answering() >= workers):
                break
            time.sleep(0.5)
        else:
            supervisor.say(f"not every process answered within {READY_TIMEOUT:g} s; see the lines above")
            return
        url = f"http://{host}:{port}/"
        login = _demo_login()
        supervisor.say(f"Grounded is ready at {url}" + (f"  (log in as {login})" if login else "")
                       + "; Ctrl-C stops it")
