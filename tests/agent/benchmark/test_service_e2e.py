"""End to end: real papers ingested, a devbench slice imported, every configuration answered
in-process with the local backend, and a report with every configuration.

Four questions of four categories over only two papers keep it to about a minute:
D03 exact_numerical, D04 out_of_scope, D05 false_premise, D09 multi_hop.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from tests.conftest import paper, shared_path

# 32 runs answered one after the other: about a minute on an idle machine, more on a busy one.
pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.shared, pytest.mark.timeout(600)]

SLICE = ("D03", "D04", "D05", "D09")
PAPERS = ("1706.03762v5_attention_is_all_you_need", "1904.08375v2_doc2query")


def _ingest(collection, user, stem: str) -> None:
    from knowledge import services
    from knowledge.ingest import job_run
    from knowledge.models import Document

    document, _ = services.document_upload(
        collection=collection, user=user, uploaded_file=SimpleUploadedFile(f"{stem}.pdf", paper(stem).read_bytes())
    )
    job_run(job_id=document.jobs.latest("created_at").pk)
    document.refresh_from_db()
    assert document.status == Document.Status.READY, document.error


def test_it_benchmarks_every_configuration_on_a_devbench_slice(client, collection, alice, tmp_path):
    from agent.benchmark import service as sb
    from agent.configs import CONFIG_NAMES
    from agent.models import BenchmarkRun, Run

    questions = json.loads(shared_path("devbench", "questions.json").read_text())
    chosen = [q for q in questions if q["question_id"] in SLICE]
    assert len({q["category"] for q in chosen}) == 4
    for stem in PAPERS:
        _ingest(collection, alice, stem)
    slice_file = tmp_path / "slice.json"
    slice_file.write_text(json.dumps(chosen))
    call_command("import_benchmark", str(slice_file), collection=collection.slug, name="devbench-slice")

    out = io.StringIO()
    call_command("benchmark", set_name="devbench-slice", in_process=True, charts=str(tmp_path / "charts"), stdout=out)
    configs = CONFIG_NAMES
    assert len(configs) == 8
    brs = list(BenchmarkRun.objects.all())
    assert sorted(br.config_name for br in brs) == sorted(configs)
    runs = Run.objects.filter(benchmark_run__in=brs)
    assert runs.count() == 4 * 8
    assert not runs.exclude(status=Run.Status.DONE).exists(), list(runs.exclude(status=Run.Status.DONE).values("config_name", "error"))

    report = sb.benchmark_report(brs=brs)
    assert sorted(report.configs) == sorted(configs)
    for config in configs:
        m = report.overall[config]
        assert m.runs == 4 and m.failed == 0
        assert m.latency_p50_ms is not None and m.accuracy is None and m.proxy_accuracy is not None
        assert m.out_of_scope_runs == 1 and m.false_premise_runs == 1 and m.answerable_runs == 2
    # Retrieval over the right two papers finds at least some required evidence.
    assert max(report.overall[c].evidence_recall for c in configs) > 0
    text = out.getvalue()
    assert "runs (100%)" in text and all(f"| {c} |" in text for c in configs)
    assert (tmp_path / "charts" / "rates.svg").read_text().count("<rect") > 8

    client.force_login(alice)
    label = brs[0].label
    page = client.get(reverse("agent:benchmark_report", args=[collection.slug, brs[0].benchmark_set_id, label]))
    assert page.status_code == 200
    assert all(c in page.content.decode() for c in configs)


FOX_NOTES = (
    "# Field notes\n\n"
    "The quick brown fox jumps over the lazy dog every morning near the river.\n\n"
    "Foxes in this valley hunt voles at dusk and rest in dens during the day.\n"
)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_it_queues_benchmark_runs_for_a_real_worker_and_waits_with_a_progress_bar(
    collection, alice, celery_worker_process, tmp_path
):
    """The default path: Runs on the `answer` queue, answered by a worker process, followed by --wait."""
    from agent.models import Run
    from knowledge import services
    from knowledge.ingest import job_run

    document, _ = services.document_upload(
        collection=collection, user=alice, uploaded_file=SimpleUploadedFile("fox-notes.md", FOX_NOTES.encode())
    )
    job_run(job_id=document.jobs.latest("created_at").pk)
    questions = [
        {"question_id": "F1", "question": "What does the quick brown fox jump over?", "category": "single",
         "expected_behavior": "ANSWER", "expected_doc_ids": ["fox-notes"],
         "required_evidence_spans": ["The quick brown fox jumps over the lazy dog"]},
        {"question_id": "F2", "question": "Who won the 2018 World Cup?", "category": "oos",
         "expected_behavior": "REFUSE_OUT_OF_SCOPE"},
    ]
    path = tmp_path / "fox.json"
    path.write_text(json.dumps(questions))
    call_command("import_benchmark", str(path), collection=collection.slug, name="fox")
    out = io.StringIO()
    call_command("benchmark", set_name="fox", configs="bm25,agentic", wait=True, timeout=240, stdout=out)
    text = out.getvalue()
    assert "4/4 runs (100%)" in text and "| bm25 |" in text and "| agentic |" in text
    assert Run.objects.filter(benchmark_run__isnull=False, status=Run.Status.DONE).count() == 4
