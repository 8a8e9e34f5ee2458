"""Wire schemas of the LLM roles: every string and array bounded (`maxLength`/`maxItems`, see
`Text` and `Items`), so a grammar-constrained model cannot loop inside a field until
`max_tokens`; agent.llm.schema sizes `max_tokens` from them. A longer value from a server that
ignores the schema is cut to the bound rather than rejected."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field


def _cut(n: int) -> Callable[[Any], Any]:
    def cut(value: Any) -> Any:
        return value[:n] if isinstance(value, (str, list)) else value

    return cut


def Text(n: int) -> Any:
    """A string of at most n characters: `maxLength` in the schema, cut on parse."""
    return Annotated[str, BeforeValidator(_cut(n)), Field(max_length=n)]


def Items(item: Any, n: int) -> Any:
    """A list of at most n items: `maxItems` in the schema, cut on parse."""
    return Annotated[list[item], BeforeValidator(_cut(n)), Field(max_length=n)]


class PlanOut(BaseModel):
    complexity: Literal["simple", "multi_part", "comparison"]
    needs: Items(Text(90), 4)
    sub_queries: Items(Text(120), 3)
    premise: Text(200)


class NeedOut(BaseModel):
    need: int
    sentences: Items(int, 3)


class PremiseOut(BaseModel):
    contradicted: bool
    sentence: int


class ClaimOut(BaseModel):
    text: Text(240)
    sentences: Items(int, 3)


class AnswerOut(BaseModel):
    needs: Items(NeedOut, 4)
    premise: PremiseOut
    answer: Items(ClaimOut, 4)


class QueriesOut(BaseModel):
    sub_queries: Items(Text(120), 3)


class ScoreOut(BaseModel):
    id: int
    score: float


class RerankOut(BaseModel):
    scores: Items(ScoreOut, 40)
