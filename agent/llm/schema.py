"""Structured output: strict, bounded JSON schemas, `max_tokens` sized from them, and the parsing
of a reply (fences stripped, echoed instructions blanked) (agent.llm)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


def schema_response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """`response_format` for strict structured output of a pydantic model."""
    from openai.lib._pydantic import to_strict_json_schema

    return {
        "type": "json_schema",
        "json_schema": {"name": schema.__name__, "schema": to_strict_json_schema(schema), "strict": True},
    }


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return defs[ref.rsplit("/", 1)[1]]
    return node


def json_chars_bound(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> int | None:
    """The most characters a compact JSON value of this schema can take; None if unbounded
    (a string without maxLength, an array without maxItems)."""
    defs = schema.get("$defs", {}) if defs is None else defs
    node = _resolve(schema, defs)
    if "enum" in node:
        return max(len(json.dumps(v)) for v in node["enum"])
    if "const" in node:
        return len(json.dumps(node["const"]))
    if "anyOf" in node:
        bounds = [json_chars_bound(n, defs) for n in node["anyOf"]]
        return None if None in bounds else max(b for b in bounds if b is not None)
    kind = node.get("type")
    if kind == "string":
        # Escapes (\" \n) can double a character; small models rarely write them.
        return node["maxLength"] + 2 if "maxLength" in node else None
    if kind == "integer":
        return 6
    if kind == "number":
        return 10
    if kind == "boolean":
        return 5
    if kind == "null":
        return 4
    if kind == "array":
        item = json_chars_bound(node.get("items", {}), defs)
        if item is None or "maxItems" not in node:
            return None
        return 2 + node["maxItems"] * (item + 1)
    if kind == "object":
        total = 2
        for key, sub in node.get("properties", {}).items():
            bound = json_chars_bound(sub, defs)
            if bound is None:
                return None
            total += len(key) + 4 + bound
        return total
    return None


def max_tokens_for(schema: type[BaseModel], *, floor: int = 64, cap: int = 4096) -> int:
    """`max_tokens` for a reply of this schema: its longest compact JSON at 3 characters per
    token (JSON punctuation and numbers tokenise worse than prose's 4), plus room for the
    whitespace a grammar allows between fields. Unbounded schemas get `cap`."""
    full = schema.model_json_schema()
    chars = json_chars_bound(full)
    if chars is None:
        return cap
    fields = json.dumps(full).count('"type"')
    return max(floor, min(cap, chars // 3 + 2 * fields + 16))


def _descriptions(node: Any) -> list[str]:
    if isinstance(node, dict):
        out = [node["description"]] if isinstance(node.get("description"), str) else []
        for value in node.values():
            out.extend(_descriptions(value))
        return out
    if isinstance(node, list):
        return [d for v in node for d in _descriptions(v)]
    return []


def _squash(text: str) -> str:
    return " ".join("".join(c.lower() if c.isalnum() else " " for c in text).split())


def blank_echoes(value: Any, instructions: Sequence[str], *, min_words: int = 4) -> Any:
    """`value` (parsed JSON) with every string that merely repeats the instructions emptied
    and such list items removed. A string echoes when, squashed to lower-case words, it has
    at least `min_words` words and occurs inside one instruction text (a schema description,
    the task), ignoring a trailing "..." ellipsis a model may add."""
    squashed = [_squash(t) for t in instructions if t]

    def echoes(text: str) -> bool:
        words = _squash(text.rstrip(" .…")).split()
        if len(words) < min_words:
            return False
        needle = " ".join(words)
        return any(needle in hay for hay in squashed)

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return "" if echoes(v) else v
        if isinstance(v, list):
            return [walk(x) for x in v if not (isinstance(x, str) and echoes(x))]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        return v

    return walk(value)


def _extract_json(text: str) -> str:
    """The JSON object inside a reply: small local models like to wrap it in ``` fences."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    start, end = stripped.find("{"), stripped.rfind("}")
    if start != -1 and end > start:
        return stripped[start : end + 1]
    return stripped


def _parse(text: str, schema: type[M], instructions: Sequence[str] = ()) -> M:
    data = json.loads(_extract_json(text))
    return schema.model_validate(blank_echoes(data, instructions))
