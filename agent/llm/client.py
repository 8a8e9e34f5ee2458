"""LLMClient: chat completions with retries, budgets, streaming and structured output (the
failure policy is in agent.llm's docstring)."""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel, ValidationError

from agent.llm.config import MAX_BACKOFF_SECONDS, RETRYABLE_STATUS, LLMError, LLMSettings, cost_of
from agent.llm.schema import M, _descriptions, _parse, max_tokens_for, schema_response_format
from agent.types import Usage

log = logging.getLogger(__name__)

Message = dict[str, Any]

# Server (base URL, model) -> the structured-output mode it accepts, learnt from a 400.
_FORMAT_MODES: dict[tuple[str, str], str] = {}
_FORMAT_LOCK = threading.Lock()


class LLMClient:
    """A thread-safe chat client (the loop retrieves and may call it from several threads)."""

    def __init__(
        self,
        config: LLMSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        from openai import OpenAI

        self.config = config
        self.model = config.model
        # Our own retry loop owns backoff and the overall budget, so the client's is off.
        self._client = OpenAI(
            api_key=config.api_key or "not-needed-for-local-servers",
            base_url=config.base_url,
            timeout=config.timeout,
            max_retries=0,
        )
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._lock = threading.Lock()
        # The best structured-output mode the server accepted: json_schema, json_object, none;
        # learnt once per server and model for the process (see _FORMAT_MODES).
        self._mode_key = (config.base_url or "https://api.openai.com/v1", config.model)

    @classmethod
    def from_settings(cls, **kwargs: Any) -> LLMClient:
        return cls(LLMSettings.from_django(), **kwargs)

    @property
    def _format_mode(self) -> str:
        with _FORMAT_LOCK:
            return _FORMAT_MODES.get(self._mode_key, "json_schema")

    @_format_mode.setter
    def _format_mode(self, mode: str) -> None:
        with _FORMAT_LOCK:
            _FORMAT_MODES[self._mode_key] = mode

    # -- plain chat ------------------------------------------------------------------

    def chat(self, messages: Sequence[Message], *, response_format: dict[str, Any] | None = None,
             temperature: float = 0.0, max_tokens: int | None = None,
             on_text: Callable[[str], None] | None = None) -> tuple[str, Usage]:
        """The assistant's reply text and its usage, retrying transient failures.

        A reply cut at `max_tokens` raises LLMError(kind="truncated") with its usage. With
        `on_text`, the reply is streamed and `on_text` gets the text so far after each chunk
        (a retried attempt starts again from the empty text).
        """
        from openai import (
            APIConnectionError,
            APIResponseValidationError,
            APIStatusError,
            APITimeoutError,
        )

        cfg = self.config
        deadline = time.monotonic() + cfg.budget_seconds
        last_reason = ""
        last_kind = "server_error"
        attempt = 0
        kwargs: dict[str, Any] = {"model": cfg.model, "messages": list(messages), "temperature": temperature}
        if response_format is not None:
            kwargs["response_format"] = response_format
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LLMError(
                    f"LLM call gave up after {attempt} attempt(s) and {cfg.budget_seconds:.0f}s: {last_reason}",
                    kind="budget" if attempt else last_kind, attempts=attempt,
                )
            attempt += 1
            retry_after: float | None = None
            try:
                completion = self._create(kwargs, min(cfg.timeout, remaining), on_text, deadline)
            except APITimeoutError:
                last_kind, last_reason = "timeout", f"no reply within {min(cfg.timeout, remaining):.1f}s"
            except APIStatusError as exc:
                status = exc.status_code
                detail = _error_message(exc)
                if status not in RETRYABLE_STATUS:
                    raise LLMError(f"LLM server rejected the request (HTTP {status}): {detail}",
                                   kind="rejected", attempts=attempt, status=status) from exc
                last_kind = "rate_limited" if status == 429 else "server_error"
                last_reason = f"HTTP {status}: {detail}"
                retry_after = _retry_after(exc)
            except APIConnectionError as exc:
                last_kind, last_reason = "server_error", f"connection failed: {exc}"
            except (APIResponseValidationError, json.JSONDecodeError, ValueError) as exc:
                # A proxy's HTML error page with status 200, a truncated body: transient.
                last_kind, last_reason = "server_error", f"unreadable reply from the LLM server: {exc}"
            else:
                if getattr(completion, "choices", None):
                    text, usage = self._reply_text(completion), self._usage(completion)
                    if getattr(completion.choices[0], "finish_reason", None) == "length":
                        raise LLMError(
                            f"the LLM reply was cut off at max_tokens={max_tokens} (finish_reason length) "
                            f"after {usage.completion_tokens} tokens: {text[:80]!r}...",
                            kind="truncated", usage=usage, attempts=attempt)
                    return text, usage
                # The client hands back the raw text when the body is not JSON (an HTML
                # error page from a proxy with status 200): treat it like a 502.
                last_kind = "server_error"
                last_reason = f"unreadable reply from the LLM server: {str(completion)[:120]!r}"
            if attempt > cfg.max_retries:
                raise LLMError(f"LLM call failed after {attempt} attempt(s): {last_reason}",
                               kind=last_kind, attempts=attempt)
            delay = self._backoff(attempt, retry_after)
            if time.monotonic() + delay >= deadline:
                raise LLMError(
                    f"LLM call gave up after {attempt} attempt(s): the {cfg.budget_seconds:.0f}s budget "
                    f"is spent; last error: {last_reason}",
                    kind="budget", attempts=attempt,
                )
            log.warning("LLM attempt %d failed (%s); retrying in %.2fs", attempt, last_reason, delay)
            self._sleep(delay)

    def _create(self, kwargs: dict[str, Any], timeout: float, on_text: Callable[[str], None] | None,
                deadline: float) -> Any:
        """One completion; streamed when `on_text` is given, then shaped like a plain one.

        For a stream the timeout bounds the connection and each wait for the next chunk (as
        the openai client does), so the stream itself stops at `deadline`: a model still
        writing when the call's budget is spent fails like a non-streamed call that timed out.
        """
        if on_text is None:
            return self._client.chat.completions.create(**kwargs, timeout=timeout)
        stream = self._client.chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True}, timeout=timeout)
        parts: list[str] = []
        finish_reason = None
        usage = None
        with stream:
            for chunk in stream:
                usage = getattr(chunk, "usage", None) or usage
                for choice in getattr(chunk, "choices", None) or []:
                    delta = getattr(choice, "delta", None)
                    if delta is not None and getattr(delta, "content", None):
                        parts.append(delta.content)
                        _notify(on_text, "".join(parts))
                    finish_reason = getattr(choice, "finish_reason", None) or finish_reason
                if time.monotonic() > deadline and finish_reason is None:
                    raise LLMError(
                        f"LLM call gave up: the {self.config.budget_seconds:.0f}s budget was spent while the reply "
                        f"was still being written ({len(''.join(parts))} characters so far)",
                        kind="budget", attempts=1)
        if not parts and finish_reason is None and usage is None:
            # A body with no event in it (a proxy's HTML error page with status 200): as
            # unreadable as the same body would be without streaming, and as transient.
            raise ValueError("the streamed reply held no event")
        message = SimpleNamespace(content="".join(parts), refusal=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason=finish_reason)], usage=usage)

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        # Full jitter (AWS architecture blog): uniform in [0, base * 2^(attempt-1)], so
        # many workers that hit a 429 together do not come back together.
        cap = min(MAX_BACKOFF_SECONDS, self.config.backoff_base * 2 ** (attempt - 1))
        with self._lock:
            delay = self._rng.uniform(0, cap)
        if retry_after is not None:
            delay = max(delay, min(retry_after, MAX_BACKOFF_SECONDS))
        return delay

    def _reply_text(self, completion: Any) -> str:
        message = completion.choices[0].message
        if getattr(message, "refusal", None):
            raise LLMError(f"the model refused: {message.refusal}", kind="refused", usage=self._usage(completion))
        return message.content or ""

    def _usage(self, completion: Any) -> Usage:
        u = getattr(completion, "usage", None)
        prompt = int(getattr(u, "prompt_tokens", 0) or 0)
        out = int(getattr(u, "completion_tokens", 0) or 0)
        return Usage(calls=1, prompt_tokens=prompt, completion_tokens=out,
                     cost_usd=cost_of(self.config.model, prompt, out, self.config.prices))

    # -- structured output -----------------------------------------------------------

    def structured(self, messages: Sequence[Message], schema: type[M], *,
                   max_tokens: int | None = None, on_text: Callable[[str], None] | None = None) -> tuple[M, Usage]:
        """The reply parsed into `schema`, with the usage of every call it took (1 to 3).

        `max_tokens` defaults to `max_tokens_for(schema)`. String fields that echo the
        instructions (system/task text, schema descriptions) come back empty. `on_text`
        streams the raw reply (see `chat`).
        """
        messages = list(messages)
        max_tokens = max_tokens or max_tokens_for(schema)
        instructions = [str(m.get("content", "")).split("<question>")[0] for m in messages
                        if m.get("role") in ("system", "user")]
        instructions += _descriptions(schema.model_json_schema())
        usage = Usage()
        text = ""
        problem = ""
        for attempt in range(2):
            if attempt == 1:
                log.warning("LLM reply did not match %s (%s); asking once to repair it", schema.__name__, problem)
                messages = [
                    *messages,
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": (
                        f"Your reply is not a valid {schema.__name__} JSON object: {problem}. "
                        "Reply again with only the corrected JSON object that follows the schema.")},
                ]
            try:
                text, u = self._structured_call(messages, schema, max_tokens, on_text)
            except LLMError as exc:
                exc.usage = usage + exc.usage
                raise
            usage += u
            try:
                return _parse(text, schema, instructions), usage
            except (ValidationError, ValueError) as exc:
                problem = _short_error(exc)
        raise LLMError(
            f"the LLM reply is not a valid {schema.__name__} even after one repair request: {problem}",
            kind="bad_reply", usage=usage,
        )

    def _structured_call(self, messages: list[Message], schema: type[BaseModel], max_tokens: int | None = None,
                         on_text: Callable[[str], None] | None = None) -> tuple[str, Usage]:
        """One request in the best output mode the server takes: json_schema, JSON mode, plain.

        Servers that do not know a response_format answer 400/422; we step down one mode
        and remember it for this client's later calls. Any other error is real.
        """
        schema_text = json.dumps(schema.model_json_schema(), separators=(",", ":"))
        hint = {"role": "system", "content": (
            f"Reply with one JSON object, and nothing else, that validates against this JSON schema: {schema_text}")}
        while True:
            mode = self._format_mode
            if mode == "json_schema":
                request, response_format = messages, schema_response_format(schema)
            elif mode == "json_object":
                request, response_format = [*messages, hint], {"type": "json_object"}
            else:
                request, response_format = [*messages, hint], None
            try:
                return self.chat(request, response_format=response_format, max_tokens=max_tokens, on_text=on_text)
            except LLMError as exc:
                if mode == "none" or exc.kind != "rejected" or exc.status not in (400, 422):
                    raise
                next_mode = "json_object" if mode == "json_schema" else "none"
                log.warning("LLM server does not take response_format %s (%s); using %s from now on",
                            mode, exc, next_mode)
                self._format_mode = next_mode


def _notify(on_text: Callable[[str], None], text: str) -> None:
    # A preview that cannot be shown (a database hiccup) must not cost the answer.
    try:
        on_text(text)
    except Exception:
        log.exception("streaming callback failed; the reply is still read to its end")


def _short_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        errs = exc.errors()[:3]
        return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in errs)
    return str(exc)[:300]


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if body.get("message"):
            return str(body["message"])[:300]
    return str(getattr(exc, "message", exc))[:300]


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
