"""Reading a benchmark file (the devbench format, see docs/benchmark.md), without Django.

`parse_benchmark(text)` reads the JSON into `QuestionSpec` dataclasses. A malformed file raises
`BenchmarkFormatError` naming the line and the reason, so nothing half-valid is imported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

ANSWER = "ANSWER"
REFUSE = "REFUSE_OUT_OF_SCOPE"
DEBUNK = "DEBUNK_FALSE_PREMISE"
EXPECTED_BEHAVIORS = (ANSWER, REFUSE, DEBUNK)

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
