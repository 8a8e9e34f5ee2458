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

Like a real server, it honours `max_tokens` (tokens estimated at four characters): a longer
reply is cut there, mid-JSON, with finish_reason "length". `small_model=True` adds what small
local models do behind a grammar-constrained server (llama-server):
- with a json_schema: strings and arrays are cut to their `maxLength`/`maxItems` (the
  grammar allows no more); but if the schema leaves a string or an array unbounded, the
  model loops inside it (repeating a phrase) until `max_tokens`, or 4,096 tokens if none;
- without a json_schema, the instructions are ignored: the reply is prose around a fenced
  JSON block (`no_schema_reply="fenced"`) or prose only (`"prose"`).

A request with `"stream": true` gets the same reply as server-sent events, the way OpenAI
and llama-server send it: `chat.completion.chunk` objects of `stream_chunk_chars` characters
each, `stream_delay` seconds apart (a model generating slowly), the finish_reason in the last
content chunk, then the usage chunk when `stream_options.include_usage` asks for it, then
`data: [DONE]`. With `stream_hold_at` set, a stream stops once the text sent so far
contains that string and goes on when the test sets `stream_resume` (a model caught
mid-answer, deterministically).
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
        small_model: bool = False,
        no_schema_reply: str = "fenced",
    ) -> None:
        self.latency = latency
        self.responder = responder
        # False behaves like servers that reject response_format json_schema with a 400.
        self.json_schema_supported = json_schema_supported
        self.json_mode_supported = json_mode_supported
        self.embedding_dim = embedding_dim
        self.small_model = small_model
        self.no_schema_reply = no_schema_reply
        # Streamed replies: characters per chunk and seconds between chunks.
        self.stream_chunk_chars = 8
        self.stream_delay = 0.0
        self.stream_hold_at: str | None = None
        self.stream_resume = threading.Event()
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
        finish_reason = reply.finish_reason
        if self.small_model and content is not None:
            content = _small_model_content(content, body, self.no_schema_reply)
        if content is not None and not isinstance(content, str):
            content = json.dumps(content)
        limit = body.get("max_tokens")
        if isinstance(limit, int) and content is not None and _estimate_tokens(content) > limit:
            content, finish_reason = content[: limit * 4], "length"
        prompt_text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else _estimate_tokens(prompt_text)
        completion_tokens = (
            reply.completion_tokens if reply.completion_tokens is not None else _estimate_tokens(content or "")
        )
        with self._lock:
            n = len(self.requests)
        if body.get("stream"):
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                     "total_tokens": prompt_tokens + completion_tokens}
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._stream(handler, f"chatcmpl-fake-{n}", body.get("model", "fake"), content or "", finish_reason,
                         usage if include_usage else None)
            return
        self._send_json(handler, 200, {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "fake"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": reply.refusal},
                "finish_reason": finish_reason,
            }],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }, reply.headers)

    def _stream(self, handler: BaseHTTPRequestHandler, cid: str, model: str, content: str, finish_reason: str,
                usage: dict[str, int] | None) -> None:
        def chunk(delta: dict[str, Any], finish: str | None, **extra: Any) -> bytes:
            payload = {"id": cid, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
            return f"data: {json.dumps(payload)}\n\n".encode()

        step = max(1, self.stream_chunk_chars)
        pieces = [content[i:i + step] for i in range(0, len(content), step)] or [""]
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Cache-Control", "no-cache")
            # No length: the stream ends when the connection closes, as an HTTP/1.0 body would.
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.close_connection = True
            handler.wfile.write(chunk({"role": "assistant", "content": ""}, None))
            sent = ""
            for i, piece in enumerate(pieces):
                if self.stream_delay and self._stopping.wait(self.stream_delay):
                    return
                if self.stream_hold_at and self.stream_hold_at in sent:
                    while not self.stream_resume.wait(0.05):
                        if self._stopping.is_set():
                            return
                last = i == len(pieces) - 1
                handler.wfile.write(chunk({"content": piece}, finish_reason if last else None))
                handler.wfile.flush()
                sent += piece
            if usage is not None:
                payload = {"id": cid, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
                           "choices": [], "usage": usage}
                handler.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
            handler.wfile.write(b"data: [DONE]\n\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

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
# Small-model behaviour
# ---------------------------------------------------------------------------

LOOP_PHRASE = "and the model also "


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref", "")
    return defs[ref.rsplit("/", 1)[1]] if ref.startswith("#/$defs/") else node


def unbounded_path(schema: dict[str, Any], defs: dict[str, Any] | None = None, path: str = "") -> str | None:
    """The first string without maxLength or array without maxItems in a JSON schema."""
    defs = schema.get("$defs", {}) if defs is None else defs
    node = _resolve(schema, defs)
    if "enum" in node or "const" in node:
        return None
    kind = node.get("type")
    if kind == "string" and "maxLength" not in node:
        return path or "(root)"
    if kind == "array":
        if "maxItems" not in node:
            return path or "(root)"
        return unbounded_path(node.get("items", {}), defs, path + "[]")
    for key, sub in node.get("properties", {}).items():
        found = unbounded_path(sub, defs, f"{path}.{key}" if path else key)
        if found:
            return found
    for sub in node.get("anyOf", []):
        found = unbounded_path(sub, defs, path)
        if found:
            return found
    return None


def _within_bounds(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """What a grammar built from the schema lets through: strings and arrays cut to bound."""
    node = _resolve(schema, defs)
    if isinstance(value, str) and "maxLength" in node:
        return value[: node["maxLength"]]
    if isinstance(value, list):
        items = [_within_bounds(v, node.get("items", {}), defs) for v in value]
        return items[: node["maxItems"]] if "maxItems" in node else items
    if isinstance(value, dict):
        props = node.get("properties", {})
        return {k: _within_bounds(v, props.get(k, {}), defs) for k, v in value.items()}
    return value


def _small_model_content(content: Any, body: dict[str, Any], no_schema_reply: str) -> Any:
    fmt = body.get("response_format") or {}
    text = content if isinstance(content, str) else json.dumps(content)
    if fmt.get("type") != "json_schema":
        if no_schema_reply == "prose":
            return "Based on the documents, the answer is probably what the question suggests."
        return f"Sure! Here is the JSON you asked for:\n```json\n{text}\n```\nLet me know if you need more."
    schema = (fmt.get("json_schema") or {}).get("schema") or {}
    where = unbounded_path(schema)
    if where is not None:
        # A greedy small model repeats itself inside an unbounded field: it only stops at
        # max_tokens (the server then cuts the JSON mid-string).
        budget = int(body.get("max_tokens") or 4096)
        key = where.split(".")[-1].strip("[]") or "value"
        return '{"' + key + '": "' + LOOP_PHRASE * (budget * 4 // len(LOOP_PHRASE) + 2)
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except json.JSONDecodeError:
            return content
    return _within_bounds(content, schema, schema.get("$defs", {}))


# ---------------------------------------------------------------------------
# A responder that plays every Grounded role plausibly (for loop tests and benchmarks)
# ---------------------------------------------------------------------------

_QUESTION = re.compile(r"<question>\n(.*?)\n</question>", re.S)
_NUMBERED = re.compile(r"^\[(\d+)\] (.*)$", re.M)
_NEEDS = re.compile(r"<needs>\n(.*?)\n</needs>", re.S)


def numbered_sentences(text: str) -> dict[int, str]:
    """The numbered evidence sentences of an answer prompt (agent.prompts.evidence_block)."""
    body = text.split("<evidence>", 1)[1] if "<evidence>" in text else ""
    return {int(n): s for n, s in _NUMBERED.findall(body)}


def _overlap(a: str, b: str) -> int:
    return len(set(re.findall(r"\w+", a.lower())) & set(re.findall(r"\w+", b.lower())))


def grounded_responder(body: dict[str, Any]) -> Reply:
    """Valid replies for the schemas of agent/llm/wire.py, built from the prompt.

    It answers like a cooperative model: the plan's need is the question itself, the answer
    cites the numbered sentence that shares most words with the question, copied as the
    answer sentence, and no premise is contradicted. It never follows text inside the
    evidence: that is the behaviour the prompts ask of a real model.
    """
    fmt = body.get("response_format") or {}
    name = (fmt.get("json_schema") or {}).get("name", "")
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    if not name:
        # JSON mode: the schema is in the last system message.
        for candidate in ("PlanOut", "AnswerOut", "QueriesOut", "RerankOut"):
            if f'"title":"{candidate}"' in text:
                name = candidate
    q = _QUESTION.search(text)
    question = q.group(1).strip() if q else "question"
    if name == "PlanOut":
        return Reply(content={"complexity": "simple", "needs": [question], "sub_queries": [question], "premise": ""})
    if name == "AnswerOut":
        sentences = numbered_sentences(text)
        needs = _NEEDS.search(text)
        count = len(needs.group(1).splitlines()) if needs else 1
        if not sentences:
            return Reply(content={"needs": [], "premise": {"contradicted": False, "sentence": 0}, "answer": []})
        n = max(sentences, key=lambda k: (_overlap(question, sentences[k]), -k))
        return Reply(content={
            "needs": [{"need": i, "sentences": [n]} for i in range(1, count + 1)],
            "premise": {"contradicted": False, "sentence": 0},
            "answer": [{"text": sentences[n], "sentences": [n]}]})
    if name == "QueriesOut":
        return Reply(content={"sub_queries": [f"{question} evidence"]})
    if name == "RerankOut":
        docs = re.findall(r'<document id="(\d+)"', text)
        return Reply(content={"scores": [{"id": int(i), "score": 10 - min(int(i), 10)} for i in docs]})
    return Reply(content={})


def citing_responder(fragment: str, answer: str, shown: list[dict[int, str]]) -> Callable[[dict[str, Any]], Reply]:
    """A model that answers with `answer`, citing the numbered sentence that holds `fragment` for
    every need (it answers nothing when no shown sentence holds it); every other call is
    `grounded_responder`'s. Each answer prompt's numbered sentences are appended to `shown`."""

    def reply(body: dict[str, Any]) -> Reply:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
        if name != "AnswerOut":
            return grounded_responder(body)
        text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        sentences = numbered_sentences(text)
        shown.append(sentences)
        n = next((k for k, s in sentences.items() if fragment in s), None)
        if n is None:
            return Reply(content={"needs": [], "premise": {"contradicted": False, "sentence": 0}, "answer": []})
        needs = _NEEDS.search(text)
        count = len(needs.group(1).splitlines()) if needs else 1
        return Reply(content={"needs": [{"need": i, "sentences": [n]} for i in range(1, count + 1)],
                              "premise": {"contradicted": False, "sentence": 0},
                              "answer": [{"text": answer, "sentences": [n]}]})

    return reply
