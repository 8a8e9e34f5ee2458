"""A fake OpenAI-compatible HTTP server for tests and benchmarks (no network, no model).

It listens on 127.0.0.1 on a free port, in a thread, and serves:

- POST /v1/chat/completions: the next scripted `Reply` from a queue, else the answer of a
  `responder(request_body)` callable, else an empty JSON object `{}`.
- POST /v1/embeddings: deterministic unit vectors (a hash of the text seeds them), so the
  same text always gets the same vector and different texts differ.

Every request is recorded (path, headers, parsed JSON body) so a test can check what the
real `openai` client sent. A fixed `latency` per chat call models a remote LLM for the
latency benchmark. Scripted replies cover what real servers do on a bad day: 429 with
Retry-After, 500, a slow reply (timeout), a 200 whose body is not JSON, and a message whose
content is not the JSON that was asked for.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import random
import re
import struct
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer to a chat completion request.

    `content` (str, or dict/list serialised to JSON) becomes the assistant message;
    `status` other than 200 sends an OpenAI-style error body; `raw` sends these exact
    bytes as the body (garbage); `delay` sleeps first (interrupted when the server stops).
    """

    content: str | dict | list | None = None
    status: int = 200
    raw: bytes | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    finish_reason: str = "stop"
    refusal: str | None = None


def ok(content: str | dict | list, **kw: Any) -> Reply:
    return Reply(content=content, **kw)


def error(status: int, **kw: Any) -> Reply:
    return Reply(status=status, **kw)


def garbage(body: bytes = b"<html><body>502 Bad Gateway</body></html>", **kw: Any) -> Reply:
    return Reply(raw=body, **kw)


def slow(seconds: float, content: str | dict | list = "{}") -> Reply:
    return Reply(content=content, delay=seconds)


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body.get("messages", [])

    @property
    def text(self) -> str:
        """All message contents joined, for assertions about what the model was shown."""
        return "\n".join(str(m.get("content", "")) for m in self.messages)


def _estimate_tokens(text: str) -> int:
    # Roughly what a BPE tokenizer gives on English prose: four characters per token.
    return max(1, math.ceil(len(text) / 4))


def embedding_vector(text: str, dim: int) -> list[float]:
    """The deterministic unit vector the fake server returns for `text`."""
    rng = random.Random(hashlib.sha256(text.encode("utf-8")).digest())
    vec = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeOpenAI:
    """Start with `with FakeOpenAI() as server:` or `start()`/`stop()`; see the module doc."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        responder: Callable[[dict[str, Any]], Reply | str | dict | list] | None = None,
        json_schema_supported: bool = True,
        json_mode_supported: bool = True,
        embedding_dim: int = 384,
    ) -> None:
        self.latency = latency
        self.responder = responder
        # False behaves like servers that reject response_format json_schema with a 400.
        self.json_schema_supported = json_schema_supported
        self.json_mode_supported = json_mode_supported
        self.embedding_dim = embedding_dim
        # Seconds each embeddings request waits before answering (a slow remote service).
        self.embedding_latency = 0.0
        self.replies: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------

    def queue(self, *replies: Reply | str | dict | list) -> None:
        with self._lock:
            for r in replies:
                self.replies.append(r if isinstance(r, Reply) else Reply(content=r))

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                # Quiet: pytest shows the failing assertion, not an access log.
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                with fake._lock:
                    fake.requests.append(RecordedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                if self.path.rstrip("/").endswith("/chat/completions"):
                    fake._chat(self, body)
                elif self.path.rstrip("/").endswith("/embeddings"):
                    fake._embeddings(self, body)
                else:
                    fake._send_json(self, 404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        # A short poll interval, so stop() (and each test's teardown) takes milliseconds.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- handlers --------------------------------------------------------------------

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> None:
        try:
            handler.send_response(status)
            for k, v in headers.items():
                handler.send_header(k, v)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up (its timeout fired); nothing to deliver.
            pass

    def _send_json(self, handler: BaseHTTPRequestHandler, status: int, payload: Any, headers: dict | None = None) -> None:
        self._send(handler, status, json.dumps(payload).encode(), {"Content-Type": "application/json", **(headers or {})})

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
        if self.responder is not None:
            r = self.responder(body)
            return r if isinstance(r, Reply) else Reply(content=r)
        return Reply(content={})

    def _chat(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        fmt = (body.get("response_format") or {}).get("type")
        if (fmt == "json_schema" and not self.json_schema_supported) or (
            fmt == "json_object" and not self.json_mode_supported
        ):
            self._send_json(handler, 400, {"error": {
                "message": f"response_format type {fmt} is not supported", "type": "invalid_request_error",
                "param": "response_format"}})
            return
        reply = self._next_reply(body)
        wait = self.latency + reply.delay
        # An Event wait, not time.sleep, so stopping the server frees a slow handler at once.
        if wait and self._stopping.wait(wait):
            return
        if reply.raw is not None:
            self._send(handler, reply.status, reply.raw, {"Content-Type": "text/html", **reply.headers})
            return
        if reply.status != 200:
            kind = "rate_limit_exceeded" if reply.status == 429 else "server_error"
            self._send_json(handler, reply.status, {"error": {"message": f"fake {reply.status}", "type": kind}},
                            reply.headers)
            return
        content = reply.content
        if content is not None and not isinstance(content, str):
            content = json.dumps(content)
        prompt_text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else _estimate_tokens(prompt_text)
        completion_tokens = (
            reply.completion_tokens if reply.completion_tokens is not None else _estimate_tokens(content or "")
        )
        with self._lock:
            n = len(self.requests)
        self._send_json(handler, 200, {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "fake"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
                "finish_reason": reply.finish_reason,
            }],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }, reply.headers)

    def _embeddings(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if self.embedding_latency:
            self._stopping.wait(self.embedding_latency)
        inputs = body.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        dim = int(body.get("dimensions") or self.embedding_dim)
        vectors = [embedding_vector(str(t), dim) for t in inputs]
        if body.get("encoding_format") == "base64":
            # The openai client asks for base64 float32 by default and decodes it itself.
            encoded: list[Any] = [base64.b64encode(struct.pack(f"<{dim}f", *v)).decode() for v in vectors]
        else:
            encoded = vectors
        data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(encoded)]
        tokens = sum(_estimate_tokens(str(t)) for t in inputs)
        self._send_json(handler, 200, {"object": "list", "data": data, "model": body.get("model", "fake"),
                                       "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


# ---------------------------------------------------------------------------
# A responder that plays every Grounded role plausibly (for loop tests and benchmarks)
# ---------------------------------------------------------------------------

_DOC = re.compile(r'<document id="(\d+)"[^>]*>\n(.*?)\n</document>', re.S)
_QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.S)


def _first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return sentence[:300]


def grounded_responder(body: dict[str, Any]) -> Reply:
    """Valid replies for the schemas of agent/llm_roles.py, built from the prompt.

    It answers like a cooperative model: the plan searches for the question itself, the
    audit quotes the first sentence of document 1 (so the quote verifies) and calls the
    evidence sufficient, and the answer cites document 1. It never follows text inside the
    documents: that is the behaviour the prompts ask of a real model.
    """
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name", "")
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    if not name:
        # JSON mode: the schema is in the last system message.
        for candidate in ("PlanOut", "AuditOut", "QueriesOut", "DraftOut", "RerankOut"):
            if f'"title":"{candidate}"' in text:
                name = candidate
    q = _QUESTION.search(text)
    question = q.group(1).strip() if q else "question"
    docs = _DOC.findall(text)
    if name == "PlanOut":
        return Reply(content={"complexity": "simple", "facts": [question], "sub_queries": [question], "premise": ""})
    if name == "AuditOut":
        if not docs:
            return Reply(content={"facts": [{"fact": question, "label": "unsupported", "sentences": []}],
                                  "premise": {"contradicted": False, "source": 0, "quote": "", "reason": ""},
                                  "verdict": "INSUFFICIENT_REFUSE", "missing": [question], "reason": "no documents"})
        quote = _first_sentence(docs[0][1])
        n = int(docs[0][0])
        return Reply(content={
            "facts": [{"fact": question, "label": "supported",
                       "sentences": [{"source": n, "quote": quote, "label": "supported"}]}],
            "premise": {"statement": "", "contradicted": False, "source": 0, "quote": "", "reason": ""},
            "verdict": "SUFFICIENT", "missing": [], "reason": "document 1 states it",
            "answer": [{"text": quote, "citations": [n], "quote": quote}], "missing_note": ""})
    if name == "QueriesOut":
        return Reply(content={"sub_queries": [f"{question} evidence"]})
    if name == "DraftOut":
        if not docs:
            return Reply(content={"outcome": "REFUSAL", "sentences": [], "missing_note": ""})
        quote = _first_sentence(docs[0][1])
        return Reply(content={"outcome": "ANSWER", "missing_note": "", "sentences": [
            {"text": quote, "citations": [int(docs[0][0])], "quote": quote}]})
    if name == "RerankOut":
        return Reply(content={"scores": [{"id": int(i), "score": 10 - min(int(i), 10)} for i, _ in docs]})
    return Reply(content={})
