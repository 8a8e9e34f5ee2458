"""The Celery app. Settings live in Django settings as CELERY_*; queues are `ingest` and `answer`."""

from __future__ import annotations

import os
from pathlib import Path

from celery import Celery
from kombu import Exchange, Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")

app = Celery("portal")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each queue names its own exchange and routing key, so the worker's banner and the
# broker's bindings say what they mean (the defaults showed both on the "answer" exchange).
app.conf.task_queues = (
    Queue("ingest", Exchange("ingest"), routing_key="ingest"),
    Queue("answer", Exchange("answer"), routing_key="answer"),
)
app.autodiscover_tasks()


@app.on_after_configure.connect
def _make_broker_folders(sender: Celery, **kwargs: object) -> None:
    # kombu's filesystem transport expects its folders to exist.
    options = sender.conf.broker_transport_options or {}
    for key in ("data_folder_in", "data_folder_out", "processed_folder", "control_folder"):
        if key in options:
            Path(options[key]).mkdir(parents=True, exist_ok=True)
