"""Benchmark sets and their metrics, without Django.

Two halves:

* `parse_benchmark(text)` reads a benchmark JSON file (the devbench format, see
  docs/benchmark.md) into `QuestionSpec` dataclasses. A malformed file raises
  `BenchmarkFormatError` naming the line and the reason, so nothing half-valid is imported.
* `compute_report(records)` turns plain `RunRecord`s (one finished Run each) into metrics
  per configuration, overall and by category. Every rate has its denominator beside it,
  so a reader can tell 0/0 (shown as None) from 0/6.

The matching of evidence spans is deliberately forgiving (see `span_in_text`): the spans
were copied from pypdf output, and our chunks went through a different cleaner.
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import PurePosixPath

from agent.types import Outcome

ANSWER = "ANSWER"
REFUSE = "REFUSE_OUT_OF_SCOPE"
DEBUNK = "DEBUNK_FALSE_PREMISE"
EXPECTED_BEHAVIORS = (ANSWER, REFUSE, DEBUNK)

# A record's outcome is an agent.types.Outcome value, or this for a run that ended in error
# (it has no outcome).
OUT_FAILED = "FAILED"

GRADES = ("correct", "partial", "incorrect")
GRADE_SCORE = {"correct": 1.0, "partial": 0.5, "incorrect": 0.0}

KNOWN_FIELDS = (
    "question_id",
    "question",
    "category",
    "split",
    "answerable",
    "expected_behavior",
    "expected_doc_ids",
    "expected_pages",
    "required_evidence_spans",
    "reference_answer",
    "acceptable_answer_criteria",
)
DEFAULT_SPLIT = "test"

# A span straddling a chunk boundary still counts when at least this share of it (by
# normalised characters) sits at the chunk's start or end. Half a 5-25 word span is
# still several words in the right order, which does not happen by chance.
STRADDLE_MIN_SHARE = 0.5


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


class BenchmarkFormatError(ValueError):
    def __init__(self, line: int, reason: str):
        self.line = line
        self.reason = reason
        super().__init__(f"line {line}: {reason}")


@dataclass(frozen=True)
class ExpectedPage:
    doc_id: str
    page: int


@dataclass(frozen=True)
class QuestionSpec:
    question_id: str
    question: str
    category: str
    expected_behavior: str
    answerable: bool = True
    split: str = DEFAULT_SPLIT
    expected_doc_ids: tuple[str, ...] = ()
    expected_pages: tuple[ExpectedPage, ...] = ()
    required_evidence_spans: tuple[str, ...] = ()
    reference_answer: str = ""
    acceptable_answer_criteria: str = ""
    extra: dict = field(default_factory=dict, hash=False, compare=False)
    line: int = 0  # where the question's object starts in the file


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _array_items(text: str, start: int) -> list[tuple[int, object]]:
    """(offset, value) of each element of the JSON array that opens at text[start] == '['.

    The file has already been parsed once, so this walk cannot fail; it exists only to
    know where each question starts, for error messages that point at a line.
    """
    decoder = json.JSONDecoder()
    items: list[tuple[int, object]] = []
    pos = _skip_ws(text, start + 1)
    if text[pos] == "]":
        return items
    while True:
        pos = _skip_ws(text, pos)
        value, end = decoder.raw_decode(text, pos)
        items.append((pos, value))
        pos = _skip_ws(text, end)
        if text[pos] == "]":
            return items
        pos += 1  # the comma


def _field_line(text: str, obj_start: int, obj_line: int, name: str) -> int:
    """The line of `"name":` inside the object starting at obj_start (else the object's)."""
    match = re.compile(r'"' + re.escape(name) + r'"\s*:').search(text, obj_start)
    return _line_of(text, match.start()) if match else obj_line


def _str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _question(raw: object, text: str, offset: int) -> QuestionSpec:
    line = _line_of(text, offset)
    if not isinstance(raw, dict):
        raise BenchmarkFormatError(line, f"a question must be a JSON object, not {type(raw).__name__}")

    def fail(name: str, reason: str) -> BenchmarkFormatError:
        qid = raw.get("question_id")
        where = f"question {qid}: " if isinstance(qid, str) and qid else ""
        return BenchmarkFormatError(_field_line(text, offset, line, name), where + reason)

    for name in ("question_id", "question", "category", "expected_behavior"):
        if name not in raw:
            raise BenchmarkFormatError(line, f"question is missing the required field {name!r}")
        if not isinstance(raw[name], str) or not raw[name].strip():
            raise fail(name, f"{name} must be a non-empty string")
    behavior = raw["expected_behavior"]
    if behavior not in EXPECTED_BEHAVIORS:
        raise fail("expected_behavior", f"expected_behavior {behavior!r} is not one of {', '.join(EXPECTED_BEHAVIORS)}")
    answerable = raw.get("answerable", behavior == ANSWER)
    if not isinstance(answerable, bool):
        raise fail("answerable", "answerable must be true or false")
    if answerable != (behavior == ANSWER):
        raise fail("answerable", f"answerable is {str(answerable).lower()} but expected_behavior is {behavior}")
    split = raw.get("split", DEFAULT_SPLIT)
    if not isinstance(split, str) or not split.strip():
        raise fail("split", "split must be a non-empty string")
    for name in ("expected_doc_ids", "required_evidence_spans"):
        if not _str_list(raw.get(name, [])):
            raise fail(name, f"{name} must be a list of strings")
    for name in ("reference_answer", "acceptable_answer_criteria"):
        if not isinstance(raw.get(name, ""), str):
            raise fail(name, f"{name} must be a string")
    pages_raw = raw.get("expected_pages", [])
    if not isinstance(pages_raw, list):
        raise fail("expected_pages", "expected_pages must be a list of {doc_id, page} objects")
    pages = []
    for item in pages_raw:
        ok = (
            isinstance(item, dict)
            and isinstance(item.get("doc_id"), str)
            and isinstance(item.get("page"), int)
            and not isinstance(item.get("page"), bool)
            and item["page"] >= 1
        )
        if not ok:
            raise fail("expected_pages", f"each expected page must be {{doc_id: string, page: number >= 1}}, got {item!r}")
        pages.append(ExpectedPage(item["doc_id"], item["page"]))
    if behavior == ANSWER and not raw.get("required_evidence_spans"):
        raise fail("required_evidence_spans", "an answerable question needs at least one required evidence span")
    return QuestionSpec(
        question_id=raw["question_id"].strip(),
        question=raw["question"].strip(),
        category=raw["category"].strip(),
        expected_behavior=behavior,
        answerable=answerable,
        split=split.strip(),
        expected_doc_ids=tuple(raw.get("expected_doc_ids", [])),
        expected_pages=tuple(pages),
        required_evidence_spans=tuple(raw.get("required_evidence_spans", [])),
        reference_answer=raw.get("reference_answer", ""),
        acceptable_answer_criteria=raw.get("acceptable_answer_criteria", ""),
        extra={k: v for k, v in raw.items() if k not in KNOWN_FIELDS},
        line=line,
    )


def parse_benchmark(text: str) -> list[QuestionSpec]:
    """Questions of a benchmark file: a JSON array, or an object with a "questions" array.

    Raises BenchmarkFormatError(line, reason) at the first problem; the caller imports
    nothing in that case.
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BenchmarkFormatError(exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    start = _skip_ws(text, 0)
    if isinstance(data, dict):
        if not isinstance(data.get("questions"), list):
            raise BenchmarkFormatError(1, 'expected a list of questions, or an object with a "questions" list')
        match = re.compile(r'"questions"\s*:\s*\[').search(text)
        # An escaped spelling of the key is not found: report such questions at line 1.
        items = _array_items(text, match.end() - 1) if match else [(0, q) for q in data["questions"]]
    elif isinstance(data, list):
        items = _array_items(text, start)
    else:
        raise BenchmarkFormatError(1, 'expected a list of questions, or an object with a "questions" list')
    if not items:
        raise BenchmarkFormatError(_line_of(text, start), "the file holds no questions")
    questions: list[QuestionSpec] = []
    seen: dict[str, int] = {}
    for offset, raw in items:
        q = _question(raw, text, offset)
        if q.question_id in seen:
            raise BenchmarkFormatError(
                q.line, f"question_id {q.question_id!r} is used twice (first on line {seen[q.question_id]})"
            )
        seen[q.question_id] = q.line
        questions.append(q)
    return questions


def doc_key(name: str) -> str:
    """How a document name is compared with expected_doc_ids: file stem, case-folded."""
    name = name.strip()
    stem = PurePosixPath(name).stem if name.lower().endswith((".pdf", ".md", ".txt", ".html", ".htm")) else name
    return stem.casefold()


def unknown_doc_ids(questions: Iterable[QuestionSpec], known_names: Iterable[str]) -> list[str]:
    """expected_doc_ids (and expected page doc ids) matching no known file name or title."""
    known = {doc_key(n) for n in known_names if n}
    wanted: list[str] = []
    for q in questions:
        wanted += list(q.expected_doc_ids) + [p.doc_id for p in q.expected_pages]
    return sorted({d for d in wanted if doc_key(d) not in known})


# ---------------------------------------------------------------------------
# Fuzzy evidence matching
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Run records and metrics
# ---------------------------------------------------------------------------


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



@dataclass
class Report:
    configs: list[str]
    categories: list[str]
    overall: dict[str, Metrics]
    by_category: dict[tuple[str, str], Metrics]
    kappa: float | None
    kappa_runs: int

    def rows(self) -> list[Metrics]:
        """Overall row of each configuration, then its categories."""
        out: list[Metrics] = []
        for c in self.configs:
            out.append(self.overall[c])
            out += [self.by_category[(c, cat)] for cat in self.categories if (c, cat) in self.by_category]
        return out

    def as_dict(self) -> dict:
        return {
            "configs": self.configs,
            "categories": self.categories,
            "kappa": self.kappa,
            "kappa_runs": self.kappa_runs,
            "rows": [m.as_dict() for m in self.rows()],
        }


def compute_report(records: Sequence[RunRecord], *, config_order: Sequence[str] = ()) -> Report:
    """Metrics per configuration, overall and by category, plus reviewer agreement."""
    configs = list(dict.fromkeys([*config_order, *(r.config_name for r in records)]))
    configs = [c for c in configs if any(r.config_name == c for r in records)]
    categories = sorted({r.question.category for r in records})
    grouped: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        grouped[r.config_name].append(r)
    overall = {c: group_metrics(c, "", grouped[c]) for c in configs}
    by_category = {}
    for c in configs:
        for cat in categories:
            members = [r for r in grouped[c] if r.question.category == cat]
            if members:
                by_category[(c, cat)] = group_metrics(c, cat, members)
    pairs = [(r.grades[0], r.grades[1]) for r in records if len(r.grades) >= 2]
    return Report(configs, categories, overall, by_category, cohen_kappa(pairs), len(pairs))


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of (first grade, second grade) pairs; None when undefined.

    With many reviewers, "first" and "second" are the first two to grade each run, so this
    is agreement between graders in general, not between two fixed people.
    Undefined when there are no pairs, or when chance agreement is already 1 (both raters
    used one and the same grade for everything).
    """
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    expected = sum(first[k] * second[k] for k in set(first) | set(second)) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


CSV_FIELDS = tuple(Metrics.__dataclass_fields__)


def report_csv_rows(report: Report) -> list[list[object]]:
    """Header plus one row per metrics group; None becomes an empty cell."""
    rows: list[list[object]] = [list(CSV_FIELDS)]
    for m in report.rows():
        d = m.as_dict()
        rows.append(["" if d[k] is None else d[k] for k in CSV_FIELDS])
    return rows
