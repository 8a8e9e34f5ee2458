"""The OpenAI backend's settings, its error, and the cost of a call (agent.llm)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agent.types import Usage

# Status codes worth another try: the same request may well succeed a moment later.
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
# Never wait longer than this between attempts, whatever a Retry-After header says.
MAX_BACKOFF_SECONDS = 20.0


class LLMError(Exception):
    """The LLM could not produce a usable reply; `str(err)` is the reason a run shows.

    `kind` is one of: timeout, rate_limited, server_error, bad_reply, refused, rejected,
    budget, truncated. `usage` counts the completions that were billed before the failure.
    """

    def __init__(self, message: str, *, kind: str, usage: Usage | None = None, attempts: int = 0,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.usage = usage or Usage()
        self.attempts = attempts


@dataclass(frozen=True)
class LLMSettings:
    model: str
    base_url: str | None
    api_key: str
    timeout: float
    max_retries: int
    prices: Mapping[str, tuple[float, float]]
    budget_seconds: float
    backoff_base: float = 0.5

    @classmethod
    def from_django(cls) -> LLMSettings:
        from django.conf import settings

        return cls(
            model=settings.LLM_MODEL,
            base_url=settings.OPENAI_BASE_URL,
            api_key=settings.OPENAI_API_KEY,
            timeout=float(settings.LLM_TIMEOUT_SECONDS),
            max_retries=int(settings.LLM_MAX_RETRIES),
            prices=dict(settings.LLM_PRICES),
            budget_seconds=float(settings.LLM_BUDGET_SECONDS),
        )


def cost_of(model: str, prompt_tokens: int, completion_tokens: int, prices: Mapping[str, tuple[float, float]]) -> float:
    """USD for one call from a table of USD per million (input, output) tokens.

    A model missing from the table costs 0: that is the case of a local server, which is
    free per call (docs/llm.md). Dated snapshots ("gpt-4o-mini-2024-07-18") use the price of
    their base name.
    """
    price = prices.get(model)
    if price is None:
        base = max((name for name in prices if model.startswith(name + "-")), key=len, default=None)
        price = prices.get(base) if base else None
    if price is None:
        return 0.0
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
