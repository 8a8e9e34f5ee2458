"""How a run reads on the page: answer markers as buttons, highlighted quotes, stage summaries.

Plain functions over strings and the typed step records (agent.types), so the run page and
its polling endpoint render exactly the same thing and the rules can be tested without a database.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from agent.steps import (
    AuditStep,
    GenerateStep,
    PlanStep,
    ReformulateStep,
    RetrieveStep,
    RouteStep,
    Step,
    VerifyStep,
    WebSearchStep,
)
from agent.types import SupportingSentence, SupportLabel, parse_replaced_note
from agent.verify import neutralise_markers, quote_span
from knowledge.text import Vocabulary, join_line_breaks, line_broken

MARKER_RE = re.compile(r"\[(\d+)\]")

STAGE_TITLES = {
    "plan": "Plan",
    "retrieve": "Retrieve",
    "audit": "Audit",
    "reformulate": "Retry: reformulate",
    "generate": "Generate",
    "verify": "Verify",
    "route": "Route: collection only or web",
    "web_search": "Web search",
}


def answer_html(text: str, *, markers: set[int], panel_url: str, web_markers: set[int] | None = None) -> SafeString:
    """The answer as paragraphs, each known [n] turned into a button that opens the citation panel.

    `panel_url` holds the placeholder `0` where the marker goes (reverse() needs an int).
    A marker without a Citation row (dropped by the verifier) stays plain text rather than
    a button that would open nothing. A marker in `web_markers` cites a web page and says so.
    """
    web_markers = web_markers or set()
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    out = []
    for para in paragraphs:
        escaped = str(escape(para))

        def _button(match: re.Match[str]) -> str:
            n = int(match.group(1))
            if n not in markers:
                return match.group(0)
            url = panel_url.replace("/0/", f"/{n}/")
            if n in web_markers:
                return str(format_html(
                    '<button type="button" class="cite cite-web" data-panel-url="{}" aria-label="Web source {}"'
                    ' aria-controls="citation-panel">[{} web]</button>', url, n, n))
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


def reader_text(text: str, vocabulary: Vocabulary | None) -> str:
    """Stored chunk text as a reader sees it: the words a line break cut ("Chat- GPT") written
    whole as the document writes them (`vocabulary`: its whole text, knowledge.vocabulary; None:
    the chunk's own), as the verifier writes the answer's quotes (agent.verify.verifier._joined)."""
    if not line_broken(text):
        return text
    return join_line_breaks(text, [vocabulary if vocabulary is not None else Vocabulary.of([text])])


def highlighted_html(chunk_text: str, quote: str, quote_start: int, *, joined: bool = False,
                     vocabulary: Vocabulary | None = None) -> SafeString:
    """The chunk text with the quote marked, found by the one quote locator in the stored text.
    `joined`: written as a reader sees it (`reader_text`), the marked words and the words around
    them joined each on their own, so the mark covers the quote's words whole."""
    span = quote_span(quote, chunk_text, quote_start)

    def shown(text: str) -> str:
        return reader_text(text, vocabulary) if joined else text

    if span is None:
        return escape(shown(chunk_text))
    start, end = span
    return format_html(
        "{}<mark>{}</mark>{}", shown(chunk_text[:start]), shown(chunk_text[start:end]), shown(chunk_text[end:])
    )


@dataclass
class RemovedSentence:
    text: str
    why: str


_DETAIL_RE = re.compile(r"\(([^()]*)\)$")


def _why_removed(reason: str) -> str:
    """The verifier's reason (agent.verify.CitationVerifier: `dropped`) in a reader's words."""
    detail = _DETAIL_RE.search(reason)
    detail_text = detail.group(1) if detail else ""
    if reason.startswith("unsupported"):
        return "not supported by its quote" + (f" ({detail_text})" if detail_text else "")
    if reason.startswith("off the question"):
        return "its quote is not about what the question asks"
    if detail_text == "quote not in the chunk":
        return "its quote is not in the cited passage"
    if detail_text.startswith("its quote is"):
        return detail_text
    return "no citation supports it"


def removed_sentences(answer: str, generate: Step | None, verify: Step | None) -> list[RemovedSentence]:
    """The draft's sentences that verification removed, each with why, in draft order.

    A sentence counts as removed when the verifier gave a reason naming it and it is not in
    the final answer (a sentence with two citations keeps the one that held).
    """
    if not isinstance(generate, GenerateStep) or not isinstance(verify, VerifyStep):
        return []
    out: list[RemovedSentence] = []
    for sentence in generate.sentences:
        text = neutralise_markers(sentence.text).strip()
        if not text or text in answer:
            continue
        reasons = [d for d in verify.dropped if sentence.text[:80] in d]
        if reasons:
            # The first reason is the cause; a later "without a supporting citation" its effect.
            out.append(RemovedSentence(text=text, why=_why_removed(reasons[0])))
    for note in verify.dropped:
        replaced = parse_replaced_note(note)
        if replaced is not None and replaced[0].strip() not in answer:
            # A model's sentence the generator gave up for the sentence it cites, verbatim.
            out.append(RemovedSentence(text=neutralise_markers(replaced[0]).strip(),
                                       why=f"{_why_removed(replaced[1])}; replaced by the sentence it cites"))
    return out


@dataclass(frozen=True)
class Passage:
    """Where an audited chunk comes from (the Chunk row, read by the view): what the audit
    stage cites a quote by, and the document whose vocabulary joins its line-break hyphens."""

    document_id: int
    title: str
    page: int


@dataclass
class AuditQuote:
    text: str  # as a reader sees it: the words a line break cut written whole
    where: str  # "Title, p. 3", as the answer's sources list cites it; "" for a passage gone
    closest: bool = False  # the need is not supported: the closest sentence, not an answer


@dataclass
class NeedView:
    fact: str
    label: str
    quotes: list[AuditQuote] = field(default_factory=list)


def audit_chunk_ids(step: Step | None) -> set[int]:
    """The chunks an audit step quotes (its chosen sentences): what `stage_view` needs passages of."""
    if not isinstance(step, AuditStep):
        return set()
    return {s.chunk_id for f in step.facts for s in f.sentences}


@dataclass
class StageView:
    kind: str
    title: str
    attempt: int
    duration_ms: int
    queries: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    hits: int | None = None
    # Retrieval: (sub-query, chunks it found), in the order searched.
    per_query: list[tuple[str, int]] = field(default_factory=list)
    # Audit: each need with its support label and the sentences the audit chose for it.
    needs: list[NeedView] = field(default_factory=list)
    verdict: str = ""
    reason: str = ""
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Web search: (url, title, what happened: passages found, or why it was refused).
    web_pages: list[tuple[str, str, str]] = field(default_factory=list)


def stage_view(kind: str, step: Step | None, *, attempt: int = 0, duration_ms: int = 0,
               passages: Mapping[int, Passage] | None = None,
               vocabulary: Callable[[int], Vocabulary | None] | None = None) -> StageView:
    """A summary of one recorded step (RunStep.record()) for the live stage list.

    `step` is None for a row no step model reads (see RunStep.record): the stage then
    shows its title and timing only. An audit's quotes are cited by `passages` (chunk id ->
    Passage) and read joined by their document's `vocabulary` (knowledge.vocabulary), as the
    answer's citation panel shows them.
    """
    view = StageView(kind=kind, title=STAGE_TITLES.get(kind, kind.title()), attempt=attempt,
                     duration_ms=duration_ms)
    match step:
        case PlanStep():
            view.queries = list(step.sub_queries)
            view.facts = list(step.facts)
            view.notes.append(f"Complexity: {step.complexity}")
            if step.premise:
                view.notes.append(f"Premise to check: {step.premise}")
        case RetrieveStep():
            view.per_query = [(q, len(hits)) for q, hits in step.per_query.items()]
            view.queries = list(step.per_query)
            view.hits = len(step.chunk_ids())
        case AuditStep():
            view.needs = [NeedView(f.fact, f.label.value, [_audit_quote(q, passages or {}, vocabulary)
                                                           for q in f.sentences]) for f in step.facts]
            view.verdict = step.verdict.value
            view.missing = list(step.missing)
            if step.premise.contradicted:
                view.notes.append(f"Premise contradicted: {step.premise.reason or step.premise.premise}")
            if step.reason:
                view.reason = step.reason
                view.notes.append(step.reason)
        case ReformulateStep():
            view.queries = list(step.sub_queries)
        case GenerateStep():
            view.notes += [f"Outcome: {step.outcome}", f"Sentences: {len(step.sentences)}"]
        case VerifyStep():
            view.notes += [f"Kept: {step.kept}", f"Dropped: {len(step.dropped)}"]
        case RouteStep():
            view.verdict = step.verdict.value if step.verdict else ""
            decision = "search the web" if step.decision == "web" else "collection only"
            view.notes.append(f"Decision: {decision}, because {step.reason}.")
        case WebSearchStep():
            view.queries = list(step.queries)
            view.hits = len(step.sources)
            view.notes += [f"Search failed: {e}" for e in step.errors]
            view.web_pages = [
                (p.url, p.title, f"fetched, {p.passages} passage{'s' if p.passages != 1 else ''}" if p.fetched
                 else f"refused: {p.reason}") for p in step.pages
            ]
    return view


def _audit_quote(sentence: SupportingSentence, passages: Mapping[int, Passage],
                 vocabulary: Callable[[int], Vocabulary | None] | None) -> AuditQuote:
    passage = passages.get(sentence.chunk_id)
    text = sentence.quote
    if line_broken(text):
        words = vocabulary(passage.document_id) if passage is not None and vocabulary is not None else None
        text = reader_text(text, words)
    return AuditQuote(text=text, where=f"{passage.title}, p. {passage.page}" if passage is not None else "",
                      closest=sentence.label == SupportLabel.UNSUPPORTED)
