"""Queueing work after commit, without losing it when the broker is down.

The database row (IngestJob, Run) is the truth: it is written QUEUED first, and the task
message is only a nudge. When the broker cannot be reached the nudge is logged and
dropped; the web request still returns promptly, and the sweeper (agent.sweeper) re-sends
the task for every row still QUEUED once the broker is back.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction

logger = logging.getLogger(__name__)


def send_task(task: Any, *args: Any) -> bool:
    """Publish `task(*args)` now; False (logged) when the broker is unreachable."""
    try:
        task.apply_async(args=args)
    except Exception as exc:  # kombu/redis raise many types for "broker down"
        logger.warning("could not queue %s%r (will be re-sent by the sweeper): %s", task.name, args, exc)
        return False
    return True


def send_task_on_commit(task: Any, *args: Any) -> None:
    """Publish `task(*args)` once the current transaction commits (never before)."""
    transaction.on_commit(lambda: send_task(task, *args))
