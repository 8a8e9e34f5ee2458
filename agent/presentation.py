"""How a run reads on the page: answer markers as buttons, highlighted quotes, stage summaries.

Plain functions over strings and dicts (RunStep.input/output JSON), so the run page and its
polling endpoint render exactly the same thing and the rules can be tested without a database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

MARKER_RE = re.compile(r"\[(\d+)\]")

STAGE_TITLES = {
    "plan": "Plan",
    "retrieve": "Retrieve",
    "audit": "Audit",
    "reformulate": "Retry: reformulate",
    "generate": "Generate",
    "verify": "Verify",
}


def answer_html(text: str, *, markers: set[int], panel_url: str) -> SafeString:
    """The answer as paragraphs, each known [n] turned into a button that opens the citation panel.

    `panel_url` holds the placeholder `0` where the marker goes (reverse() needs an int).
    A marker without a Citation row (dropped by the verifier) stays plain text rather than
    a button that would open nothing.
    """
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    out = []
    for para in paragraphs:
        escaped = str(escape(para))

        def _button(match: re.Match[str]) -> str:
            n = int(match.group(1))
            if n not in markers:
                return match.group(0)
            url = panel_url.replace("/0/", f"/{n}/")
            return str(
                format_html(
                    '<button type="button" class="cite" data-panel-url="{}" aria-label="Source {}"'
                    ' aria-controls="citation-panel">[{}]</button>',
                    url,
                    n,
                    n,
                )
            )

        out.append("<p>" + MARKER_RE.sub(_button, escaped).replace("\n", "<br>") + "</p>")
    return mark_safe("\n".join(out))


def quote_span(chunk_text: str, quote: str, quote_start: int) -> tuple[int, int] | None:
    """Where the quoted supporting span sits in the chunk text, or None.

    The recorded offset is trusted only when the text there is the quote; otherwise we look
    the quote up (exactly, then with any run of whitespace matching any other), so a stale
    offset never highlights the wrong words.
    """
    if not quote:
        return None
    if quote_start >= 0 and chunk_text[quote_start : quote_start + len(quote)] == quote:
        return quote_start, quote_start + len(quote)
    found = chunk_text.find(quote)
    if found >= 0:
        return found, found + len(quote)
    # The auditor compares whitespace-normalised text, so a verified quote may span a line
    # or paragraph break that it wrote as one space.
    words = quote.split()
    if not words:
        return None
    pattern = re.compile(r"\s+".join(re.escape(w) for w in words))
    match = (pattern.match(chunk_text, quote_start) if quote_start >= 0 else None) or pattern.search(chunk_text)
    return match.span() if match else None


def highlighted_html(chunk_text: str, quote: str, quote_start: int) -> SafeString:
    span = quote_span(chunk_text, quote, quote_start)
    if span is None:
        return escape(chunk_text)
    start, end = span
    return format_html(
        "{}<mark>{}</mark>{}", chunk_text[:start], chunk_text[start:end], chunk_text[end:]
    )


@dataclass
class StageView:
    kind: str
    title: str
    attempt: int
    duration_ms: int
    queries: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    hits: int | None = None
    top_hits: list[dict[str, Any]] = field(default_factory=list)
    # Retrieval: (sub-query, chunks it found), in the order searched.
    per_query: list[tuple[str, int]] = field(default_factory=list)
    # Audit: (fact, support label).
    fact_labels: list[tuple[str, str]] = field(default_factory=list)
    verdict: str = ""
    reason: str = ""
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _strings(value: Any) -> list[str]:
    """A list of readable strings from a value that may be a string, a list of strings or of dicts."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        for key in ("text", "query", "fact", "description", "name"):
            if key in value:
                return [str(value[key])]
        return [str(value)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return [str(value)]


def _first(data: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in data and data[key] not in (None, ""):
            return data[key]
    return None


def stage_view(kind: str, data_in: dict[str, Any], data_out: dict[str, Any], *, attempt: int = 0,
               duration_ms: int = 0) -> StageView:
    """A summary of one RunStep for the live stage list.

    The loop's JSON is read by well-known keys (sub_queries/queries/query, hits/chunk_ids,
    verdict, missing) so a step with fewer details still shows what it has.
    """
    data_in = data_in if isinstance(data_in, dict) else {}
    data_out = data_out if isinstance(data_out, dict) else {}
    view = StageView(kind=kind, title=STAGE_TITLES.get(kind, kind.title()), attempt=attempt,
                     duration_ms=duration_ms)
    view.queries = _strings(
        _first(data_out, "sub_queries", "queries") or _first(data_in, "sub_queries", "queries", "query")
    )
    view.facts = _strings(_first(data_out, "needed_facts", "facts"))
    per_query = data_out.get("per_query")
    hits = _first(data_out, "hits", "chunk_ids", "results")
    if isinstance(per_query, dict):
        view.per_query = [(str(q), len(found) if isinstance(found, list) else 0) for q, found in per_query.items()]
        view.queries = [q for q, _ in view.per_query]
        ids = {h.get("chunk_id") if isinstance(h, dict) else h for found in per_query.values() for h in found or []}
        view.hits = len(ids)
        view.top_hits = [h for found in per_query.values() for h in (found or [])[:2] if isinstance(h, dict)]
    elif isinstance(hits, list):
        view.hits = len(hits)
        view.top_hits = [h for h in hits[:5] if isinstance(h, dict)]
    elif isinstance(_first(data_out, "count", "n_hits", "found"), int):
        view.hits = _first(data_out, "count", "n_hits", "found")
    if kind == "audit" and isinstance(data_out.get("facts"), list):
        view.facts = []
        view.fact_labels = [
            (str(f.get("fact", "")), str(f.get("label", ""))) for f in data_out["facts"] if isinstance(f, dict)
        ]
    view.verdict = str(_first(data_out, "verdict") or "")
    view.missing = _strings(_first(data_out, "missing", "missing_facts", "missing_evidence"))
    if kind == "plan" and _first(data_out, "complexity"):
        view.notes.append(f"Complexity: {data_out['complexity']}")
    if kind == "plan" and _first(data_out, "premise"):
        view.notes.append(f"Premise to check: {data_out['premise']}")
    if kind == "audit":
        premise = data_out.get("premise")
        if isinstance(premise, dict) and premise.get("contradicted"):
            view.notes.append(f"Premise contradicted: {premise.get('reason') or premise.get('premise', '')}")
        if _first(data_out, "reason"):
            view.reason = str(data_out["reason"])
            view.notes.append(view.reason)
    if kind in ("generate", "verify"):
        for key, label in (("outcome", "Outcome"), ("sentences", "Sentences"), ("kept", "Kept"),
                           ("removed", "Removed"), ("dropped", "Dropped")):
            value = data_out.get(key)
            if isinstance(value, list):
                value = len(value)
            if value not in (None, ""):
                view.notes.append(f"{label}: {value}")
    return view
