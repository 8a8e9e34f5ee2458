"""Embedding and LLM settings, imported by portal/settings.py (which Django reads).

Every value comes from a PORTAL_* environment variable (.env.example lists them; docs/llm.md
says what they do).
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from portal.env import env_bool, env_choice, env_float, env_int, env_list, env_secret, env_str

# What portal/settings.py takes (`import *`): every setting defined here.
__all__ = [
    "EMBEDDING_BACKEND",
    "EMBEDDING_BATCH_SIZE",
    "EMBEDDING_MODEL",
    "LLM_ANSWER_BY",
    "LLM_BACKEND",
    "LLM_BUDGET_SECONDS",
    "LLM_CACHE",
    "LLM_EMBEDDED_MODEL",
    "LLM_MAX_RETRIES",
    "LLM_MODEL",
    "LLM_PORT",
    "LLM_PRICES",
    "LLM_STREAM",
    "LLM_TIMEOUT_SECONDS",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
]

EMBEDDING_BACKEND = env_choice("PORTAL_EMBEDDING_BACKEND", "local", ("local", "openai"))
EMBEDDING_MODEL = env_str(
    "PORTAL_EMBEDDING_MODEL",
    "all-MiniLM-L6-v2-int8" if EMBEDDING_BACKEND == "local" else "text-embedding-3-small",
)
EMBEDDING_BATCH_SIZE = env_int("PORTAL_EMBEDDING_BATCH_SIZE", 32, minimum=1)

LLM_BACKEND = env_choice("PORTAL_LLM_BACKEND", "local", ("local", "openai", "embedded"))
OPENAI_API_KEY = env_secret("PORTAL_OPENAI_API_KEY", env_secret("OPENAI_API_KEY"))
OPENAI_BASE_URL = env_str("PORTAL_OPENAI_BASE_URL", env_str("OPENAI_BASE_URL", "")) or None
LLM_MODEL = env_str("PORTAL_LLM_MODEL", "gpt-4o-mini")
# With a model backend, who writes the answer of new runs (agent.configs.ANSWER_BY, docs/llm.md
# "Writer mode", "Chooser mode"): "model" (the LLM roles), "writer" (local roles; the model words the
# answer) or "chooser" (local roles; the model chooses which of the best-ranked sentences answer).
LLM_ANSWER_BY = env_choice("PORTAL_LLM_ANSWER_BY", "model", ("model", "writer", "chooser"))
# A CPU model prefills ~1.5k prompt tokens in 10-40 s on a busy 2-core machine (docs/llm.md).
LLM_TIMEOUT_SECONDS = env_float("PORTAL_LLM_TIMEOUT_SECONDS", 180.0 if LLM_BACKEND == "embedded" else 60.0,
                                minimum=0.1)
LLM_MAX_RETRIES = env_int("PORTAL_LLM_MAX_RETRIES", 3, minimum=0)
# Stream the answer-writing call, so the run page shows the answer as it is generated.
LLM_STREAM = env_bool("PORTAL_LLM_STREAM", True)
# Wall-clock bound on one LLM call including its retries and backoff, so a run never hangs.
LLM_BUDGET_SECONDS = env_float("PORTAL_LLM_BUDGET_SECONDS", 240.0 if LLM_BACKEND == "embedded" else 90.0,
                               minimum=0.1)
# The embedded model (agent/embedded, docs/llm.md): `embedded` is the openai backend pointed
# at llama-server on 127.0.0.1:PORTAL_LLM_PORT, serving a model that registry packages ship
# (`auto`: an installed opt-in Qwen model, else SmolLM2-135M); the built server and the
# assembled model file live in PORTAL_LLM_CACHE.
LLM_PORT = env_int("PORTAL_LLM_PORT", 8090, minimum=1)
LLM_CACHE = Path(env_str("PORTAL_LLM_CACHE", "") or Path.home() / ".cache" / "grounded").expanduser()
LLM_EMBEDDED_MODEL = env_str("PORTAL_LLM_EMBEDDED_MODEL", "auto")
if LLM_BACKEND == "embedded":
    from agent.embedded.catalog import EmbeddedError, resolve

    try:
        LLM_MODEL = resolve(LLM_EMBEDDED_MODEL, LLM_CACHE).key
    except EmbeddedError as exc:
        raise ImproperlyConfigured(f"PORTAL_LLM_EMBEDDED_MODEL: {exc}") from None
    OPENAI_BASE_URL = f"http://127.0.0.1:{LLM_PORT}/v1"
    OPENAI_API_KEY = ""
# USD per million tokens (input, output). Extend with PORTAL_LLM_PRICES="model:in:out,...".
LLM_PRICES = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "text-embedding-3-small": (0.02, 0.0),
}
for _item in env_list("PORTAL_LLM_PRICES", []):
    try:
        _model, _in, _out = _item.rsplit(":", 2)
        LLM_PRICES[_model] = (float(_in), float(_out))
    except ValueError:
        raise ImproperlyConfigured(
            f"PORTAL_LLM_PRICES item {_item!r} must look like model:input_price:output_price."
        ) from None
