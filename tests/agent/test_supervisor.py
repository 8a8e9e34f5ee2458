"""agent.supervisor with tiny Python children: restart, give up, stop once, kill the stubborn.

No Django: the supervisor of `make run` is plain process plumbing (the real processes are
in tests/portal/test_processes.py)."""

from __future__ import annotations

import io
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from agent.supervisor import MAX_QUICK_EXITS, ProcessSpec, Supervisor, parse_procfile

PY = sys.executable


def _py(code: str) -> str:
    return f'{PY} -c "{code}"'


def _stop_after(supervisor: Supervisor, seconds: float) -> None:
    threading.Timer(seconds, supervisor.request_stop).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"


def test_procfile_lines_are_parsed_and_variables_expanded():
    specs = parse_procfile("# comment\n\nweb: python manage.py runserver ${HOST}:$PORT\nbeat: celery -A portal beat\n")
    assert [s.name for s in specs] == ["web", "beat"]
    assert specs[0].argv({"HOST": "127.0.0.1", "PORT": "8000"}) == [
        "python", "manage.py", "runserver", "127.0.0.1:8000"]


@pytest.mark.parametrize("text", ["web python x", "web: a\nweb: b"])
def test_a_bad_procfile_is_refused_with_the_line(text):
    with pytest.raises(ValueError, match="line"):
        parse_procfile(text)


def test_a_process_that_keeps_dying_stops_everything_with_exit_code_1(tmp_path):
    out = io.StringIO()
    pid_file = tmp_path / "sleeper.pid"
    sleeper = _py(f"import os, time; open(r'{pid_file}', 'w').write(str(os.getpid())); time.sleep(60)")
    supervisor = Supervisor([ProcessSpec("sleeper", sleeper), ProcessSpec("crasher", _py("raise SystemExit(3)"))],
                            out=out, first_backoff=0.01)
    started = time.monotonic()
    assert supervisor.run() == 1
    assert time.monotonic() - started < 20
    log = out.getvalue()
    assert log.count("crasher exited (code 3); restarting it") == MAX_QUICK_EXITS - 1
    assert f"crasher exited (code 3) {MAX_QUICK_EXITS} times in a row" in log
    assert not _alive(int(pid_file.read_text()))


def test_a_stop_sends_one_sigterm_to_each_process_and_exits_0(tmp_path):
    out = io.StringIO()
    counts = tmp_path / "sigterms"
    child = _py(
        "import signal, sys, time\n"
        f"signal.signal(signal.SIGTERM, lambda *a: (open(r'{counts}', 'a').write('x'), time.sleep(0.3), sys.exit(0)))\n"
        "print('up', flush=True)\n"
        "time.sleep(60)")
    supervisor = Supervisor([ProcessSpec("one", child), ProcessSpec("two", child)], out=out)
    _stop_after(supervisor, 1.5)
    assert supervisor.run() == 0
    assert counts.read_text() == "xx"  # one SIGTERM each, even though the handler takes its time
    assert re.search(r"one +\| up", out.getvalue())
    assert "restarting" not in out.getvalue()


def test_a_process_that_ignores_sigterm_is_killed_after_the_stop_timeout(tmp_path):
    out = io.StringIO()
    stubborn = _py("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)")
    supervisor = Supervisor([ProcessSpec("stubborn", stubborn)], out=out, stop_timeout=0.5)
    _stop_after(supervisor, 1.0)
    started = time.monotonic()
    assert supervisor.run() == 0
    assert time.monotonic() - started < 10
    assert "stubborn did not stop within 0.5 s; killed" in out.getvalue()


def test_a_process_killed_from_outside_is_restarted(tmp_path):
    out = io.StringIO()
    supervisor = Supervisor([ProcessSpec("beat", _py("import time; time.sleep(60)"))], out=out, first_backoff=0.01)

    def kill_then_stop() -> None:
        deadline = time.monotonic() + 10
        while supervisor.pid_of("beat") is None and time.monotonic() < deadline:
            time.sleep(0.05)
        first = supervisor.pid_of("beat")
        os.kill(first, signal.SIGKILL)
        while supervisor.pid_of("beat") in (None, first) and time.monotonic() < deadline:
            time.sleep(0.05)
        supervisor.request_stop()

    threading.Thread(target=kill_then_stop).start()
    assert supervisor.run() == 0
    assert "beat exited (signal 9); restarting it" in out.getvalue()
    assert "restarted beat (pid" in out.getvalue()
