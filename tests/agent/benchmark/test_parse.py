"""Reading benchmark files (agent.benchmark.parse) and importing them with manage.py import_benchmark."""

from __future__ import annotations

import json

import pytest

from agent import benchmark as b

# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

GOOD = [
    {
        "question_id": "Q1",
        "question": "How does the fox move?",
        "category": "single",
        "answerable": True,
        "expected_behavior": "ANSWER",
        "expected_doc_ids": ["paperA"],
        "expected_pages": [{"doc_id": "paperA", "page": 3}],
        "required_evidence_spans": ["the quick brown fox jumps over", "a lazy dog sleeps in the sun"],
        "reference_answer": "It jumps.",
        "acceptable_answer_criteria": "Must say it jumps.",
        "difficulty": "easy",
    },
    {
        "question_id": "Q2",
        "question": "Who won the World Cup?",
        "category": "oos",
        "answerable": False,
        "expected_behavior": "REFUSE_OUT_OF_SCOPE",
        "expected_doc_ids": [],
        "expected_pages": [],
        "required_evidence_spans": [],
        "reference_answer": "The collection does not say.",
        "acceptable_answer_criteria": "Must refuse.",
    },
]


def _dump(questions) -> str:
    return json.dumps(questions, indent=2)


def test_it_parses_a_good_file_and_keeps_unknown_fields():
    questions = b.parse_benchmark(_dump(GOOD))
    assert [q.question_id for q in questions] == ["Q1", "Q2"]
    q1 = questions[0]
    assert q1.expected_pages == (b.ExpectedPage("paperA", 3),)
    assert q1.required_evidence_spans[1] == "a lazy dog sleeps in the sun"
    assert q1.split == "test"  # the devbench file has no split: everything is "test"
    assert q1.extra == {"difficulty": "easy"}
    assert q1.line == 2 and questions[1].line > q1.line
    assert questions[1].answerable is False


def test_it_accepts_an_object_with_a_questions_list():
    text = json.dumps({"name": "dev", "questions": GOOD}, indent=2)
    assert len(b.parse_benchmark(text)) == 2


def test_it_reports_the_line_of_a_json_syntax_error():
    text = _dump(GOOD).splitlines()
    text[5] = text[5].rstrip(",")  # drop a comma on line 6
    with pytest.raises(b.BenchmarkFormatError) as exc:
        b.parse_benchmark("\n".join(text))
    assert exc.value.line in (6, 7)
    assert "not valid JSON" in exc.value.reason


def test_it_reports_the_line_of_a_bad_field():
    bad = json.loads(json.dumps(GOOD))
    bad[1]["expected_behavior"] = "SHRUG"
    text = _dump(bad)
    expected_line = next(i for i, line in enumerate(text.splitlines(), 1) if "SHRUG" in line)
    with pytest.raises(b.BenchmarkFormatError) as exc:
        b.parse_benchmark(text)
    assert exc.value.line == expected_line
    assert "question Q2" in exc.value.reason and "SHRUG" in exc.value.reason


def test_it_reports_a_missing_field_at_the_question():
    bad = json.loads(json.dumps(GOOD))
    del bad[1]["question"]
    text = _dump(bad)
    with pytest.raises(b.BenchmarkFormatError) as exc:
        b.parse_benchmark(text)
    assert exc.value.line == text.splitlines().index("  {", 2) + 1
    assert "'question'" in exc.value.reason


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda q: q.update(answerable="yes"), "answerable must be true or false"),
        (lambda q: q.update(answerable=False), "answerable is false but expected_behavior is ANSWER"),
        (lambda q: q.update(expected_pages=[{"doc_id": "paperA", "page": 0}]), "page: number >= 1"),
        (lambda q: q.update(required_evidence_spans="one span"), "must be a list of strings"),
        (lambda q: q.update(required_evidence_spans=[]), "needs at least one required evidence span"),
        (lambda q: q.update(question_id="Q2"), "used twice"),
    ],
)
def test_it_refuses_malformed_questions(change, reason):
    bad = json.loads(json.dumps(GOOD))
    change(bad[0])
    with pytest.raises(b.BenchmarkFormatError) as exc:
        b.parse_benchmark(_dump(bad))
    assert reason in exc.value.reason


def test_it_refuses_an_empty_file_and_a_scalar():
    for text in ("[]", '"questions"', '{"questions": 3}'):
        with pytest.raises(b.BenchmarkFormatError):
            b.parse_benchmark(text)


def test_it_lists_expected_documents_the_collection_lacks():
    questions = b.parse_benchmark(_dump(GOOD))
    assert b.unknown_doc_ids(questions, ["other.pdf"]) == ["paperA"]
    # matched by the file name's stem or by the title, case-insensitively
    assert b.unknown_doc_ids(questions, ["PaperA.pdf"]) == []
    assert b.unknown_doc_ids(questions, ["paperA"]) == []


def test_it_parses_the_real_devbench_file():
    from tests.conftest import shared_path

    questions = b.parse_benchmark(shared_path("devbench", "questions.json").read_text())
    assert len(questions) == 48
    assert sum(q.expected_behavior == b.REFUSE for q in questions) == 6


# ---------------------------------------------------------------------------
# import_benchmark command (database)
# ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_imports_through_the_command_or_refuses_with_the_line(collection, tmp_path):
    from django.core.management import CommandError, call_command

    from agent.models import BenchmarkSet
    from tests.factories import make_document

    make_document(collection=collection, original_name="paperA.pdf")
    good = tmp_path / "good.json"
    good.write_text(_dump(GOOD))
    call_command("import_benchmark", str(good), collection=collection.slug, name="dev")
    bset = BenchmarkSet.objects.get(name="dev")
    assert bset.questions.count() == 2
    assert bset.questions.get(question_id="Q1").extra == {"difficulty": "easy"}
    assert bset.created_by.username == "alice"

    bad = tmp_path / "bad.json"
    bad.write_text(_dump(GOOD).replace('"Q2"', '"Q1"'))
    with pytest.raises(CommandError, match=r"line \d+: question_id 'Q1' is used twice"):
        call_command("import_benchmark", str(bad), collection=collection.slug, name="dev2")
    assert not BenchmarkSet.objects.filter(name="dev2").exists()
