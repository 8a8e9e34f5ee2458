"""The Procfile (`make run`) and docker-compose.yml start every process the portal needs, and
every queue a task is sent to has a consumer there."""

from __future__ import annotations

import re
import shlex

import yaml

from agent.supervisor import parse_procfile
from portal.celery import app
from tests.conftest import ROOT


def _worker_queues(command: str) -> set[str]:
    argv = shlex.split(command)
    return set(argv[argv.index("-Q") + 1].split(",")) if "worker" in argv else set()


def _task_queues() -> set[str]:
    app.loader.import_default_modules()
    return {task.queue for name, task in app.tasks.items() if not name.startswith("celery.") and task.queue}


def test_the_procfile_runs_web_beat_and_a_consumer_for_every_task_queue():
    specs = {s.name: s.command for s in parse_procfile((ROOT / "Procfile").read_text())}
    assert {"web", "beat"} <= specs.keys()
    assert "celery -A portal beat" in specs["beat"]
    assert " -B" not in " ".join(specs.values()), "beat runs as its own supervised process"
    consumed = set().union(*(_worker_queues(c) for c in specs.values()))
    assert _task_queues() == {"ingest", "answer", "sweep"}
    assert _task_queues() <= consumed
    # Every worker takes the sweeper's queue, so a busy one never delays it.
    for command in specs.values():
        if _worker_queues(command):
            assert "sweep" in _worker_queues(command), command
    answer = next(c for c in specs.values() if "answer" in _worker_queues(c))
    assert re.search(r"--concurrency 1\b", answer), "one answer at a time: a CPU model needs the whole machine"


def test_docker_compose_restarts_every_service_and_runs_beat_and_every_queue():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {name for name, s in services.items() if s.get("restart") != "unless-stopped"} == set()
    commands = [s["command"] for s in services.values() if isinstance(s.get("command"), str)]
    assert any(c.startswith("celery -A portal beat") for c in commands)
    consumed = set().union(*(_worker_queues(c) for c in commands))
    assert _task_queues() <= consumed
