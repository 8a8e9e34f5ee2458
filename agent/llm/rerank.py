"""The LLM reranker: one call scores every candidate passage (agent.llm.roles)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agent import prompts
from agent.llm.client import LLMClient
from agent.llm.roles import ChatClient
from agent.llm.wire import RerankOut
from agent.types import Usage


def llm_rerank_with_usage(query: str, candidates: Sequence[Any], client: ChatClient) -> tuple[list[float], Usage]:
    """Relevance of every candidate to the query in [0, 1], in ONE call, and its usage.

    `candidates` are strings or objects with a `text` attribute (e.g. Source). A candidate
    the model forgot to score gets 0.
    """
    if not candidates:
        return [], Usage()
    texts = [c if isinstance(c, str) else str(c.text) for c in candidates]
    out, usage = client.structured(prompts.rerank_messages(query, texts), RerankOut)
    scores = [0.0] * len(texts)
    for item in out.scores:
        if 1 <= item.id <= len(texts):
            scores[item.id - 1] = max(0.0, min(10.0, float(item.score))) / 10.0
    return scores, usage


def llm_scorer(client: ChatClient, on_usage: Callable[[Usage], None] | None = None) -> Callable[
        [str, list[str]], list[float]]:
    """The grader knowledge's LLM reranker calls (knowledge.retrieval.rerank.ScoreFn): 0-10
    per passage from one call, whose prompt keeps the passages delimited as untrusted data.
    Each call's usage goes to `on_usage`, so a run that reranks with the LLM pays for it."""

    def score(query: str, passages: list[str]) -> list[float]:
        scores, usage = llm_rerank_with_usage(query, passages, client)
        if on_usage is not None:
            on_usage(usage)
        return [10.0 * s for s in scores]

    return score


def llm_scorer_from_settings() -> Callable[[str, list[str]], list[float]]:
    """settings.RERANK_LLM_SCORER: the grader knowledge's searches use when not handed one."""
    return llm_scorer(LLMClient.from_settings())
