"""Start, watch and stop `llama-server` for the embedded model.

The server listens on 127.0.0.1 only (no key: nothing off the machine can reach it) and
holds one slot (`--parallel 1`): a CPU answers one question at a time no faster than two
at once, so the `answer` queue has concurrency 1 per server (docs/llm.md).
Options that matter on a CPU (figures in docs/llm.md):
- `-fa on`: flash attention; without it generation was several times slower here;
- `--threads` = the cores the process may use;
- `--cache-reuse 256`: the role prompts share a long fixed prefix, which the server then
  reuses from its KV cache instead of prefilling it again.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from agent.embedded.catalog import EmbeddedError

HOST = "127.0.0.1"
CONTEXT_SIZE = 8192
CACHE_REUSE_TOKENS = 256


@dataclass(frozen=True)
class ServerSpec:
    binary: Path
    model_path: Path
    alias: str
    port: int
    threads: int = 0  # 0: the cores this process may run on
    context: int = CONTEXT_SIZE

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def command(spec: ServerSpec) -> list[str]:
    threads = spec.threads or cores()
    return [
        str(spec.binary),
        "--model", str(spec.model_path),
        "--alias", spec.alias,
        "--host", HOST,
        "--port", str(spec.port),
        "--threads", str(threads),
        "--threads-batch", str(threads),
        "--ctx-size", str(spec.context),
        "--parallel", "1",
        "--flash-attn", "on",
        "--cache-reuse", str(CACHE_REUSE_TOKENS),
        "--no-webui",
    ]


def health(base_url: str, timeout: float = 2.0) -> str:
    """"ok", "loading" or "down": what GET /health says (503 while the model loads)."""
    try:
        with urllib.request.urlopen(f"{base_url}/health", timeout=timeout) as response:
            body = json.loads(response.read() or b"{}")
            return "ok" if body.get("status", "ok") == "ok" else "loading"
    except urllib.error.HTTPError as exc:
        return "loading" if exc.code == 503 else "down"
    except (urllib.error.URLError, OSError, ValueError):
        return "down"


def start(spec: ServerSpec, *, log: Path | None = None) -> subprocess.Popen:
    """The server process, in its own process group so stop() takes its threads with it."""
    out = log.open("ab") if log else subprocess.DEVNULL
    return subprocess.Popen(command(spec), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)


def wait_ready(proc: subprocess.Popen, base_url: str, *, timeout: float = 120.0, log: Path | None = None) -> float:
    """Seconds until /health says ok; EmbeddedError if the process dies or time runs out."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-1500:] if log and log.exists() else ""
            raise EmbeddedError(f"llama-server exited with code {proc.returncode} while loading:\n{tail}")
        if health(base_url) == "ok":
            return time.monotonic() - started
        time.sleep(0.2)
    raise EmbeddedError(f"llama-server was not ready within {timeout:.0f} s")


def stop(proc: subprocess.Popen, *, timeout: float = 10.0) -> None:
    import signal

    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)
    except ProcessLookupError:
        pass
