"""The embedded broker (kombu's filesystem transport, as portal.celery wraps it)."""

from __future__ import annotations

import contextlib
import time

import pytest
from kombu import Connection

from portal.celery import WholeMessageFilesystemTransport


@pytest.fixture
def connection(tmp_path):
    folder = tmp_path / "broker"
    folder.mkdir()
    # Every folder in tmp_path: kombu's control folder defaults to ./control, in the checkout.
    options = {"data_folder_in": str(folder), "data_folder_out": str(folder), "polling_interval": 0.05,
               "control_folder": str(tmp_path / "control"), "processed_folder": str(tmp_path / "processed")}
    with Connection(transport=WholeMessageFilesystemTransport, transport_options=options) as conn:
        yield conn


@pytest.fixture
def worker_state(monkeypatch):
    from celery.worker import state

    monkeypatch.setattr(state, "should_stop", None)
    monkeypatch.setattr(state, "should_terminate", None)
    return state


def _drain(conn, queue: str, timeout: float) -> tuple[list, float]:
    got: list = []
    consumer = conn.Consumer(conn.SimpleQueue(queue).queue, callbacks=[lambda body, message: got.append(body)])
    consumer.consume()
    started = time.monotonic()
    with contextlib.suppress(TimeoutError):
        conn.drain_events(timeout=timeout)
    return got, time.monotonic() - started


def test_an_idle_wait_waits_its_timeout(connection, worker_state):
    _, elapsed = _drain(connection, "idle", timeout=0.5)
    assert elapsed >= 0.45


def test_a_worker_asked_to_stop_gives_up_its_wait_at_once(connection, worker_state):
    # SIGTERM sets should_stop to the exit code 0, which is "set" although it is falsy.
    worker_state.should_stop = 0
    _, elapsed = _drain(connection, "idle", timeout=30)
    assert elapsed < 5  # was the whole timeout: Celery's loop waits 2 s per cycle


def test_a_waiting_message_is_still_delivered_while_stopping(connection, worker_state):
    connection.SimpleQueue("work").put({"n": 1})
    worker_state.should_terminate = 1
    got, _ = _drain(connection, "work", timeout=30)
    assert got == [{"n": 1}]
