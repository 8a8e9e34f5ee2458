"""Benchmark pages and the review queue: who may do what, blind mode, import errors, exports."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from agent.benchmark import service as sb
from agent.models import BenchmarkRun, BenchmarkSet, Citation, Review, Run
from agent.review import services as review_services
from knowledge import services as ks
from knowledge.models import Role
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db

QUESTIONS = [
    {
        "question_id": "Q1",
        "question": "How does the fox move?",
        "category": "single",
        "answerable": True,
        "expected_behavior": "ANSWER",
        "expected_doc_ids": ["paperA"],
        "expected_pages": [{"doc_id": "paperA", "page": 1}],
        "required_evidence_spans": ["the quick brown fox jumps over"],
        "reference_answer": "REFERENCE: it jumps over the dog.",
        "acceptable_answer_criteria": "CRITERIA: must say it jumps.",
    },
    {
        "question_id": "Q2",
        "question": "Who won the World Cup?",
        "category": "oos",
        "answerable": False,
        "expected_behavior": "REFUSE_OUT_OF_SCOPE",
        "required_evidence_spans": [],
    },
]


@pytest.fixture
def paper(collection):
    document = make_document(collection=collection, original_name="paperA.pdf", title="Fox paper")
    make_chunk(document=document, text="We saw that the quick brown fox jumps over the lazy dog.")
    return document


@pytest.fixture
def bset(collection, alice, paper):
    bset, _ = sb.benchmark_import(collection=collection, user=alice, name="dev", text=json.dumps(QUESTIONS))
    return bset


def _runs(bset, configs=("agentic_rerank",), label="l1") -> list[Run]:
    """Finished benchmark runs made by hand (no agent loop): each config answers Q1 with a citation."""
    runs = []
    chunk = bset.collection.documents.get(original_name="paperA.pdf").chunks.get()
    for config in configs:
        brun = BenchmarkRun.objects.create(benchmark_set=bset, config_name=config, split="test", label=label)
        for q in bset.questions.all():
            answered = q.expected_behavior == "ANSWER"
            run = Run.objects.create(
                collection=bset.collection, question=q.question, config_name=config, status=Run.Status.DONE,
                outcome="ANSWER" if answered else "REFUSAL",
                answer="The fox jumps over the dog [1]." if answered else "Nothing in the papers says.",
                latency_ms=120, benchmark_run=brun, benchmark_question=q, context_chunk_ids=[chunk.pk],
            )
            if answered:
                Citation.objects.create(run=run, marker=1, chunk=chunk, document_title="Fox paper", page=1,
                                        chunk_text=chunk.text, quote="the quick brown fox", verified=True)
            runs.append(run)
    return runs


def _reviewer(collection, user):
    ks.membership_set(collection=collection, user=user, role=Role.REVIEWER)
    return user


# ---------------------------------------------------------------------------
# Review queue
# ---------------------------------------------------------------------------


def test_it_shows_a_reviewer_the_answer_with_reference_and_criteria(client, collection, bset, bob):
    _reviewer(collection, bob)
    _runs(bset)
    client.force_login(bob)
    # not blind: oldest first, so the answerable Q1 comes first
    response = client.get(reverse("agent:review_queue", args=[collection.slug]) + "?blind=0")
    assert response.status_code == 200
    body = response.content.decode()
    assert "2 awaiting your review" in body
    assert "How does the fox move?" in body and "The fox jumps over the dog [1]." in body
    assert "REFERENCE: it jumps over the dog." in body and "CRITERIA: must say it jumps." in body
    assert "quick brown fox" in body  # the cited passage


def test_it_hides_the_configuration_in_blind_mode(client, collection, bset, bob):
    _reviewer(collection, bob)
    _runs(bset)
    client.force_login(bob)
    url = reverse("agent:review_queue", args=[collection.slug])
    assert "agentic_rerank" not in client.get(url).content.decode()
    assert "agentic_rerank" in client.get(url + "?blind=0").content.decode()


def test_it_refuses_the_queue_to_a_viewer_and_hides_it_from_an_outsider(client, collection, bset, bob, charlie):
    run = _runs(bset)[0]
    url = reverse("agent:review_queue", args=[collection.slug])
    submit = reverse("agent:review_submit", args=[collection.slug, run.pk])
    client.force_login(bob)  # a viewer
    assert client.get(url).status_code == 403
    assert client.post(submit, {"grade": "correct"}).status_code == 403
    client.force_login(charlie)
    assert client.get(url).status_code == 404
    assert client.post(submit, {"grade": "correct"}).status_code == 404
    assert not Review.objects.exists()


def test_it_saves_a_review_and_moves_to_the_next_run(client, collection, bset, bob):
    _reviewer(collection, bob)
    runs = _runs(bset)
    client.force_login(bob)
    first = review_services.review_queue(user=bob, collection=collection)[0]
    response = client.post(
        reverse("agent:review_submit", args=[collection.slug, first.pk]),
        {"grade": "partial", "citations_support": "yes", "refusal_appropriate": "", "note": " close "},
    )
    assert response.status_code == 302
    review = Review.objects.get()
    assert (review.run, review.reviewer, review.grade) == (first, bob, "partial")
    assert (review.citations_support, review.refusal_appropriate, review.note) == (True, None, "close")
    assert review_services.review_queue(user=bob, collection=collection) == [r for r in runs if r != first]
    # grading again corrects the review instead of adding a second one
    client.post(reverse("agent:review_submit", args=[collection.slug, first.pk]), {"grade": "correct"})
    assert Review.objects.get().grade == "correct"


def test_it_refuses_an_unknown_grade(client, collection, bset, bob):
    _reviewer(collection, bob)
    run = _runs(bset)[0]
    client.force_login(bob)
    client.post(reverse("agent:review_submit", args=[collection.slug, run.pk]), {"grade": "great"})
    assert not Review.objects.exists()


def test_it_queues_benchmark_runs_before_sampled_live_runs(collection, bset, alice, bob, charlie):
    live = [
        Run.objects.create(collection=collection, user=alice, question=f"live {i}", config_name="agentic",
                           status=Run.Status.DONE, outcome="ANSWER", answer="x")
        for i in range(30)
    ]
    bench = _runs(bset, configs=("agentic", "hybrid", "bm25"))
    ks.membership_set(collection=collection, user=charlie, role=Role.EDITOR)
    _reviewer(collection, bob)
    queue_bob = review_services.review_queue(user=bob, collection=collection)
    queue_charlie = review_services.review_queue(user=charlie, collection=collection)
    assert set(queue_bob[: len(bench)]) == set(bench)
    sampled = queue_bob[len(bench):]
    # a deterministic sample of about a fifth of live runs, the same for every reviewer
    assert 0 < len(sampled) < len(live) and set(sampled) <= set(live)
    assert set(queue_charlie) == set(queue_bob)
    # shuffled per reviewer, stable for one reviewer
    assert queue_bob != queue_charlie
    assert review_services.review_queue(user=bob, collection=collection) == queue_bob
    assert review_services.review_queue(user=bob, collection=collection, blind=False)[: len(bench)] == sorted(
        bench, key=lambda r: r.pk
    )


def test_it_gives_an_outsider_an_empty_queue(collection, bset, charlie):
    _runs(bset)
    assert review_services.review_queue(user=charlie, collection=collection) == []


# ---------------------------------------------------------------------------
# Benchmark pages
# ---------------------------------------------------------------------------


def test_it_imports_a_set_through_the_page(client, collection, alice, paper):
    client.force_login(alice)
    upload = SimpleUploadedFile("devbench.json", json.dumps(QUESTIONS).encode(), "application/json")
    response = client.post(reverse("agent:benchmark_import", args=[collection.slug]), {"file": upload})
    bset = BenchmarkSet.objects.get(collection=collection)
    assert response.status_code == 302 and bset.name == "devbench"
    assert bset.questions.count() == 2


def test_it_refuses_a_malformed_file_with_its_line_and_imports_nothing(client, collection, alice, paper):
    client.force_login(alice)
    text = json.dumps(QUESTIONS, indent=2).replace('"ANSWER"', '"MAYBE"')
    upload = SimpleUploadedFile("bad.json", text.encode(), "application/json")
    response = client.post(reverse("agent:benchmark_import", args=[collection.slug]), {"file": upload}, follow=True)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "MAYBE" in row)
    assert f"line {line}:" in response.content.decode()
    assert not BenchmarkSet.objects.exists()


def test_it_refuses_unknown_documents_unless_allowed(collection, alice):
    with pytest.raises(Exception, match="paperA"):
        sb.benchmark_import(collection=collection, user=alice, name="dev", text=json.dumps(QUESTIONS))
    assert not BenchmarkSet.objects.exists()
    bset, warnings = sb.benchmark_import(
        collection=collection, user=alice, name="dev", text=json.dumps(QUESTIONS), allow_unknown_documents=True
    )
    assert bset.questions.count() == 2 and "paperA" in warnings[0]


def test_it_lets_only_editors_import(client, collection, bob, charlie, paper):
    upload = SimpleUploadedFile("x.json", json.dumps(QUESTIONS).encode(), "application/json")
    client.force_login(bob)
    assert client.post(reverse("agent:benchmark_import", args=[collection.slug]), {"file": upload}).status_code == 403
    client.force_login(charlie)
    assert client.get(reverse("agent:benchmark_list", args=[collection.slug])).status_code == 404
    assert not BenchmarkSet.objects.exists()


def test_it_reports_with_pending_accuracy_charts_and_exports(client, collection, bset, bob, charlie):
    _runs(bset, configs=("agentic", "bm25"))
    client.force_login(bob)  # any member reads reports
    url = reverse("agent:benchmark_report", args=[collection.slug, bset.pk, "l1"])
    body = client.get(url).content.decode()
    assert "pending (2 ungraded)" in body
    assert body.count("<svg") == 2 and "<title" in body
    assert "4 of 4 runs finished" in body

    csv_response = client.get(reverse("agent:benchmark_export", args=[collection.slug, bset.pk, "l1", "csv"]))
    rows = list(csv.reader(io.StringIO(csv_response.content.decode())))
    assert rows[0][:2] == ["config_name", "category"]
    overall = {r[0]: r for r in rows[1:] if r[1] == ""}
    assert set(overall) == {"agentic", "bm25"}
    assert overall["agentic"][rows[0].index("citation_precision")] == "1.0"
    data = json.loads(client.get(reverse("agent:benchmark_export", args=[collection.slug, bset.pk, "l1", "json"])).content)
    assert data["configs"] == ["agentic", "bm25"] and data["rows"][0]["accuracy"] is None

    client.force_login(charlie)
    assert client.get(url).status_code == 404
    assert client.get(reverse("agent:benchmark_export", args=[collection.slug, bset.pk, "l1", "csv"])).status_code == 404


def test_it_compares_configurations_across_benchmark_runs(client, collection, bset, alice):
    _runs(bset, configs=("agentic",), label="before")
    _runs(bset, configs=("agentic", "hybrid"), label="after")
    client.force_login(alice)
    url = reverse("agent:benchmark_compare", args=[collection.slug, bset.pk]) + "?label=before&label=after"
    body = client.get(url).content.decode()
    assert "agentic (before)" in body and "agentic (after)" in body and "hybrid" in body


def test_it_shows_human_accuracy_once_graded(client, collection, bset, alice, bob):
    _reviewer(collection, bob)
    runs = _runs(bset)
    review_services.review_create(run=runs[0], reviewer=bob, grade="partial")
    review_services.review_create(run=runs[1], reviewer=bob, grade="correct")
    report = sb.benchmark_report(brs=BenchmarkRun.objects.filter(label="l1"))
    assert report.overall["agentic_rerank"].accuracy == 0.75
    client.force_login(alice)
    body = client.get(reverse("agent:benchmark_report", args=[collection.slug, bset.pk, "l1"])).content.decode()
    assert "75% (2 graded)" in body


def test_it_reads_retrieved_chunks_from_the_loops_retrieve_steps(collection, bset):
    from agent.steps import RetrieveStep, SourceBrief
    from tests.factories import make_step

    runs = _runs(bset)
    answered = next(r for r in runs if r.outcome == "ANSWER")
    chunk_id = answered.context_chunk_ids[0]
    Run.objects.filter(pk=answered.pk).update(context_chunk_ids=[])
    report = sb.benchmark_report(brs=BenchmarkRun.objects.filter(label="l1"))
    assert report.overall["agentic_rerank"].evidence_recall == 0.0
    make_step(run=answered, step=RetrieveStep(queries=["fox"], k=5, per_query={"fox": [SourceBrief(chunk_id=chunk_id)]}))
    report = sb.benchmark_report(brs=BenchmarkRun.objects.filter(label="l1"))
    assert report.overall["agentic_rerank"].evidence_recall == 1.0


def test_it_starts_a_run_per_question_and_configuration(client, collection, bset, alice, bob):
    url = reverse("agent:benchmark_start", args=[collection.slug, bset.pk])
    client.force_login(bob)  # a viewer cannot start one
    assert client.post(url, {"configs": ["agentic", "bm25"], "split": "test"}).status_code == 403
    client.force_login(alice)
    response = client.post(url, {"configs": ["agentic", "bm25"], "split": "test", "label": "First try"})
    assert response.status_code == 302 and response["Location"].endswith("/runs/first-try/")
    runs = Run.objects.filter(benchmark_run__label="first-try")
    assert sorted((r.config_name, r.benchmark_question.question_id) for r in runs) == [
        ("agentic", "Q1"), ("agentic", "Q2"), ("bm25", "Q1"), ("bm25", "Q2"),
    ]
    assert {r.status for r in runs} == {Run.Status.QUEUED}
    progress = client.get(reverse("agent:benchmark_progress", args=[collection.slug, bset.pk, "first-try"])).json()
    assert progress == {"done": 0, "total": 4, "percent": 0, "finished": False}
    page = client.get(response["Location"]).content.decode()
    assert "0 of 4 runs finished" in page and 'http-equiv="refresh"' in page


def test_it_refuses_an_unknown_configuration_or_split(client, collection, bset, alice):
    client.force_login(alice)
    url = reverse("agent:benchmark_start", args=[collection.slug, bset.pk])
    page = client.post(url, {"configs": ["gpt-magic"], "split": "test"}, follow=True).content.decode()
    assert "Unknown configuration(s): gpt-magic" in page
    page = client.post(url, {"configs": ["agentic"], "split": "dev"}, follow=True).content.decode()
    assert "no questions in split" in page
    assert not Run.objects.exists()


def test_it_prints_the_report_of_an_earlier_run_with_charts(collection, bset, tmp_path):
    from django.core.management import CommandError, call_command

    _runs(bset, configs=("agentic", "bm25"))
    out = io.StringIO()
    call_command("benchmark", set_name="dev", report="l1", charts=str(tmp_path), stdout=out)
    lines = out.getvalue().splitlines()
    agentic = next(line for line in lines if line.startswith("| agentic |"))
    # 2 runs, ungraded; Q1 answered with its span cited (proxy 1), Q2 refused (proxy 1)
    assert agentic.startswith("| agentic | 2 | pending (2) | 100% | 50% | 0% | 50% | 0% | 0% |")
    assert (tmp_path / "rates.svg").exists() and (tmp_path / "latency.svg").exists()
    with pytest.raises(CommandError, match="no benchmark run labelled"):
        call_command("benchmark", set_name="dev", report="nope")


@pytest.mark.parametrize("category", ["=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)"])
def test_the_csv_export_defuses_cells_that_a_spreadsheet_would_run(client, collection, alice, paper, category):
    hostile = [{**QUESTIONS[0], "category": category}]
    bset, _ = sb.benchmark_import(collection=collection, user=alice, name="hostile", text=json.dumps(hostile))
    _runs(bset, configs=("agentic",))
    client.force_login(alice)
    response = client.get(reverse("agent:benchmark_export", args=[collection.slug, bset.pk, "l1", "csv"]))
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    cells = [row[1] for row in rows[1:] if row[1]]
    assert cells, rows
    # OWASP: a leading quote makes the spreadsheet show the text instead of evaluating it.
    assert all(cell == "'" + category for cell in cells), cells
    # Numbers stay numbers, negative ones included.
    assert all(not c.startswith("'") for row in rows[1:] for c in row[2:])


def test_the_start_form_defaults_to_agentic_against_hybrid_and_shows_the_run_count(client, collection, bset, alice):
    client.force_login(alice)
    body = client.get(reverse("agent:benchmark_set", args=[collection.slug, bset.pk])).content.decode()
    checked = re.findall(r'<input type="checkbox" name="configs" value="([^"]+)" checked', body)
    assert checked == ["hybrid", "agentic"] or sorted(checked) == ["agentic", "hybrid"]
    questions = bset.questions.filter(split="test").count()
    assert f"{questions * 2} runs" in body
    assert f"{questions} questions \u00d7 2 configurations" in body
