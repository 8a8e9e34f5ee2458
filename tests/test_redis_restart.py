"""Restart Redis in the middle of a stream of submissions: nothing is lost.

A private redis-server (no persistence, like the one CI runs) is stopped while questions
keep arriving and started again. Submissions made while it is down return at once with
a QUEUED row; messages that died with Redis are re-sent by the sweeper; the worker
reconnects by itself. Every run ends DONE exactly once.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from agent.models import Run
from agent.sweeper import sweep
from tests.conftest import skip_or_fail
from tests.test_faults import _report

SUBMISSIONS = 12


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrivateRedis:
    def __init__(self, port: int, workdir) -> None:
        self.port, self.workdir, self.proc = port, workdir, None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.workdir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("private redis-server did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


@pytest.fixture
def private_redis(tmp_path, monkeypatch, settings):
    if shutil.which("redis-server") is None:
        skip_or_fail("redis-server is not installed")
    from portal.celery import app
    from tests.conftest import _reset_celery_connections

    redis = PrivateRedis(_free_port(), tmp_path)
    redis.start()
    url = f"redis://127.0.0.1:{redis.port}/0"
    monkeypatch.setenv("PORTAL_REDIS_URL", url)  # the worker started next reads it
    original = (app.conf.broker_url, app.conf.broker_transport, app.conf.broker_transport_options)
    app.conf.broker_url = url
    # Without PORTAL_REDIS_URL the settings name the filesystem transport, which would
    # override the URL's scheme: the test process must publish to this Redis too.
    app.conf.broker_transport = None
    app.conf.broker_transport_options = {"visibility_timeout": 3600}
    _reset_celery_connections(app)
    yield redis
    redis.stop()
    app.conf.broker_url, app.conf.broker_transport, app.conf.broker_transport_options = original
    _reset_celery_connections(app)



@pytest.mark.django_db(transaction=True)
def test_runs_submitted_across_a_redis_restart_all_finish(private_redis, ready_collection, alice,
                                                          celery_worker_process):
    from agent.services import run_create

    run_ids, slowest_submit = [], 0.0
    for i in range(SUBMISSIONS):
        if i == SUBMISSIONS // 3:
            private_redis.stop()
        if i == 2 * SUBMISSIONS // 3:
            private_redis.start()
        started = time.monotonic()
        run = run_create(collection=ready_collection, user=alice, question=f"What does doc2query predict? #{i}",
                         config_name="hybrid")
        slowest_submit = max(slowest_submit, time.monotonic() - started)
        run_ids.append(run.pk)
    assert slowest_submit < 5, "a submission must return promptly even with the broker down"

    def all_final() -> bool:
        if Run.objects.filter(pk__in=run_ids).exclude(status__in=Run.FINAL).exists():
            # What Redis lost when it stopped comes back through the sweeper.
            sweep(now=timezone.now() + timedelta(minutes=3))
            return False
        return True

    celery_worker_process(all_final, timeout=180, interval=1.0)
    statuses = list(Run.objects.filter(pk__in=run_ids).values_list("status", "attempts"))
    _report("redis_restart", submitted=SUBMISSIONS, slowest_submit_s=round(slowest_submit, 2),
            done=sum(s == Run.Status.DONE for s, _ in statuses))
    assert len(statuses) == SUBMISSIONS
    assert all(status == Run.Status.DONE for status, _ in statuses), statuses
    assert all(attempts == 1 for _, attempts in statuses), "each run is answered exactly once"
