"""The LLM roles, under their historical import path: the code is in the agent.llm package
(agent.llm.roles, .drafts, .frugal, .wire, .candidates, .stream, .rerank). Settings name
`agent.llm_roles.llm_scorer_from_settings`, and other apps import from here."""

from __future__ import annotations

from agent.llm.candidates import (
    CANDIDATES,
    PER_NEED,
    QUANTITY_BONUS,
    Candidate,
    _clean_queries,
    _strip_new_numbers,
    asserts_new_number,
    candidate_sentences,
)
from agent.llm.drafts import DraftMemo, refusal_draft
from agent.llm.rerank import llm_rerank_with_usage, llm_scorer, llm_scorer_from_settings
from agent.llm.roles import ChatClient, LLMAuditor, LLMGenerator, LLMPlanner, LLMReformulator, llm_roles
from agent.llm.stream import partial_answer_text, streaming_answer
from agent.llm.wire import (
    AnswerOut,
    ClaimOut,
    Items,
    NeedOut,
    PlanOut,
    PremiseOut,
    QueriesOut,
    RerankOut,
    ScoreOut,
    Text,
)

__all__ = [
    "CANDIDATES", "PER_NEED", "QUANTITY_BONUS", "AnswerOut", "Candidate", "ChatClient", "ClaimOut", "DraftMemo",
    "Items", "LLMAuditor", "LLMGenerator", "LLMPlanner", "LLMReformulator", "NeedOut", "PlanOut", "PremiseOut",
    "QueriesOut", "RerankOut", "ScoreOut", "Text", "_clean_queries", "_strip_new_numbers", "asserts_new_number",
    "candidate_sentences", "llm_rerank_with_usage", "llm_roles", "llm_scorer", "llm_scorer_from_settings",
    "partial_answer_text", "refusal_draft", "streaming_answer",
]
