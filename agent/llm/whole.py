"""Summaries and comparisons of whole papers with an LLM backend, map-reduce (issue #14 point 4).

The rule planner marks such a request `plan.clarify == "whole_document"` (agent.local.planner);
the extractive backend says plainly that it cannot do it (agent.local.generator.clarify_draft).
With a model, the LLM auditor and generator hand it here (agent.llm.roles):

1. Papers: those whose titles the question names (the whole title, the part before its colon,
   or the file name without its arXiv id: "Sentence-BERT", "doc2query"), in the order named;
   else the collection's papers in the order retrieval ranked their chunks. At most
   `MAX_PAPERS`; a request for more is answered for the first ones, PARTIAL, with a note
   saying so. A quoted title that no paper has is never replaced by another paper.
2. Map (the audit step): per paper ONE bounded call over its best answer-eligible sentences
   per section (abstract, the introduction's contributions, method, results, conclusion),
   numbered, at most `PROMPT_TOKENS` prompt tokens a call (a 2-core CPU model prefills some
   50-90 tokens/s); the model writes 2-4 summary sentences, each citing sentence numbers.
   The quotes are filled in by code from the numbered sentences (a number that was not
   shown cites nothing), and each sentence is checked by the verifier (agent.verify) at once:
   a paper with no sentence left is a failed paper.
3. Reduce (the generate step), when more than one paper was summarised: ONE call over the
   verified summary sentences, numbered, writing the comparison (or, for a summary of
   several papers, what they share and how they differ); each of its sentences cites
   summary sentences, and its quotes are the original sentences those cite.
4. The draft: the reduce's sentences, then each paper's summary. The loop's verifier checks
   every sentence again and drops one whose citations fail. Outcome ANSWER, or PARTIAL with
   a note naming the paper (or the comparison) that failed and why; every call failing ends
   the run FAILED with the model's error, like any other role.

Budget: at most MAX_PAPERS + 1 calls, and no call starts once the run's LLM time budget (the
client's `budget_seconds`, the bound of one ordinary call) is spent since the map began: a
paper not read for that is named in the PARTIAL note. The sentences the model reads join the
run's evidence (the loop's `sources` list, extended in place), so citations, the audit step
and the saved run show exactly what was read.

The local answer gates of agent.llm.drafts (GATE_ALL, the answer gate) judge whether a
sentence answers a question's needs; a summary has none, so they do not apply here. The
verifier's rules all do, relevance to the request included.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from agent import prompts
from agent.llm.candidates import Candidate
from agent.llm.config import LLMError
from agent.llm.drafts import draft_sentences
from agent.llm.stream import answer_preview
from agent.llm.wire import Items, Text
from agent.types import (
    AuditResult,
    Draft,
    DraftSentence,
    FactAudit,
    Outcome,
    Plan,
    QuoteRef,
    Source,
    SupportingSentence,
    SupportLabel,
    Usage,
    Verdict,
)
from agent.verify import CitationVerifier, eligibility, find_quote, normalise, strip_markers

log = logging.getLogger(__name__)

# Papers read for one request (a call each, then one to compare): more would not fit the
# latency a 2-core CPU model can give one question.
MAX_PAPERS = 3
# Prompt tokens of one map call, system message included, estimated at CHARS_PER_TOKEN
# (Qwen2.5 read the Attention paper's map prompt, 3,207 characters, as 743 tokens with its chat
# template: 4.3 characters a token; numbers and symbols tokenise worse).
PROMPT_TOKENS = 900
CHARS_PER_TOKEN = 4.0
# Sentences shown per section at most, and the order sections are filled in, round by round.
SECTION_QUOTA = {"abstract": 3, "introduction": 2, "method": 2, "results": 3, "conclusion": 2}
FILL_ORDER = ("abstract", "results", "method", "introduction", "conclusion")
SECTION_LABEL = {"abstract": "Abstract", "introduction": "Introduction (contributions)", "method": "Method",
                 "results": "Results", "conclusion": "Conclusion"}
# A longer sentence costs a sixth of the budget: the sentences around it say more.
MAX_SENTENCE_CHARS = 320


# WholeClaimOut.text's bound: a sentence that fills it and does not end was cut there.
_CLAIM_CHARS = 240


class WholeClaimOut(BaseModel):
    text: Text(_CLAIM_CHARS)
    sentences: Items(int, 4)


class SummaryOut(BaseModel):
    """A map or reduce reply: the sentences under "answer", so the run page's preview reads them."""

    answer: Items(WholeClaimOut, 4)


MAP_TASK = (
    "Summarise the paper from its numbered sentences, grouped by section.\n"
    "- answer: 2-4 short sentences that together say what the paper does, how, and what it finds, "
    "using only what the cited sentences state, each with the numbers of the sentences it rests on. "
    "Name the paper's method as the paper does. Copy numbers and names exactly."
)
REDUCE_COMPARE_TASK = (
    "Compare the papers from their numbered summary sentences.\n"
    "- answer: 2-4 short sentences on how the papers differ or agree (task, method, results), each "
    "naming the papers or methods it compares and citing the numbers of the sentences it rests on, "
    "from both papers when it compares them. Only what the cited sentences state; copy numbers and "
    "names exactly."
)
REDUCE_OVERVIEW_TASK = (
    "Write an overview of the papers from their numbered summary sentences.\n"
    "- answer: 2-4 short sentences on what the papers share and how they differ, each naming the "
    "papers or methods it speaks of and citing the numbers of the sentences it rests on. Only what "
    "the cited sentences state; copy numbers and names exactly."
)


# ---------------------------------------------------------------------------
# Which papers
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PaperRef:
    document_id: int
    title: str
    file_name: str = ""


class Library(Protocol):
    """Where the papers of a request come from: the collection(s) the run searches."""

    def catalogue(self, sources: Sequence[Source]) -> list[PaperRef]:
        """The papers the run may read: those of the collections the sources come from."""
        ...

    def chunks(self, document_id: int) -> list[Source]:
        """The paper's chunks in reading order, references left out."""
        ...


class SourcesLibrary:
    """Only the retrieved chunks (no database: benchmarks over fixed sources, tests)."""

    def __init__(self) -> None:
        self._by_doc: dict[int, list[Source]] = {}

    def catalogue(self, sources: Sequence[Source]) -> list[PaperRef]:
        out: dict[int, PaperRef] = {}
        for s in sources:
            if s.document_id is None or s.from_web:
                continue
            self._by_doc.setdefault(s.document_id, [])
            if s.chunk_id not in {c.chunk_id for c in self._by_doc[s.document_id]}:
                self._by_doc[s.document_id].append(s)
            out.setdefault(s.document_id, PaperRef(s.document_id, s.document_title, s.file_name))
        return list(out.values())

    def chunks(self, document_id: int) -> list[Source]:
        return list(self._by_doc.get(document_id, []))


class DatabaseLibrary:
    """The ready papers of the collections the run's retrieved chunks belong to (so never a
    collection the run does not search), read from the database; only `document_ids` when the
    run is limited to some documents (Run.documents)."""

    def __init__(self, document_ids: Sequence[int] | None = None) -> None:
        self.document_ids = list(document_ids) if document_ids else None

    def catalogue(self, sources: Sequence[Source]) -> list[PaperRef]:
        from knowledge.models import Document

        ids = {s.document_id for s in sources if s.document_id is not None and not s.from_web}
        if not ids:
            return []
        collections = set(Document.objects.filter(pk__in=ids).values_list("collection_id", flat=True))
        rows = Document.objects.filter(collection_id__in=collections, status=Document.Status.READY).order_by("pk")
        if self.document_ids is not None:
            rows = rows.filter(pk__in=self.document_ids)
        return [PaperRef(pk, title, name) for pk, title, name in rows.values_list("pk", "title", "original_name")]

    def chunks(self, document_id: int) -> list[Source]:
        from knowledge.models import Chunk

        rows = (Chunk.objects.select_related("document")
                .filter(document_id=document_id, is_reference=False).order_by("ordinal"))
        return [Source(chunk_id=c.pk, document_id=c.document_id, document_title=c.document.title,
                       file_name=c.document.original_name, page=c.page_start, page_end=c.page_end,
                       section=c.section_title, text=c.text) for c in rows]


def default_library(document_ids: Sequence[int] | None = None) -> Library:
    """The database's papers inside the portal (Django set up; only `document_ids` when given),
    else the retrieved chunks only."""
    try:
        from django.apps import apps
        from django.conf import settings
    except ImportError:  # pragma: no cover - Django is a dependency
        return SourcesLibrary()
    if settings.configured and apps.ready:
        return DatabaseLibrary(document_ids)
    return SourcesLibrary()


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text.lower()).split())


_ARXIV_STEM = re.compile(r"^\d{4}\.\d{4,5}(?:v\d+)?[_\-\s]*")
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{8,200})[\"“”«»]|(?<![\w])'([^']{8,200})'(?![\w])")
_NUMBER_WORDS = {"two": 2, "both": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10}
_HOW_MANY = re.compile(r"\b(two|three|four|five|six|seven|eight|nine|ten|\d+|both|all|every|each)\b"
                       r"(?:\s+(?:of\s+)?(?:the|these|those|my|our)?\s*)?(?:\w+\s+)?"
                       r"(?:papers?|documents?|articles?|studies|works)\b", re.IGNORECASE)
_PLURAL = re.compile(r"\b(?:papers|documents|articles|studies|works)\b", re.IGNORECASE)
_COMPARISON = re.compile(r"\b(?:compar\w*|contrast\w*|differ\w*|similarit\w*|in common|versus|vs\.?)\b", re.IGNORECASE)


def _names_of(paper: PaperRef) -> list[str]:
    """The phrases that name the paper in a question: title, its part before a colon, file stem."""
    names = [_norm(paper.title)]
    if ":" in paper.title:
        head = _norm(paper.title.split(":", 1)[0])
        if len(head) >= 3:
            names.append(head)
    stem = _ARXIV_STEM.sub("", paper.file_name.rsplit(".", 1)[0]) if paper.file_name else ""
    if len(_norm(stem)) >= 4:
        names.append(_norm(stem))
    return [n for n in dict.fromkeys(names) if n]


def named_papers(question: str, catalogue: Sequence[PaperRef]) -> tuple[list[PaperRef], list[str]]:
    """(the papers the question names, in the order named; the quoted titles no paper has)."""
    q = f" {_norm(question)} "
    spans: list[tuple[int, int, PaperRef]] = []
    for paper in catalogue:
        for name in _names_of(paper):
            start = q.find(f" {name} ")
            while start >= 0:
                spans.append((start, start + len(name) + 1, paper))
                start = q.find(f" {name} ", start + 1)
    # The longest name at a place wins: "Sentence-BERT" names the Sentence-BERT paper, not BERT.
    # Papers that share the name ("BEIR": two versions) are all named by it.
    taken: list[tuple[int, int, PaperRef]] = []
    for span in sorted(spans, key=lambda s: s[0] - s[1]):
        if not any(span[0] < end and start < span[1] and (start, end) != span[:2] for start, end, _ in taken):
            taken.append(span)
    papers: list[PaperRef] = []
    for _, _, paper in sorted(taken, key=lambda s: s[0]):
        if paper not in papers:
            papers.append(paper)
    unknown = []
    for match in _QUOTED.finditer(question):
        quoted = _norm(match.group(1) or match.group(2))
        if len(quoted.split()) >= 2 and not any(quoted in n or n in quoted
                                                for p in catalogue for n in _names_of(p)):
            unknown.append((match.group(1) or match.group(2)).strip())
    return papers, unknown


def papers_asked(question: str) -> int | None:
    """How many papers the request asks for when it says so ("the two papers": 2, "all
    papers": None, i.e. every one), else 0 (not said)."""
    match = _HOW_MANY.search(question)
    if match is None:
        return 0
    word = match.group(1).lower()
    if word in ("all", "every", "each"):
        return None
    return int(word) if word.isdigit() else _NUMBER_WORDS[word]


def is_comparison(question: str) -> bool:
    return bool(_COMPARISON.search(question))


@dataclass
class Selection:
    papers: list[PaperRef]
    notes: list[str] = field(default_factory=list)  # papers asked for and not read
    unknown: list[str] = field(default_factory=list)  # quoted titles no paper has


def select_papers(question: str, sources: Sequence[Source], catalogue: Sequence[PaperRef], *,
                  limit: int = MAX_PAPERS) -> Selection:
    """The papers to read: named ones, else those retrieval ranked first (module doc, step 1)."""
    named, unknown = named_papers(question, catalogue)
    if named:
        chosen, total, how = named, len(named), "named"
    elif unknown:
        # A title the user quoted is not in the collection: never another paper in its place.
        return Selection([], unknown=unknown)
    else:
        by_id = {p.document_id: p for p in catalogue}
        ranked: list[PaperRef] = []
        # Top-k chunks first, then the deeper pool, each paper once.
        for s in [*(s for s in sources if not s.pool), *(s for s in sources if s.pool)]:
            paper = by_id.get(s.document_id) if s.document_id is not None else None
            if paper is not None and paper not in ranked:
                ranked.append(paper)
        asked = papers_asked(question)
        if asked is None:
            want = len(catalogue)
        elif asked:
            want = asked
        else:
            want = 2 if is_comparison(question) else (limit if _PLURAL.search(question) else 1)
        chosen = ranked[:want]
        total = want if asked != 0 else len(chosen)
        how = "asked for"
    notes = []
    if total > limit:
        left = [f'"{p.title}"' for p in chosen[limit:limit + 5]]
        notes.append(f"Only {limit} papers are read for one request: {limit} of the {total} papers {how} were read"
                     + (f" (not read: {'; '.join(left)})" if left else "") + ". Ask about the others separately.")
    return Selection(chosen[:limit], notes=notes, unknown=unknown)


# ---------------------------------------------------------------------------
# Map: the best sentences per section
# ---------------------------------------------------------------------------

_SECTION_KINDS = (
    ("skip", re.compile(r"\b(?:references?|bibliograph\w*|acknowledge?ments?|appendix|appendices|related\s+work|"
                        r"background|prior\s+work|ethics|broader\s+impact)\b")),
    ("abstract", re.compile(r"\babstract\b")),
    ("introduction", re.compile(r"\b(?:introduction|motivation)\b")),
    ("conclusion", re.compile(r"\b(?:conclu\w*|discussion|summary|future\s+work|limitations?)\b")),
    ("results", re.compile(r"\b(?:results?|experiment\w*|evaluation\w*|analys[ie]s|ablations?|performance|"
                           r"benchmarks?|findings|comparisons?)\b")),
    ("method", re.compile(r"\b(?:method\w*|approach\w*|models?|architecture|framework|proposed|design|training|"
                          r"algorithms?|system|implementation|pre-?training|fine-?tuning)\b")),
)
_CONTRIBUTION = re.compile(r"\b(?:we\s+(?:propose|present|introduce|show|find|demonstrate|release|describe|develop)|"
                           r"our\s+(?:contributions?|approach|method|model|results?|main)|in\s+this\s+(?:paper|work)|"
                           r"this\s+(?:paper|work)\s+\w+s)\b", re.IGNORECASE)
_RESULT = re.compile(r"\b(?:outperform\w*|achiev\w*|improv\w*|state[\s-]of[\s-]the[\s-]art|better|gains?|"
                     r"surpass\w*|accuracy|significant\w*)\b", re.IGNORECASE)
_OWN = re.compile(r"\b(?:we|our)\b", re.IGNORECASE)


def section_kind(heading: str) -> str:
    """abstract / introduction / method / results / conclusion / skip, or "" (not known)."""
    text = re.sub(r"^[\d.\sIVX]+", "", heading.lower()).strip()
    for kind, pattern in _SECTION_KINDS:
        if pattern.search(text):
            return kind
    return ""


@dataclass(frozen=True)
class Shown:
    """A sentence of a paper shown to the model: its section kind and place."""

    kind: str
    order: int  # reading order within the paper
    text: str
    source: Source
    score: float


def _paper_sentences(chunks: Sequence[Source], question: str) -> list[Shown]:
    """The answer-eligible sentences of a paper with their section kind and a score.

    A chunk's kind is its heading's (a numbered subsection's, its section's); a heading nothing
    matches takes the kind before it (after the introduction: method), and chunks before any
    heading are the abstract."""
    from agent.local.eligibility import is_injection, is_instruction
    from agent.local.text import content_terms, split_sentences
    from knowledge.text import quotable

    focus = set(content_terms(question)) - set(content_terms(
        "summarise summarize summary overview compare comparison contrast difference differ paper papers "
        "document documents article main key give describe explain tell briefly"))
    out: list[Shown] = []
    kind = "abstract"
    seen: set[str] = set()
    order = 0
    per_kind: dict[str, int] = {}
    # "6.2 Model Variations" is part of "6 Results": a numbered subsection takes its section's kind.
    top_kinds: dict[str, str] = {}
    for chunk in chunks:
        heading = chunk.section.strip()
        number = re.match(r"(\d+)(\.\d+)*\.?\s", heading)
        named = section_kind(heading) if heading else ""
        if number and number.group(2) and top_kinds.get(number.group(1)):
            named = top_kinds[number.group(1)]
        elif number and named:
            top_kinds[number.group(1)] = named
        if named:
            kind = named
        elif heading and kind == "introduction":
            kind = "method"
        if kind == "skip" or is_injection(chunk.text):
            continue
        for sentence in split_sentences(chunk.text):
            if not 20 <= len(sentence) <= 500 or sentence[0].islower() or eligibility(sentence):
                continue
            sentence = quotable(sentence)
            key = normalise(sentence)
            if (not sentence or len(sentence) > MAX_SENTENCE_CHARS or key in seen or is_instruction(sentence)
                    or find_quote(sentence, chunk.text) < 0):
                continue
            # The introduction is read for the paper's own contributions, not its background.
            if kind == "introduction" and not (_CONTRIBUTION.search(sentence) or _OWN.search(sentence)):
                continue
            seen.add(key)
            place = per_kind.get(kind, 0)
            per_kind[kind] = place + 1
            score = -0.05 * place
            if kind in ("introduction", "conclusion", "abstract") and _CONTRIBUTION.search(sentence):
                score += 1.0
            if kind == "results":
                score += 0.5 * bool(_RESULT.search(sentence)) + 0.5 * bool(re.search(r"\d", sentence))
            if kind == "method" and _OWN.search(sentence):
                score += 0.5
            if focus:
                score += 0.5 * len(focus & set(content_terms(sentence))) / len(focus)
            out.append(Shown(kind, order, sentence, chunk, score))
            order += 1
    return out


def choose_sentences(sentences: Sequence[Shown], *, room_chars: int) -> list[Shown]:
    """The best sentences of each section, filled round by round in FILL_ORDER within the
    section quotas and `room_chars`, returned in reading order."""
    by_kind = {k: sorted((s for s in sentences if s.kind == k), key=lambda s: -s.score) for k in SECTION_QUOTA}
    chosen: list[Shown] = []
    used = 0
    for rank in range(max(SECTION_QUOTA.values())):
        for kind in FILL_ORDER:
            pool = by_kind[kind]
            if rank < min(len(pool), SECTION_QUOTA[kind]):
                cost = len(pool[rank].text) + 8
                if used + cost <= room_chars:
                    chosen.append(pool[rank])
                    used += cost
    if not chosen and sentences:
        # A paper with no section the rules know (a short text): its first sentences.
        for s in sentences:
            if used + len(s.text) + 8 > room_chars:
                break
            chosen.append(s)
            used += len(s.text) + 8
    return sorted(chosen, key=lambda s: s.order)


def _map_messages(question: str, paper: PaperRef, numbered: Sequence[tuple[int, Shown]]) -> list[dict[str, str]]:
    title = prompts.escape_data(paper.title or paper.file_name or "paper").replace('"', "'")
    parts: list[str] = []
    kind = ""
    for n, s in numbered:
        if s.kind != kind:
            if kind:
                parts.append("</section>")
            kind = s.kind
            parts.append(f'<section name="{SECTION_LABEL[kind]}">')
        parts.append(f"[{n}] {prompts.escape_data(s.text)}")
    if kind:
        parts.append("</section>")
    body = "\n".join(parts)
    data = f'{prompts.question_block(question)}\n<evidence>\n<document title="{title}">\n{body}\n</document>\n</evidence>'
    return prompts._messages(MAP_TASK, data)


def _prompt_chars(messages: Sequence[dict[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages)


def map_prompt(question: str, paper: PaperRef, sentences: Sequence[Shown]) -> tuple[list[dict[str, str]], list[Shown]]:
    """The map call's messages and the sentences it numbers (1..n), within PROMPT_TOKENS."""
    fixed = _prompt_chars(_map_messages(question, paper, []))
    # Section tags cost about 40 characters each.
    room = int(PROMPT_TOKENS * CHARS_PER_TOKEN) - fixed - 40 * len(SECTION_QUOTA)
    chosen = choose_sentences(sentences, room_chars=max(room, 0))
    return _map_messages(question, paper, list(enumerate(chosen, start=1))), chosen


# ---------------------------------------------------------------------------
# The run: map in the audit step, reduce in the generate step
# ---------------------------------------------------------------------------


@dataclass
class PaperResult:
    paper: PaperRef
    sentences: list[DraftSentence] = field(default_factory=list)  # as drafted
    kept: list[DraftSentence] = field(default_factory=list)  # those the verifier keeps
    shown: list[Candidate] = field(default_factory=list)
    failure: str = ""  # why the paper has no summary


@dataclass
class MapResult:
    question: str
    selection: Selection
    papers: list[PaperResult]
    llm_seconds: float = 0.0  # spent in model calls so far (the run's LLM time budget)
    notes: list[str] = field(default_factory=list)  # the model's sentences set aside before verification


def _call(client: Any, messages: list[dict[str, str]], on_text: Callable[[str], None] | None) -> tuple[SummaryOut, Usage]:
    if on_text is None:
        return client.structured(messages, SummaryOut)
    return client.structured(messages, SummaryOut, on_text=on_text)


def _key(question: str, sources: Sequence[Source]) -> tuple[str, tuple[int, ...]]:
    return question, tuple(s.chunk_id for s in sources)


def _source_number(sources: list[Source], source: Source) -> int:
    """The 1-based place of the chunk in the run's evidence, appended when it is new."""
    for n, s in enumerate(sources, start=1):
        if s.chunk_id == source.chunk_id:
            return n
    sources.append(source)
    return len(sources)


class WholePapers:
    """Map-reduce over whole papers for one set of LLM roles (module doc). The auditor's hook
    calls `audit` (map), the generator's `generate` (reduce and the draft)."""

    def __init__(self, client: Any, *, embed: Any = None, library: Library | None = None,
                 max_papers: int = MAX_PAPERS, clock: Callable[[], float] = time.monotonic) -> None:
        self.client = client
        self.embed = embed
        self.library = library if library is not None else default_library()
        self.max_papers = max_papers
        self.clock = clock
        self._lock = threading.Lock()
        self._maps: dict[tuple[str, tuple[int, ...]], tuple[AuditResult, MapResult]] = {}

    # -- budget -------------------------------------------------------------------

    def _budget_seconds(self) -> float | None:
        config = getattr(self.client, "config", None)
        return float(config.budget_seconds) if config is not None else None

    def _spent(self, mapped: MapResult) -> bool:
        budget = self._budget_seconds()
        return budget is not None and mapped.llm_seconds >= budget

    def _timed_call(self, mapped: MapResult, messages: list[dict[str, str]],
                    on_text: Callable[[str], None] | None) -> tuple[SummaryOut, Usage]:
        started = self.clock()
        try:
            return _call(self.client, messages, on_text)
        finally:
            mapped.llm_seconds += self.clock() - started

    # -- map (the audit step) -----------------------------------------------------

    def audit(self, question: str, plan: Plan, sources: list[Source]) -> AuditResult:
        """Map: one summary call per paper. Extends `sources` in place with the chunks whose
        sentences the model was shown (the loop hands that list to the generator and verifier)."""
        with self._lock:
            done = self._maps.get(_key(question, sources))
        if done is not None:
            # The same evidence audited again: nothing new to read.
            return done[0]
        catalogue = self.library.catalogue(sources)
        selection = select_papers(question, sources, catalogue, limit=self.max_papers)
        if not selection.papers:
            what = ("no paper titled " + "; ".join(f'"{t}"' for t in selection.unknown) + " is in the collection"
                    if selection.unknown else "no paper of the collection was found for the request")
            audit = AuditResult(verdict=Verdict.INSUFFICIENT_REFUSE, reason=what,
                                missing=[f'a summary of "{t}"' for t in selection.unknown] or [question])
            return audit
        verifier = CitationVerifier(embed=self.embed)
        results: list[PaperResult] = []
        mapped = MapResult(question, selection, results)
        usage = Usage()
        errors: list[LLMError] = []
        notes = mapped.notes
        preview: list[str] = []
        replied = 0
        for paper in selection.papers:
            result = PaperResult(paper)
            results.append(result)
            if self._spent(mapped):
                result.failure = "not read: the run's LLM time budget was spent"
                continue
            chunks = self.library.chunks(paper.document_id)
            messages, chosen = map_prompt(question, paper, _paper_sentences(chunks, question))
            if not chosen:
                result.failure = "no answer-eligible sentence was found in it"
                continue
            result.shown = [Candidate(number=n, source=_source_number(sources, s.source), text=s.text, score=s.score)
                            for n, s in enumerate(chosen, start=1)]
            try:
                out, spent = self._timed_call(mapped, messages, answer_preview(preview, sources))
            except LLMError as exc:
                usage = usage + exc.usage
                errors.append(exc)
                result.failure = f"the model gave no summary ({exc})"
                log.warning("whole-paper map failed for %r: %s", paper.title, exc)
                continue
            usage = usage + spent
            replied += 1
            by_number = {c.number: c for c in result.shown}
            for claim in out.answer:
                text, inline = strip_markers(claim.text)
                if text and not any(n in by_number for n in [*claim.sentences, *inline]):
                    notes.append(f"cites no sentence it was shown: {text[:80]}")
            result.sentences = _whole_sentences(draft_sentences(out.answer, by_number), notes)
            result.kept = _verified(result.sentences, sources, question, verifier)
            preview.extend(s.text for s in result.kept)
            if not result.kept:
                result.failure = ("no summary sentence held up against its quotes" if result.sentences
                                  else "the model's summary cited none of the sentences it was shown")
        if errors and not replied:
            # The model gave nothing (every call failed, or the budget left none to try): the
            # run fails with its error, as it would in any other role.
            first = errors[0]
            first.usage = usage
            raise first
        facts = []
        for r in results:
            supporting = [SupportingSentence(chunk_id=sources[e.source - 1].chunk_id, quote=e.text,
                                             label=SupportLabel.SUPPORTED, verified=True,
                                             quote_start=find_quote(e.text, sources[e.source - 1].text))
                          for s in r.kept for e in s.evidence]
            facts.append(FactAudit(fact=f'a summary of "{r.paper.title}"',
                                   label=SupportLabel.SUPPORTED if r.kept else SupportLabel.UNSUPPORTED,
                                   sentences=list({(x.chunk_id, x.quote): x for x in supporting}.values())))
        summarised = [r for r in results if r.kept]
        if not summarised:
            verdict = Verdict.INSUFFICIENT_REFUSE
        elif len(summarised) == len(results) and not selection.notes:
            verdict = Verdict.SUFFICIENT
        else:
            verdict = Verdict.PARTIALLY_SUFFICIENT
        reason = (f"whole papers, map-reduce: {len(summarised)} of {len(results)} papers summarised "
                  f"from their sections' sentences")
        missing = [f'a summary of "{r.paper.title}": {r.failure}' for r in results if not r.kept]
        audit = AuditResult(facts=facts, verdict=verdict, reason=reason, missing=missing, usage=usage)
        with self._lock:
            if len(self._maps) > 64:
                self._maps.clear()
            # Keyed by the evidence as extended: the generator is handed this very list.
            self._maps[_key(question, sources)] = (audit, mapped)
        return audit

    # -- reduce and the draft (the generate step) ---------------------------------

    def generate(self, question: str, sources: list[Source], audit: AuditResult | None) -> Draft | None:
        """The draft of a request `audit` mapped, else None (not a whole-paper request)."""
        with self._lock:
            done = self._maps.pop(_key(question, sources), None)
        if done is None or audit is None:
            return None
        mapped = done[1]
        summarised = [r for r in mapped.papers if r.kept]
        problems = [f'No summary of "{r.paper.title}": {r.failure}.' for r in mapped.papers if not r.kept]
        problems += mapped.selection.notes
        if not summarised:
            return Draft(outcome=Outcome.REFUSAL, sentences=[
                DraftSentence(text="None of the papers asked for could be summarised from sentences it can cite."),
                *(DraftSentence(text=p) for p in problems)], missing_note=" ".join(problems), notes=list(mapped.notes))
        usage = Usage()
        reduced: list[DraftSentence] = []
        if len(summarised) > 1:
            if self._spent(mapped):
                problems.append("The comparison was not written: the run's LLM time budget was spent.")
            else:
                reduced, usage, why = self._reduce(question, summarised, sources, mapped)
                if why:
                    problems.append(why)
        sentences = [*reduced, *(s for r in mapped.papers for s in r.sentences)]
        outcome = Outcome.PARTIAL if problems else Outcome.ANSWER
        return Draft(outcome=outcome, sentences=sentences, missing_note=" ".join(problems), usage=usage,
                     notes=list(mapped.notes))

    def _reduce(self, question: str, papers: Sequence[PaperResult], sources: list[Source],
                mapped: MapResult) -> tuple[list[DraftSentence], Usage, str]:
        numbered: list[tuple[int, PaperResult, DraftSentence]] = []
        for r in papers:
            for s in r.kept:
                numbered.append((len(numbered) + 1, r, s))
        task = REDUCE_COMPARE_TASK if is_comparison(question) else REDUCE_OVERVIEW_TASK
        blocks = []
        for r in papers:
            title = prompts.escape_data(r.paper.title or r.paper.file_name or "paper").replace('"', "'")
            lines = "\n".join(f"[{n}] {prompts.escape_data(s.text)}" for n, owner, s in numbered if owner is r)
            blocks.append(f'<document title="{title}">\n{lines}\n</document>')
        data = prompts.question_block(question) + "\n<evidence>\n" + "\n".join(blocks) + "\n</evidence>"
        done_text = [s.text for r in papers for s in r.kept]
        try:
            out, usage = self._timed_call(mapped, prompts._messages(task, data), answer_preview(done_text, sources))
        except LLMError as exc:
            log.warning("whole-paper reduce failed: %s", exc)
            return [], exc.usage, f"The comparison was not written: the model gave no reply ({exc})."
        by_number = {n: s for n, _, s in numbered}
        drafted: list[DraftSentence] = []
        for claim in out.answer:
            text, inline = strip_markers(prompts.unescape_data(claim.text))
            cited = [n for n in dict.fromkeys([*claim.sentences, *inline]) if n in by_number]
            if not text:
                continue
            if not cited:
                mapped.notes.append(f"cites no sentence it was shown: {text[:80]}")
                continue
            # Carried through: the quotes of the summary sentences it cites, the papers' own sentences.
            evidence = list({(e.source, e.text): e for n in cited for e in by_number[n].evidence}.values())
            drafted.append(DraftSentence(text=text, citations=list(dict.fromkeys(e.source for e in evidence)),
                                         quote=evidence[0].text, evidence=[QuoteRef(source=e.source, text=e.text)
                                                                           for e in evidence]))
        drafted = _whole_sentences(drafted, mapped.notes)
        if not drafted:
            return [], usage, "The comparison was not written: the model's reply cited no summary sentence."
        verifier = CitationVerifier(embed=self.embed)
        if not _verified(drafted, sources, question, verifier):
            return drafted, usage, "No sentence of the comparison held up against its quotes."
        return drafted, usage, ""


def _whole_sentences(sentences: Sequence[DraftSentence], notes: list[str]) -> list[DraftSentence]:
    """The sentences the schema's bound did not cut mid-way ("... compared using cosine-si"); a
    sentence the model copied whole was restored to its full length before (draft_sentences)."""
    kept = []
    for s in sentences:
        if len(s.text) >= _CLAIM_CHARS - 2 and not re.search(r"[.!?)\]\"']\s*$", s.text):
            notes.append(f"cut off at the reply's {_CLAIM_CHARS}-character bound: {s.text[:80]}")
            continue
        kept.append(s)
    return kept


def _verified(sentences: Sequence[DraftSentence], sources: list[Source], question: str,
              verifier: CitationVerifier) -> list[DraftSentence]:
    """The sentences the verifier keeps, each checked alone as the loop's verifier will."""
    kept = []
    for sentence in sentences:
        answer = verifier.verify(Draft(outcome=Outcome.ANSWER, sentences=[sentence]), sources, question=question)
        if answer.outcome == Outcome.ANSWER and answer.sentences:
            kept.append(sentence)
    return kept
