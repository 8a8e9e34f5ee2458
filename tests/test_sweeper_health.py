"""The sweeper's health is visible: `manage.py sweep --status`, the staff status page, and a
warning on the page of a run older than its time limit. (tests/portal/test_processes.py runs
the real beat and workers; these check what each view says.)"""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from agent.models import Run
from agent.sweeper import SweepReport, sweep_record

pytestmark = pytest.mark.django_db


def _status() -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("sweep", "--status", stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_sweep_status_fails_when_no_periodic_sweep_was_ever_recorded():
    code, out, err = _status()
    assert code == 1
    assert "last sweep: none recorded" in out
    assert "is celery beat running" in err


def test_the_beat_task_records_its_sweep_and_status_reports_it(collection, alice):
    from agent.tasks import sweep as sweep_task

    stale = Run.objects.create(collection=collection, user=alice, question="q", config_name="agentic",
                               config_hash="x", status=Run.Status.RUNNING, attempts=3,
                               started_at=timezone.now() - timedelta(hours=1))
    sweep_task()  # the task body, synchronously
    code, out, _ = _status()
    assert code == 0, out
    assert "(0 s ago), every 60 s" in out
    assert "runs failed 1" in out
    stale.refresh_from_db()
    assert stale.status == Run.Status.FAILED


def test_sweep_status_is_late_after_three_intervals_without_a_sweep(settings):
    sweep_record(SweepReport(), now=timezone.now() - timedelta(seconds=3 * settings.SWEEP_INTERVAL + 5))
    code, out, err = _status()
    assert code == 1
    assert "it moved: nothing" in out
    assert "The sweeper is late" in err


def test_the_sweep_task_sets_both_time_limits_in_order():
    from agent.tasks import sweep as sweep_task

    # A hard limit alone inherits CELERY_TASK_SOFT_TIME_LIMIT (240 s) and beat cannot send it.
    assert sweep_task.soft_time_limit and sweep_task.time_limit
    assert sweep_task.soft_time_limit < sweep_task.time_limit
    assert sweep_task.queue == "sweep"


def test_the_status_page_is_for_staff_only(client, alice, password, django_user_model):
    url = reverse("agent:operations_status")
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(alice)
    assert client.get(url).status_code == 404
    staff = django_user_model.objects.create_user("operator", password=password, is_staff=True)
    client.force_login(staff)
    page = client.get(url).content.decode()
    assert 'data-sweeper="late"' in page
    assert "none recorded" in page

    sweep_record(SweepReport(runs_requeued=[7]))
    page = client.get(url).content.decode()
    assert 'data-sweeper="ok"' in page
    assert "runs requeued 1" in page


def test_the_status_page_lists_runs_older_than_their_time_limit(client, collection, alice, django_user_model,
                                                                 password, settings):
    old = Run.objects.create(collection=collection, user=alice, question="old", config_name="agentic",
                             config_hash="x", status=Run.Status.QUEUED)
    Run.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(seconds=settings.ANSWER_TIME_LIMIT + 60))
    Run.objects.create(collection=collection, user=alice, question="new", config_name="agentic", config_hash="x",
                       status=Run.Status.QUEUED)
    client.force_login(django_user_model.objects.create_user("operator", password=password, is_staff=True))
    page = client.get(reverse("agent:operations_status")).content.decode()
    assert f'<td data-late="runs">1: {old.pk}</td>' in page


def test_a_run_older_than_its_time_limit_warns_on_its_page(client, collection, alice, settings):
    run = Run.objects.create(collection=collection, user=alice, question="Where is it?", config_name="agentic",
                             config_hash="x", status=Run.Status.QUEUED)
    client.force_login(alice)
    url = reverse("agent:run_detail", kwargs={"pk": run.pk})
    assert "data-run-overdue" not in client.get(url).content.decode()
    status_url = reverse("agent:run_status", kwargs={"pk": run.pk})
    cursor = client.get(status_url).json()["updated"]

    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=settings.ANSWER_TIME_LIMIT + 1))
    page = client.get(url).content.decode()
    assert "data-run-overdue" in page
    assert "the sweeper has not run yet: ask an operator to check celery beat" in page
    # The live page learns it too: the poll cursor changes and the summary carries the warning.
    polled = client.get(status_url, {"since": cursor}).json()
    assert polled["updated"] != cursor
    assert "data-run-overdue" in polled["fragments"]["summary"]

    sweep_record(SweepReport())
    assert "it last ran 0 s ago" in client.get(url).content.decode()
