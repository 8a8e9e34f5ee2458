"""Metrics of benchmark runs, without Django: plain `RunRecord`s (one finished Run each) in,
one `Metrics` row per group out. Every rate has its denominator beside it, so a reader can
tell 0/0 (shown as None) from 0/6.

The matching of evidence spans is deliberately forgiving (see `span_in_text`): the spans
were copied from pypdf output, and our chunks went through a different cleaner.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from agent.benchmark.parse import ANSWER, DEBUNK, REFUSE, QuestionSpec, doc_key
from agent.types import Outcome

# A record's outcome is an agent.types.Outcome value, or this for a run that ended in error
# (it has no outcome).
OUT_FAILED = "FAILED"

GRADES = ("correct", "partial", "incorrect")
GRADE_SCORE = {"correct": 1.0, "partial": 0.5, "incorrect": 0.0}

# A span straddling a chunk boundary still counts when at least this share of it (by
# normalised characters) sits at the chunk's start or end. Half a 5-25 word span is
# still several words in the right order, which does not happen by chance.
STRADDLE_MIN_SHARE = 0.5


_NOT_ALNUM = re.compile(r"[\W_]+")


# A report compares every span with every retrieved chunk; chunks recur across runs and
# configurations, so each text is normalised once.
@functools.lru_cache(maxsize=50_000)
def normalise(text: str) -> str:
    """Letters and digits only, case-folded, after Unicode compatibility folding.

    Dropping every space and hyphen makes "perfor-\\nmance", "closed-\\nbook", "closed-book"
    and "performance" compare as the extractor's variants of the same words, and folds
    ligatures (U+FB01 -> "fi"). Losing word boundaries costs nothing for spans of 5-25 words.
    """
    return _NOT_ALNUM.sub("", unicodedata.normalize("NFKC", text).casefold())


def span_in_text(span: str, text: str, *, normalised: bool = False) -> bool:
    """Whether an evidence span is in a chunk's text, fuzzily.

    Matches when the normalised span is a substring of the normalised text, or when it
    straddles the chunk's edge: a prefix of the span covering at least STRADDLE_MIN_SHARE
    of it ends the text, or such a suffix starts it (a chunk boundary cut the span).
    """
    s = span if normalised else normalise(span)
    t = text if normalised else normalise(text)
    if not s:
        return False
    if s in t:
        return True
    least = max(1, math.ceil(len(s) * STRADDLE_MIN_SHARE))
    # Cheap filters first: a long enough head of the span must lie in the text's tail (or
    # its tail in the text's head) before any exact edge test can succeed.
    head_fits = s[:least] in t[-len(s):]
    tail_fits = s[-least:] in t[: len(s)]
    if not (head_fits or tail_fits):
        return False
    return any(
        (head_fits and t.endswith(s[:k])) or (tail_fits and t.startswith(s[-k:]))
        for k in range(len(s) - 1, least - 1, -1)
    )


@dataclass(frozen=True)
class CitedChunk:
    """One citation of an answer: the chunk text it shows and where that text is."""

    text: str
    doc_names: tuple[str, ...] = ()  # file name and title of its document
    page_start: int = 0
    page_end: int = 0


@dataclass
class RunRecord:
    run_id: int
    config_name: str
    question: QuestionSpec
    outcome: str  # ANSWER / PARTIAL / REFUSAL / FALSE_PREMISE, or FAILED
    answer: str = ""
    citations: list[CitedChunk] = field(default_factory=list)
    retrieved_texts: list[str] = field(default_factory=list)
    latency_ms: float | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    grades: list[str] = field(default_factory=list)  # reviewers' grades, oldest first


_MARKER = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\[A-Z0-9\"'(])")
_LEADING_MARKERS = re.compile(r"^(?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])+")


def answer_sentences(answer: str) -> list[str]:
    """Sentences of an answer; markers placed after the full stop belong to the sentence before."""
    sentences: list[str] = []
    for piece in _SENTENCE_END.split(answer.strip()):
        lead = _LEADING_MARKERS.match(piece)
        if lead and sentences:
            sentences[-1] += " " + lead.group(0).strip()
            piece = piece[lead.end():]
        if piece.strip():
            sentences.append(piece.strip())
    return sentences


def citation_supports(citation: CitedChunk, question: QuestionSpec) -> bool:
    """A citation is precise when its chunk holds a required span or lies on an expected page."""
    if any(span_in_text(s, citation.text) for s in question.required_evidence_spans):
        return True
    names = {doc_key(n) for n in citation.doc_names}
    lo, hi = citation.page_start, max(citation.page_start, citation.page_end)
    return any(doc_key(p.doc_id) in names and lo <= p.page <= hi for p in question.expected_pages)


def spans_covered(spans: Sequence[str], texts: Sequence[str]) -> int:
    normal_texts = [normalise(t) for t in texts]
    return sum(1 for s in spans if any(span_in_text(normalise(s), t, normalised=True) for t in normal_texts))


def proxy_score(record: RunRecord) -> float:
    """Automatic stand-in for accuracy, never shown as accuracy.

    ANSWER questions: answered or partial, scored by the share of required spans in the
    cited chunks; a refusal scores 0. REFUSE questions: 1 for a refusal. DEBUNK questions:
    a debunk scored by span coverage of its citations (1 when the set gives no spans).
    """
    q = record.question
    cited = [c.text for c in record.citations]
    spans = q.required_evidence_spans
    if q.expected_behavior == REFUSE:
        return 1.0 if record.outcome == Outcome.REFUSAL else 0.0
    if q.expected_behavior == DEBUNK:
        if record.outcome != Outcome.FALSE_PREMISE:
            return 0.0
        return spans_covered(spans, cited) / len(spans) if spans else 1.0
    if record.outcome not in (Outcome.ANSWER, Outcome.PARTIAL) or not spans:
        return 0.0
    return spans_covered(spans, cited) / len(spans)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default), q in [0, 100]."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


@dataclass
class Metrics:
    """Metrics of one group of runs (a configuration, overall or within one category)."""

    config_name: str
    category: str  # "" = overall
    runs: int = 0
    answered: float | None = None
    partial: float | None = None
    refused: float | None = None
    debunked: float | None = None
    failed: float | None = None
    out_of_scope_runs: int = 0
    hallucination: float | None = None  # out-of-scope answered instead of refused
    false_premise_runs: int = 0
    false_premise_debunked: float | None = None
    answerable_runs: int = 0
    wrongful_refusal: float | None = None
    citations: int = 0
    citation_precision: float | None = None
    answer_sentences: int = 0
    citation_coverage: float | None = None
    evidence_spans: int = 0
    evidence_recall: float | None = None
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    llm_calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    graded_runs: int = 0
    pending_runs: int = 0
    accuracy: float | None = None  # human-graded; None while nothing is graded
    proxy_accuracy: float | None = None  # automatic proxy, labelled as such

    def as_dict(self) -> dict:
        return asdict(self)


def group_metrics(config_name: str, category: str, records: Sequence[RunRecord]) -> Metrics:
    m = Metrics(config_name=config_name, category=category, runs=len(records))
    n = len(records)
    outcomes = Counter(r.outcome for r in records)
    m.answered = _ratio(outcomes[Outcome.ANSWER], n)
    m.partial = _ratio(outcomes[Outcome.PARTIAL], n)
    m.refused = _ratio(outcomes[Outcome.REFUSAL], n)
    m.debunked = _ratio(outcomes[Outcome.FALSE_PREMISE], n)
    m.failed = _ratio(outcomes[OUT_FAILED], n)

    oos = [r for r in records if r.question.expected_behavior == REFUSE]
    m.out_of_scope_runs = len(oos)
    m.hallucination = _ratio(sum(r.outcome in (Outcome.ANSWER, Outcome.PARTIAL) for r in oos), len(oos))
    fp = [r for r in records if r.question.expected_behavior == DEBUNK]
    m.false_premise_runs = len(fp)
    m.false_premise_debunked = _ratio(sum(r.outcome == Outcome.FALSE_PREMISE for r in fp), len(fp))
    ans = [r for r in records if r.question.expected_behavior == ANSWER]
    m.answerable_runs = len(ans)
    m.wrongful_refusal = _ratio(sum(r.outcome == Outcome.REFUSAL for r in ans), len(ans))

    # Precision only where the set gives evidence: an out-of-scope question has none, and
    # citing anything there is already counted as hallucination.
    with_evidence = [r for r in records if r.question.expected_behavior != REFUSE]
    cites = [(c, r.question) for r in with_evidence for c in r.citations]
    m.citations = len(cites)
    m.citation_precision = _ratio(sum(citation_supports(c, q) for c, q in cites), len(cites))

    sentences = [s for r in records if r.outcome in (Outcome.ANSWER, Outcome.PARTIAL, Outcome.FALSE_PREMISE)
                 for s in answer_sentences(r.answer)]
    m.answer_sentences = len(sentences)
    m.citation_coverage = _ratio(sum(bool(_MARKER.search(s)) for s in sentences), len(sentences))

    spans_total = sum(len(r.question.required_evidence_spans) for r in records)
    m.evidence_spans = spans_total
    m.evidence_recall = _ratio(
        sum(spans_covered(r.question.required_evidence_spans, r.retrieved_texts) for r in records), spans_total
    )

    latencies = [float(r.latency_ms) for r in records if r.latency_ms is not None]
    m.latency_p50_ms = percentile(latencies, 50)
    m.latency_p95_ms = percentile(latencies, 95)
    m.llm_calls = sum(r.llm_calls for r in records)
    m.tokens = sum(r.prompt_tokens + r.completion_tokens for r in records)
    m.cost_usd = round(sum(r.cost_usd for r in records), 6)

    graded = [r for r in records if r.grades]
    m.graded_runs = len(graded)
    m.pending_runs = n - len(graded)
    # A run graded by several reviewers counts once, with the mean of their scores.
    m.accuracy = _ratio(sum(sum(GRADE_SCORE[g] for g in r.grades) / len(r.grades) for r in graded), len(graded))
    m.proxy_accuracy = _ratio(sum(proxy_score(r) for r in records), n)
    return m
