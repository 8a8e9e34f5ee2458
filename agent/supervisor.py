"""A small process supervisor for `make run`: the Procfile's processes, restarted when one dies, stopped once.

Django-free; `manage.py run_all` drives it. Why not honcho (which reads the same Procfile):
it stops every process as soon as one exits and exits 130/143 on Ctrl-C/SIGTERM, while the
sweeper needs celery beat to come back after it dies, and `make run` should end with 0 when
it is asked to stop. `honcho start` still works on the Procfile for whoever prefers it.

Rules:
- each child runs in its own session, so a Ctrl-C in the terminal reaches only the
  supervisor, which then stops every child exactly once (SIGTERM to the child's main
  process, so celery shuts its own pool down; SIGKILL to the whole group after
  `stop_timeout`);
- a child that exits while nobody asked it to is restarted after a back-off (1, 2, 4 ... 30 s);
  one that keeps dying within `QUICK_EXIT` seconds of its start `MAX_QUICK_EXITS` times in a
  row is a configuration error: everything is stopped and the exit code is 1.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

QUICK_EXIT = 30.0
MAX_QUICK_EXITS = 5
MAX_BACKOFF = 30.0
_PROCFILE_LINE = re.compile(r"^([A-Za-z0-9_-]+):\s*(.+)$")


@dataclass
class ProcessSpec:
    name: str
    command: str

    def argv(self, env: Mapping[str, str]) -> list[str]:
        # $VAR and ${VAR} are expanded as a shell would (honcho runs the line in a shell);
        # no other shell syntax is supported, so the child is the command itself, not a shell.
        return [_expand(part, env) for part in shlex.split(self.command)]


def _expand(text: str, env: Mapping[str, str]) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), text)


def parse_procfile(text: str) -> list[ProcessSpec]:
    """`name: command` lines; blank lines and `#` comments are skipped."""
    specs: list[ProcessSpec] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _PROCFILE_LINE.match(line)
        if match is None:
            raise ValueError(f"Procfile line {number} is not `name: command`: {raw!r}")
        if any(s.name == match.group(1) for s in specs):
            raise ValueError(f"Procfile line {number}: the name {match.group(1)!r} is used twice")
        specs.append(ProcessSpec(match.group(1), match.group(2)))
    return specs


@dataclass
class _Child:
    spec: ProcessSpec
    process: subprocess.Popen | None = None
    started: float = 0.0
    quick_exits: int = 0
    restart_at: float | None = None
    reader: threading.Thread | None = field(default=None, repr=False)


class Supervisor:
    """Start, watch and stop the processes of a Procfile. `run()` returns the exit code."""

    def __init__(self, specs: list[ProcessSpec], *, env: Mapping[str, str] | None = None,
                 cwd: str | None = None, out: TextIO | None = None, stop_timeout: float = 10.0,
                 first_backoff: float = 1.0) -> None:
        self.children = [_Child(spec) for spec in specs]
        self.env = dict(os.environ if env is None else env)
        # Children find `python` and `celery` of the same virtualenv as the supervisor, and
        # print each line as it happens.
        self.env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + self.env.get("PATH", "")
        self.env.setdefault("PYTHONUNBUFFERED", "1")
        self.cwd = cwd
        self.out = out or sys.stdout
        self.stop_timeout = stop_timeout
        self.first_backoff = first_backoff
        self.width = max([len(s.name) for s in specs] + [len("grounded")])
        self._print_lock = threading.Lock()
        self._stop_requested = threading.Event()
        self._signals = 0
        self.exit_code = 0

    # -- output -------------------------------------------------------------------------
    def say(self, line: str, name: str = "grounded") -> None:
        stamp = time.strftime("%H:%M:%S")
        with self._print_lock:
            print(f"{stamp} {name.ljust(self.width)} | {line}", file=self.out, flush=True)

    def _pump(self, child: _Child, stream: TextIO) -> None:
        for line in iter(stream.readline, ""):
            if line.strip():
                self.say(line.rstrip("\n"), child.spec.name)
        stream.close()

    # -- life cycle -----------------------------------------------------------------------
    def _start(self, child: _Child) -> None:
        process = subprocess.Popen(
            child.spec.argv(self.env), env=self.env, cwd=self.cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace", bufsize=1,
            start_new_session=True,
        )
        child.process, child.started, child.restart_at = process, time.monotonic(), None
        child.reader = threading.Thread(target=self._pump, args=(child, process.stdout), daemon=True)
        child.reader.start()

    def pid_of(self, name: str) -> int | None:
        for child in self.children:
            if child.spec.name == name and child.process is not None and child.process.poll() is None:
                return child.process.pid
        return None

    @property
    def stopping(self) -> bool:
        return self._stop_requested.is_set()

    def request_stop(self, signum: int = signal.SIGTERM, frame: object = None) -> None:
        """Signal handler: the first signal asks for a stop; a second one kills at once."""
        self._signals += 1
        self._stop_requested.set()
        if self._signals > 1:
            self._kill_groups()

    def _watch(self, child: _Child, now: float) -> None:
        process = child.process
        if process is None:
            if child.restart_at is not None and now >= child.restart_at:
                self._start(child)
                self.say(f"restarted {child.spec.name} (pid {child.process.pid})")  # type: ignore[union-attr]
            return
        code = process.poll()
        if code is None:
            return
        child.process = None
        # A worker killed outright leaves its pool processes behind in its session.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        if child.reader is not None:
            child.reader.join(timeout=1)
        child.quick_exits = child.quick_exits + 1 if now - child.started < QUICK_EXIT else 1
        how = f"signal {-code}" if code < 0 else f"code {code}"
        if child.quick_exits >= MAX_QUICK_EXITS:
            self.say(f"{child.spec.name} exited ({how}) {child.quick_exits} times in a row soon after "
                     "starting; stopping everything")
            self.exit_code = 1
            self._stop_requested.set()
            return
        delay = min(MAX_BACKOFF, self.first_backoff * 2.0 ** (child.quick_exits - 1))
        self.say(f"{child.spec.name} exited ({how}); restarting it in {delay:g} s")
        child.restart_at = now + delay

    def run(self) -> int:
        """Start every process, restart the ones that die, and stop all on SIGINT/SIGTERM."""
        previous = {sig: signal.signal(sig, self.request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            for child in self.children:
                self._start(child)
            self.say("started " + ", ".join(f"{c.spec.name} (pid {c.process.pid})" for c in self.children
                                            if c.process is not None))
            while not self._stop_requested.wait(0.1):
                now = time.monotonic()
                for child in self.children:
                    self._watch(child, now)
            self._stop_all()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return self.exit_code

    def _stop_all(self) -> None:
        running = [c for c in self.children if c.process is not None and c.process.poll() is None]
        for child in running:
            # The main process only: celery stops its own pool children (a signal to the
            # whole group makes each pool child report that it was killed).
            with contextlib.suppress(ProcessLookupError):
                child.process.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
        deadline = time.monotonic() + self.stop_timeout
        for child in running:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=max(0.0, deadline - time.monotonic()))  # type: ignore[union-attr]
        late = [c.spec.name for c in running if c.process is not None and c.process.poll() is None]
        if late:
            self.say(f"{', '.join(late)} did not stop within {self.stop_timeout:g} s; killed")
        self._kill_groups()
        for child in self.children:
            if child.process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.process.wait(timeout=5)
            if child.reader is not None:
                child.reader.join(timeout=1)

    def _kill_groups(self) -> None:
        # Whatever is left in a child's session (a pool process whose parent died) goes too.
        for child in self.children:
            if child.process is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.process.pid, signal.SIGKILL)
