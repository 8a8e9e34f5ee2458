"""Redis redelivers the task of a worker killed outright, after visibility_timeout.

visibility_timeout is set just above the longest task's hard time limit (settings), so a
redelivered task never meets a live first attempt; the claim then takes the dead run over.
Here the limits are shrunk to seconds so the whole cycle fits in a test.
"""

from __future__ import annotations

import os
import time

import pytest

from agent.models import Run

pytestmark = pytest.mark.skipif(
    not os.environ.get("PORTAL_REDIS_URL"),
    reason="redelivery after visibility_timeout is a Redis feature; the filesystem transport "
    "never redelivers (the sweeper covers it: tests/test_faults.py)",
)


@pytest.fixture
def short_limits(monkeypatch, settings):
    # Read by the worker process started afterwards (it copies os.environ).
    monkeypatch.setenv("PORTAL_ANSWER_SOFT_TIME_LIMIT", "8")
    monkeypatch.setenv("PORTAL_ANSWER_TIME_LIMIT", "10")
    monkeypatch.setenv("PORTAL_VISIBILITY_TIMEOUT", "12")



@pytest.mark.django_db(transaction=True)
def test_a_killed_workers_run_is_redelivered_and_finished(short_limits, ready_collection, alice,
                                                            celery_worker_process):
    from agent.services import run_create

    for attempt in range(5):
        run = run_create(collection=ready_collection, user=alice, question=f"How are documents expanded? ({attempt})",
                         config_name="agentic")
        celery_worker_process(lambda: Run.objects.get(pk=run.pk).status != Run.Status.QUEUED, timeout=60,
                              interval=0.01)
        celery_worker_process.kill()
        if Run.objects.get(pk=run.pk).status == Run.Status.RUNNING:
            break
        celery_worker_process.start()  # it finished before the kill landed: try again
    else:
        pytest.fail("five runs finished before the kill landed; redelivery was not exercised")
    # Past visibility_timeout (12 s) and the claim's dead-attempt threshold (hard limit + 5 s).
    time.sleep(16)
    celery_worker_process.start()  # no sweeper here: only the broker brings the task back
    celery_worker_process(lambda: Run.objects.get(pk=run.pk).status in Run.FINAL, timeout=90)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    assert run.attempts == 2
