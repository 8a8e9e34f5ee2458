"""The Celery app. Settings live in Django settings as CELERY_*; queues are `ingest`, `answer` and `sweep`."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from queue import Empty
from time import monotonic, sleep

from celery import Celery
from kombu import Exchange, Queue
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each queue names its own exchange and routing key, so the worker's banner and the
# broker's bindings say what they mean (the defaults showed both on the "answer" exchange).
app.conf.task_queues = (
    Queue("ingest", Exchange("ingest"), routing_key="ingest"),
    Queue("answer", Exchange("answer"), routing_key="answer"),
    # The sweeper (agent.sweep, sent by celery beat); every worker should take it.
    Queue("sweep", Exchange("sweep"), routing_key="sweep"),
)
app.autodiscover_tasks()


@app.on_after_configure.connect
def _make_broker_folders(sender: Celery, **kwargs: object) -> None:
    # kombu's filesystem transport expects its folders to exist, and beat its schedule's
    # folder (var/ is not there yet on a fresh clone with PostgreSQL and Redis configured).
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
        if key in options:
            Path(options[key]).mkdir(parents=True, exist_ok=True)
    if sender.conf.beat_schedule_filename:
        Path(sender.conf.beat_schedule_filename).parent.mkdir(parents=True, exist_ok=True)


class _WholeMessageChannel(filesystem.Channel):
    """kombu's filesystem channel, but a message file appears whole or not at all.

    kombu creates `<n>_<uuid>.<queue>.msg` and then writes it, and a consumer takes files
    without the writer's lock: a worker polling at that instant took an empty file and
    stopped ("Unrecoverable error: JSONDecodeError"), which two workers polling `sweep` made
    frequent. The message is written under a hidden name and renamed, atomically, into place.
    """

    def _put(self, queue: str, payload: object, **kwargs: object) -> None:
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        folder = Path(self.data_folder_out)
        # A leading dot: `_get` only takes names whose part after the first dot is `<queue>.msg`.
        partial = folder / f".{name}.part"
        partial.write_bytes(str_to_bytes(dumps(payload)))
        partial.rename(folder / name)


class WholeMessageFilesystemTransport(filesystem.Transport):
    """The embedded broker (settings.CELERY_BROKER_TRANSPORT when PORTAL_REDIS_URL is unset)."""

    Channel = _WholeMessageChannel

    def drain_events(self, connection: object, timeout: float | None = None) -> None:
        """kombu's polling loop, but it gives up its wait once the worker is asked to stop.

        Celery's loop for polling transports waits up to 2 s for a message before it looks at
        its shutdown flag, so an idle worker took seconds to stop after SIGTERM (Ctrl-C in
        `make run`, every worker test's teardown). A message that is there is still delivered.
        """
        from celery.worker import state

        started = monotonic()
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                # As celery.worker.state.maybe_shutdown reads them: a flag is set when it is neither
                # None nor False (0, a clean exit code, counts as set).
                stopping = any(flag is not None and flag is not False for flag in (state.should_stop, state.should_terminate))
                if stopping or (timeout is not None and monotonic() - started >= timeout):
                    raise TimeoutError() from None
                interval = self.polling_interval or 0
                sleep(interval if timeout is None else min(interval, timeout))
