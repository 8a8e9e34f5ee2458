"""The embedded model server and a check of whichever LLM backend is configured.

    manage.py llm install [--model KEY]   # build llama-server and assemble the model (make llm)
    manage.py llm serve                   # run llama-server in the foreground (make run supervises it)
    manage.py llm check [--json]          # backend, model, server, one schema-constrained call

`serve` builds or installs what is missing first, with progress lines. When the backend is
not `embedded` it prints one line saying so and waits quietly for SIGINT/SIGTERM (exit 0),
so a Procfile can always list it. See docs/llm.md.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from agent.embedded.catalog import CHOICES, EmbeddedError


class Command(BaseCommand):
    help = "Install, serve or check the language model backend (docs/llm.md)."

    def add_arguments(self, parser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        install = sub.add_parser("install", help="build llama-server and assemble the embedded model")
        install.add_argument("--model", choices=CHOICES, default=None,
                             help="a shipped model (default: PORTAL_LLM_EMBEDDED_MODEL)")
        sub.add_parser("serve", help="run the embedded model server in the foreground")
        check = sub.add_parser("check", help="one schema-constrained call through the configured backend")
        check.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        try:
            if action == "install":
                self._install(options["model"] or settings.LLM_EMBEDDED_MODEL)
            elif action == "serve":
                self._serve()
            else:
                report = check_backend()
                if options["json"]:
                    self.stdout.write(json.dumps(report, indent=2))
                else:
                    for key, value in report.items():
                        self.stdout.write(f"{key}: {value}")
                if not report["ok"]:
                    sys.exit(1)
        except EmbeddedError as exc:
            raise CommandError(str(exc)) from None

    def _progress(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()

    def _install(self, name: str):
        from agent.embedded import build, catalog

        cache = settings.LLM_CACHE
        model = catalog.resolve(name, cache)
        binary = build.ensure_server(cache, self._progress)
        path = catalog.ensure_model(model, cache, install=True, progress=self._progress)
        self._progress(f"llama-server: {binary}")
        self._progress(f"model: {model.title}, licence {model.licence or 'NONE STATED'}: {path}")
        return binary, model, path

    def _serve(self) -> None:
        from agent.embedded import server

        stop = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stop.set())
        if settings.LLM_BACKEND != "embedded":
            self._progress(f"PORTAL_LLM_BACKEND is {settings.LLM_BACKEND}: no embedded model server to run.")
            stop.wait()
            return
        binary, model, path = self._install(settings.LLM_EMBEDDED_MODEL)
        spec = server.ServerSpec(binary=binary, model_path=path, alias=model.key, port=settings.LLM_PORT)
        if server.health(spec.base_url) != "down":
            raise EmbeddedError(f"something already listens on {spec.base_url}: stop it or set PORTAL_LLM_PORT")
        self._progress(f"starting llama-server on {spec.base_url} with {model.title} ...")
        proc = server.start(spec)  # its log goes to our stdout, like any Procfile process
        try:
            seconds = server.wait_ready(proc, spec.base_url, timeout=300)
            self._progress(f"llama-server ready at {spec.base_url}/v1 (model {model.key}, loaded in {seconds:.1f} s)")
            while not stop.is_set() and proc.poll() is None:
                stop.wait(1.0)
        finally:
            server.stop(proc)
        if not stop.is_set():
            raise EmbeddedError(f"llama-server exited with code {proc.returncode}")


def _check_schema():
    """The test reply: short, bounded fields a grammar can close quickly."""
    from typing import Literal

    from pydantic import BaseModel, ConfigDict, Field

    class LLMCheck(BaseModel):
        model_config = ConfigDict(extra="forbid")
        sum: int = Field(ge=-1000, le=1000, description="the sum of the two numbers")
        colour: Literal["red", "green", "blue", "other"] = Field(description="the colour of the sky on a clear day")
        word: str = Field(max_length=24, description="one word that describes the sky")

    return LLMCheck


def check_backend() -> dict[str, Any]:
    """What `llm check` reports: backend, model, server, one structured call and its speed."""
    from agent.embedded import server

    report: dict[str, Any] = {"backend": settings.LLM_BACKEND, "ok": True}
    if settings.LLM_BACKEND == "local":
        report |= {"model": "local", "server": None,
                   "note": "the local backend is rule-based and offline: no model server to check"}
        return report
    report |= {"model": settings.LLM_MODEL, "base_url": settings.OPENAI_BASE_URL or "https://api.openai.com/v1"}
    if settings.LLM_BACKEND == "embedded":
        root = settings.OPENAI_BASE_URL.removesuffix("/v1")
        report["server"] = server.health(root)
        if report["server"] != "ok":
            report |= {"ok": False, "error": f"llama-server at {root} is {report['server']}: "
                                            "start it with `python manage.py llm serve`"}
            return report
    from agent.llm import LLMClient, LLMError

    client = LLMClient.from_settings()
    messages = [
        {"role": "system", "content": "You answer with one JSON object."},
        {"role": "user", "content": "Add 17 and 25. What colour is the sky on a clear day? Give one word for it."},
    ]
    started = time.monotonic()
    try:
        reply, usage = client.structured(messages, _check_schema())
    except LLMError as exc:
        report |= {"ok": False, "error": str(exc)}
        return report
    seconds = time.monotonic() - started
    mode = getattr(client, "_format_mode", "json_schema")
    report |= {
        "server": report.get("server", "reachable"),
        "response_format": mode,
        "schema_constrained": mode == "json_schema",
        "reply": reply.model_dump(),
        "calls": usage.calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "seconds": round(seconds, 2),
        # End to end (prefill included), as a user waits for it.
        "completion_tokens_per_second": round(usage.completion_tokens / seconds, 1) if seconds else None,
    }
    return report
