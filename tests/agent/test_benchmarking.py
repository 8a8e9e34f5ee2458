"""Benchmark files and metrics. The pure part runs without a database; every expected figure
below was computed by hand from the runs in `_records()` (the working is in the comments)."""

from __future__ import annotations

import json

import pytest

from agent import benchmarking as b

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
# Fuzzy span matching
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "text", "found"),
    [
        ("closed-book model performance", "the Closed- book model perfor-\nmance is", True),
        ("we find that fine-tuning helps", "We ﬁnd that ﬁne-tuning helps a lot", True),  # ligatures
        ("the quick brown fox jumps over", "…and then the quick brown fox", True),  # straddles the end
        ("the quick brown fox jumps over", "fox jumps over the hedge", False),  # under half of it
        ("learning rate of 0.001 was used", "learning rate of 0.01 was used", False),
    ],
)
def test_it_matches_spans_fuzzily(span, text, found):
    assert b.span_in_text(span, text) is found


def test_it_splits_answers_into_sentences_keeping_trailing_markers():
    answer = "Foo is bar [1]. Baz is qux. [2] It is 3.5 points higher [1, 2]. Done"
    assert b.answer_sentences(answer) == ["Foo is bar [1].", "Baz is qux. [2]", "It is 3.5 points higher [1, 2].", "Done"]


# ---------------------------------------------------------------------------
# Metrics on hand-made runs
# ---------------------------------------------------------------------------

QA1 = b.QuestionSpec(
    "A1", "fox?", "single", b.ANSWER,
    expected_doc_ids=("paperA",), expected_pages=(b.ExpectedPage("paperA", 3),),
    required_evidence_spans=("the quick brown fox jumps over", "a lazy dog sleeps in the sun"),
)
QA2 = b.QuestionSpec(
    "A2", "rate?", "numeric", b.ANSWER,
    expected_doc_ids=("paperB",), expected_pages=(b.ExpectedPage("paperB", 5),),
    required_evidence_spans=("learning rate of 0.001 was used",),
)
QO = b.QuestionSpec("O1", "world cup?", "oos", b.REFUSE, answerable=False)
QF = b.QuestionSpec(
    "F1", "which reranker?", "premise", b.DEBUNK, answerable=False,
    expected_doc_ids=("paperC",), expected_pages=(b.ExpectedPage("paperC", 2),),
    required_evidence_spans=("we did not use any reranker",),
)


def _cite(text, doc="paperZ.pdf", page=1):
    return b.CitedChunk(text=text, doc_names=(doc, doc), page_start=page, page_end=page)


def _records() -> list[b.RunRecord]:
    fox = "The quick brown fox jumps over the fence"
    dog = "A lazy dog sleeps in the sun."
    premise = "Note: we did not use any re-\nranker in our experiments"
    agentic = [
        # 3 sentences, 2 cited; c1 holds span 1, c2 lies on the expected page; spans retrieved 2/2
        b.RunRecord(1, "agentic", QA1, "ANSWER", "The fox jumps [1]. The dog sleeps [2]. It is sunny.",
                    [_cite(fox, "paperA.pdf", 7), _cite("unrelated text", "paperA.pdf", 3)], [fox, dog],
                    100, 3, 100, 50, 0.01, ["correct", "partial"]),
        b.RunRecord(2, "agentic", QA2, "REFUSAL", "I could not find it.", [], ["nothing relevant"],
                    200, 2, 80, 20, 0.005, ["incorrect", "incorrect"]),
        # out of scope and answered: a hallucination; its citation is not counted in precision
        b.RunRecord(3, "agentic", QO, "ANSWER", "France won [1].", [_cite("football text")], ["football text"],
                    300, 1, 10, 10, 0.0, []),
        b.RunRecord(4, "agentic", QF, "FALSE_PREMISE", "The paper did not use a reranker [1].",
                    [_cite(premise, "paperC.pdf", 9)], [premise], 400, 4, 200, 100, 0.02, ["correct", "correct"]),
    ]
    bm25 = [
        # the cited chunk ends with the first 16 of the span's 25 normalised characters
        b.RunRecord(5, "bm25", QA1, "PARTIAL", "The fox jumps over [1]. Something else.",
                    [_cite("ending with the quick brown fox")], ["ending with the quick brown fox"],
                    50, grades=["partial"]),
        b.RunRecord(6, "bm25", QA2, "ANSWER", "The rate was 0.01 [1].",
                    [_cite("learning rate of 0.01 was used", "paperB.pdf", 4)], ["learning rate of 0.01 was used"],
                    60, grades=["incorrect"]),
        b.RunRecord(7, "bm25", QO, "REFUSAL", "Nothing in the collection says.", [], [], 70),
        b.RunRecord(8, "bm25", QF, "ANSWER", "It used a reranker.", [], [], 80),
    ]
    return agentic + bm25


def test_it_computes_every_metric_of_a_configuration_by_hand():
    report = b.compute_report(_records(), config_order=["bm25", "agentic"])
    assert report.configs == ["bm25", "agentic"]
    m = report.overall["agentic"]
    assert (m.runs, m.answered, m.partial, m.refused, m.debunked, m.failed) == (4, 0.5, 0.0, 0.25, 0.25, 0.0)
    assert (m.out_of_scope_runs, m.hallucination) == (1, 1.0)
    assert (m.false_premise_runs, m.false_premise_debunked) == (1, 1.0)
    assert (m.answerable_runs, m.wrongful_refusal) == (2, 0.5)
    assert (m.citations, m.citation_precision) == (3, 1.0)
    # sentences: run 1 three (two cited), run 3 one (cited), run 4 one (cited); refusals not counted
    assert (m.answer_sentences, m.citation_coverage) == (5, 0.8)
    assert (m.evidence_spans, m.evidence_recall) == (4, 0.75)
    assert (m.latency_p50_ms, m.latency_p95_ms) == (250.0, pytest.approx(385.0))
    assert (m.llm_calls, m.tokens, m.cost_usd) == (10, 570, pytest.approx(0.035))
    # graded: run 1 (1 + 0.5) / 2, run 2 0, run 4 1
    assert (m.graded_runs, m.pending_runs, m.accuracy) == (3, 1, pytest.approx(1.75 / 3))
    # proxy: run 1 one of two spans cited, run 2 refused 0, run 3 answered out of scope 0, run 4 1
    assert m.proxy_accuracy == pytest.approx(0.375)


def test_it_computes_the_baseline_by_hand():
    m = b.compute_report(_records()).overall["bm25"]
    assert (m.answered, m.partial, m.refused, m.debunked) == (0.5, 0.25, 0.25, 0.0)
    assert (m.hallucination, m.false_premise_debunked, m.wrongful_refusal) == (0.0, 0.0, 0.0)
    assert (m.citations, m.citation_precision) == (2, 0.5)
    assert (m.answer_sentences, m.citation_coverage) == (4, 0.5)
    assert (m.evidence_spans, m.evidence_recall) == (4, 0.25)
    assert (m.latency_p50_ms, m.latency_p95_ms) == (65.0, pytest.approx(78.5))
    assert (m.graded_runs, m.pending_runs, m.accuracy) == (2, 2, 0.25)
    # proxy: run 5 half its spans, run 6 none, run 7 a right refusal 1, run 8 no debunk 0
    assert m.proxy_accuracy == pytest.approx(0.375)


def test_it_computes_metrics_by_category():
    report = b.compute_report(_records())
    numeric = report.by_category[("agentic", "numeric")]
    assert (numeric.runs, numeric.refused, numeric.wrongful_refusal, numeric.evidence_recall) == (1, 1.0, 1.0, 0.0)
    assert numeric.hallucination is None  # no out-of-scope question in this category: not 0
    oos = report.by_category[("bm25", "oos")]
    assert (oos.hallucination, oos.evidence_spans, oos.evidence_recall) == (0.0, 0, None)
    assert len(report.rows()) == 2 * (1 + 4)


def test_it_shows_accuracy_as_pending_until_graded():
    records = [r for r in _records() if r.config_name == "bm25"]
    for r in records:
        r.grades = []
    m = b.compute_report(records).overall["bm25"]
    assert (m.accuracy, m.graded_runs, m.pending_runs) == (None, 0, 4)
    assert m.proxy_accuracy == pytest.approx(0.375)


def test_it_computes_kappa_over_runs_with_two_grades():
    # runs 1, 2 and 4: observed 2/3, chance (2*1 + 1*1) / 9 = 1/3, kappa 0.5
    report = b.compute_report(_records())
    assert report.kappa_runs == 3
    assert report.kappa == pytest.approx(0.5)


def test_it_matches_a_textbook_kappa():
    # Wikipedia's "Cohen's kappa" example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> 0.4
    pairs = [("a", "a")] * 20 + [("a", "b")] * 5 + [("b", "a")] * 10 + [("b", "b")] * 15
    assert b.cohen_kappa(pairs) == pytest.approx(0.4)
    assert b.cohen_kappa([]) is None
    assert b.cohen_kappa([("a", "a")] * 3) is None  # chance agreement 1: undefined


def test_it_exports_csv_rows_with_empty_cells_for_undefined():
    rows = b.report_csv_rows(b.compute_report(_records()))
    header = rows[0]
    assert header[:3] == ["config_name", "category", "runs"]
    numeric = next(r for r in rows if r[0] == "agentic" and r[1] == "numeric")
    assert numeric[header.index("hallucination")] == ""


# ---------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------


def test_it_draws_accessible_grouped_bars_and_skips_undefined_values():
    from xml.etree import ElementTree as ET

    from agent import charts

    svg = charts.grouped_bars(
        title="Rates <per> config", groups=["agentic", "bm25"],
        series=[("accuracy", [0.5, 0.25]), ("hallucination", [None, 1.0])],
    )
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.fromstring(svg)  # well-formed, so the title's "<per>" was escaped
    assert root.get("role") == "img"
    assert root.find("s:title", ns).text == "Rates <per> config"
    assert "agentic: accuracy 50%, hallucination n/a" in root.find("s:desc", ns).text
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find("s:title", ns) is not None]
    assert [b.find("s:title", ns).text for b in bars] == [
        "agentic, accuracy: 50%", "bm25, accuracy: 25%", "bm25, hallucination: 100%",
    ]
    # a bar's height is its share of the plot height (400 - 56 - 96 = 248 px)
    assert float(bars[0].get("height")) == pytest.approx(124.0)


def test_it_draws_the_report_charts_with_the_proxy_labelled():
    from agent import charts

    drawn = charts.report_charts(b.compute_report(_records()))
    assert set(drawn) == {"rates", "latency"}
    # two runs per configuration are graded, so human accuracy is shown
    assert "accuracy (human)" in drawn["rates"]
    ungraded = _records()
    for r in ungraded:
        r.grades = []
    drawn = charts.report_charts(b.compute_report(ungraded))
    assert "accuracy (automatic proxy)" in drawn["rates"] and "accuracy (human)" not in drawn["rates"]
    assert "agentic: median latency (ms) 250" in drawn["latency"]
    assert drawn["latency"].count("<circle") == 2 + 2  # a point and a legend swatch each


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
