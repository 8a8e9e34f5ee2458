"""`make run`'s processes for real: `manage.py run_all` with the Procfile (web, two workers, beat).

These start the same command `make run` ends with, against the test database, and check
what a person at the terminal sees: the URL and login last, the sweeper at work, no error
line, one quiet stop with exit code 0 on SIGTERM or Ctrl-C, and beat back after a kill -9.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.utils import timezone

from agent.models import Run
from tests.conftest import ROOT, subprocess_env

pytestmark = pytest.mark.django_db(transaction=True)

# What must never appear in `make run`'s output, from start to stop.
ERROR_LINE = re.compile(r"Traceback|\bERROR\b|CRITICAL|Segmentation fault|\b\w+Error:|No hostname was supplied")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class MakeRun:
    log: Path
    env: dict
    process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "run_all", "--host", "127.0.0.1", "--port", str(_free_port())],
            cwd=ROOT, env=self.env, stdout=self.log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = 90.0) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = re.search(pattern, self.output())
            if match:
                return match
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError(f"no {pattern!r} in the output of run_all:\n{self.output()[-5000:]}")

    def pid(self, name: str) -> int:
        return int(self.wait_for(rf"\b{name} \(pid (\d+)\)").group(1))

    def stop(self, sig: int) -> int:
        os.kill(self.process.pid, sig)
        return self.process.wait(timeout=40)


@pytest.fixture
def make_run(settings, tmp_path):
    """`manage.py run_all` as `make run` runs it (sweeping every 5 s): `.start()`; stopped afterwards."""
    with subprocess_env(settings, tmp_path) as env:
        env["PORTAL_SWEEP_INTERVAL"] = "5"
        env["PORTAL_VAR_DIR"] = str(tmp_path / "var")
        make_run = MakeRun(tmp_path / "run_all.log", env)
        try:
            yield make_run
        finally:
            process = make_run.process
            if process is not None and process.poll() is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    os.kill(process.pid, signal.SIGTERM)
                    process.wait(timeout=30)
            if process is not None and process.poll() is None:
                os.kill(process.pid, signal.SIGINT)  # a second signal kills every child at once
                process.wait(timeout=10)


def _run(collection, user, **fields) -> Run:
    from agent.configs import config_hash, config_record, get_config

    config = config_record(get_config("agentic"), backend=settings.LLM_BACKEND, model=settings.LLM_MODEL)
    return Run.objects.create(collection=collection, user=user, question="Is anyone there?", config_name="agentic",
                              config=config, config_hash=config_hash(config), **fields)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); read its state.
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    return True


def test_make_run_sweeps_a_stale_run_prints_the_login_last_and_stops_once_on_sigterm(
        make_run, collection, alice, django_user_model):
    from knowledge.management.commands.demo_setup import DEMO_PASSWORD, DEMO_USERNAME

    # Hashed as the portal hashes it: run_all checks the password in its own process, with
    # the portal's hashers, not the tests' fast one (tests/conftest.py _fast_passwords).
    django_user_model.objects.create(username=DEMO_USERNAME,
                                     password=make_password(DEMO_PASSWORD, hasher="pbkdf2_sha256"))
    make_run.start()
    ready = make_run.wait_for(r"Grounded is ready at (http://\S+/)  \(log in as demo / grounded-demo\)")
    pids = [make_run.pid(name) for name in ("web", "ingest", "answer", "beat")]
    # The login line comes after the start-up lines of every process (web, both workers' queue
    # lists, beat's configuration), not buried under them.
    output = make_run.output()
    for banner_line in (r"Starting development server at", r"\.> answer\s+exchange=", r"\.> ingest\s+exchange=",
                        r"\. scheduler -> "):
        last = [m.start() for m in re.finditer(banner_line, output)]
        assert last and last[-1] < ready.start(), (banner_line, output[-3000:])
    with urllib.request.urlopen(ready.group(1) + "accounts/login/", timeout=5) as response:
        assert response.status == 200

    # A run whose worker died long ago, past its hard time limit: only the sweeper can move it.
    stale_start = timezone.now() - timedelta(hours=1)
    run = _run(collection, alice, status=Run.Status.RUNNING, started_at=stale_start, attempts=1)
    # Beat sends agent.sweep every 5 s; a worker runs it and the stale run is re-queued
    # (and then claimed again by the answer worker: a new started_at, a second attempt).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.attempts > 1 or run.status != Run.Status.RUNNING:
            break
        time.sleep(0.5)
    else:
        pytest.fail(f"the stale run was never swept; output:\n{make_run.output()[-5000:]}")
    assert run.status != Run.Status.RUNNING or run.started_at > stale_start
    # ... and the answer worker, which got the re-sent task, finishes it (on an empty collection).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not Run.objects.get(pk=run.pk).is_final:
        time.sleep(0.5)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE and run.attempts == 2, (run.status, run.error)

    status = subprocess.run([sys.executable, "manage.py", "sweep", "--status"], cwd=ROOT, env=make_run.env,
                            capture_output=True, text=True, timeout=60)
    assert status.returncode == 0, status.stdout + status.stderr
    assert re.search(r"last sweep: .* \(\d+ s ago\)", status.stdout), status.stdout

    assert make_run.stop(signal.SIGTERM) == 0
    output = make_run.output()
    assert not ERROR_LINE.search(output), output
    assert output.count("Warm shutdown") <= 2, output
    assert not [pid for pid in pids if _alive(pid)], "a process outlived run_all"


def test_work_left_running_resumes_at_start_beat_comes_back_after_kill_9_and_ctrl_c_stops_quietly(
        make_run, collection, alice):
    # Left RUNNING a moment ago by a worker that was killed when Grounded last stopped.
    interrupted = _run(collection, alice, status=Run.Status.RUNNING, started_at=timezone.now(), attempts=1)
    make_run.start()
    make_run.wait_for(r"Re-queued 1 run\(s\) and 0 ingest job\(s\) left running")
    make_run.wait_for(r"Grounded is ready at")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not Run.objects.get(pk=interrupted.pk).is_final:
        time.sleep(0.5)
    interrupted.refresh_from_db()
    assert interrupted.status == Run.Status.DONE and interrupted.attempts == 2, (interrupted.status, interrupted.error)

    beat = make_run.pid("beat")
    os.kill(beat, signal.SIGKILL)
    restarted = int(make_run.wait_for(r"restarted beat \(pid (\d+)\)", timeout=30).group(1))
    assert restarted != beat
    assert _alive(restarted)
    assert re.search(r"beat exited \(signal 9\); restarting it", make_run.output())

    pids = [make_run.pid(name) for name in ("web", "ingest", "answer")] + [restarted]
    assert make_run.stop(signal.SIGINT) == 0
    output = make_run.output()
    assert not ERROR_LINE.search(output), output
    assert not [pid for pid in pids if _alive(pid)], "a process outlived run_all"
