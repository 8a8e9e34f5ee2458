"""The OpenAI backend: chat completions with structured output, retries and cost accounting.

A package by topic: `config` (settings, errors, cost), `schema` (bounded JSON schemas, echo
blanking, reply parsing), `client` (LLMClient), `wire` (the roles' reply schemas), `stream`
(the answer preview), `candidates` (the numbered evidence), `roles` (the LLM roles).

It talks to the OpenAI API or to any OpenAI-compatible server (vLLM, llama.cpp's server,
Ollama) through the official `openai` client; model, base URL, key, timeout, retries and
prices come from settings (see docs/llm.md).

Failure policy, so that a run never hangs and always ends with a reason:
- 429, 5xx, 408/409, timeouts, dropped connections and a 200 whose body is not JSON are
  transient: retried with exponential backoff and full jitter (Retry-After honoured, capped),
  at most `max_retries` times and never past `budget_seconds` for the whole call.
- Other 4xx (bad key, unknown model, bad request) are permanent: no retry.
- Structured output asks for `response_format: json_schema` (strict) with bounded strings and
  arrays (`maxLength`/`maxItems`, which llama.cpp's grammar compiler enforces), and sends a
  `max_tokens` sized from the schema (`max_tokens_for`), so a small model cannot run on
  inside a string. A server that rejects json_schema with a 400 is asked again in JSON mode
  with the schema in the prompt, and that is remembered per server and model for the
  process. A reply that does not validate against the pydantic schema gets one repair
  request showing the error; a second bad reply is an error.
- A reply cut at `max_tokens` (finish_reason "length") is an error at once (kind
  "truncated"): the same greedy request would be cut the same way again.
- A reply field that repeats the instructions (a schema description or a line of the task)
  instead of filling them in is blanked (`blank_echoes`).
- Every failure is an `LLMError` whose message a person can read and whose `usage` holds
  what was spent before it failed, so the run records it as FAILED with that reason.
- A caller that passes `on_text` gets the reply streamed (`stream=True`, usage in the last
  chunk): `on_text` sees the text received so far after every chunk, so a page can show the
  answer as it is written. The finished reply is then parsed and checked as any other.
"""

from __future__ import annotations

from agent.llm.client import LLMClient, Message
from agent.llm.config import MAX_BACKOFF_SECONDS, RETRYABLE_STATUS, LLMError, LLMSettings, cost_of
from agent.llm.schema import blank_echoes, json_chars_bound, max_tokens_for, schema_response_format

__all__ = [
    "MAX_BACKOFF_SECONDS", "RETRYABLE_STATUS", "LLMClient", "LLMError", "LLMSettings", "Message", "blank_echoes",
    "cost_of", "json_chars_bound", "max_tokens_for", "schema_response_format",
]
