"""Bad input, generated here: each file is refused or fails cleanly with its reason.

(The core corrupt-PDF corpus lives in tests/knowledge/test_services_ingest.py; this module
adds the extremes of issue #9: 10,000 pages, a huge single line of text, hostile file
names, bounded worker memory, and questions that are empty, huge or binary.)
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge import services
from knowledge.ingest import job_run
from knowledge.models import Chunk, Document, IngestJob
from tests.conftest import ROOT
from tests.knowledge.test_services_ingest import PAGES, _bomb, _pdf

pytestmark = pytest.mark.django_db


class HashEmbedder:
    """A cheap deterministic embedder at the Embedder interface: these tests are about
    parsing, chunking and limits, not about vector quality, and must not spend minutes
    embedding megabytes."""

    model_id = "test-hash-embedder"
    dim = 8

    def embed(self, texts):
        import hashlib

        seeds = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little") for t in texts]
        matrix = np.array([np.random.default_rng(s).standard_normal(self.dim) for s in seeds], dtype=np.float32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _upload(collection, user, name, data):
    return services.document_upload(collection=collection, user=user, uploaded_file=SimpleUploadedFile(name, data))


def _ingest(document, embedder=None) -> IngestJob:
    return job_run(job_id=document.jobs.latest("pk").pk, embedder=embedder)


@pytest.mark.parametrize(
    "raw, stored",
    [
        ("../../etc/passwd.pdf", "passwd.pdf"),
        ("C:\\Users\\me\\Papers\\bert.pdf", "bert.pdf"),
        ("evil\x00name\x1b[31m.pdf", "evilname[31m.pdf"),
        ("line\nbreak\r.pdf", "linebreak.pdf"),
        ("...", "upload"),
        ("...pdf", "...pdf"),
    ],
)
def test_hostile_file_names_are_stored_as_a_safe_name(collection, alice, settings, raw, stored):
    document, created = _upload(collection, alice, raw, _pdf(PAGES))
    assert created
    assert document.original_name == stored
    # The file itself lives under its sha256, never under the name it came with.
    assert document.file.endswith(document.sha256)
    assert (settings.MEDIA_ROOT / document.file).resolve().is_relative_to(settings.MEDIA_ROOT.resolve())


def test_a_pdf_of_ten_thousand_pages_is_refused_by_the_page_limit(collection, alice):
    document, _ = _upload(collection, alice, "monster.pdf", _pdf(["x"] * 10_000))
    job = _ingest(document)
    assert job.status == IngestJob.Status.FAILED
    assert "10000 pages; the limit is 2000" in job.error
    assert not Chunk.objects.filter(document=document).exists()


def test_a_huge_single_line_of_text_is_chunked_within_budget(collection, alice, monkeypatch):
    embedder = HashEmbedder()
    monkeypatch.setattr("knowledge.embedding_cache.default_embedder", lambda: embedder)  # the index uses it too
    line = " ".join(f"token{i % 5000} retrieval evidence" for i in range(40_000))  # ~1 MB, no newline, no period
    document, _ = _upload(collection, alice, "one-line.txt", line.encode())
    job = _ingest(document, embedder=embedder)
    assert job.status == IngestJob.Status.DONE, job.error
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    budgets = document.chunking
    counts = list(Chunk.objects.filter(document=document).values_list("token_count", flat=True))
    assert len(counts) > 100
    assert max(counts) <= budgets.get("max_tokens", 256)


def test_a_text_file_with_nul_bytes_is_refused_as_binary(collection, alice):
    with pytest.raises(ValidationError) as caught:
        _upload(collection, alice, "notes.txt", b"plain words\x00\x00\x01\x02 more words" * 100)
    assert caught.value.code == "unsupported_type"


def test_a_decompression_bomb_keeps_the_workers_memory_bounded(tmp_path):
    """Extraction of a 200 MB-when-inflated page, in a fresh process, stays far below that."""
    bomb = tmp_path / "bomb.pdf"
    bomb.write_bytes(_bomb())
    # VmHWM is the peak RSS of this process image; unlike ru_maxrss it is not inherited
    # from the (large) pytest process across fork and exec.
    script = (
        "import json, re, sys\n"
        "from knowledge.extract import ExtractError, extract_pdf\n"
        "try:\n"
        "    extract_pdf(sys.argv[1])\n"
        "    outcome = 'extracted'\n"
        "except ExtractError as exc:\n"
        "    outcome = exc.code\n"
        "peak = re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
        "print(json.dumps({'outcome': outcome, 'max_rss_mb': int(peak) / 1024}))\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(bomb)], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["outcome"] == "bomb"
    assert report["max_rss_mb"] < 150, report  # 100 MB of "0 " inflated would not fit


def test_workers_recycle_their_processes_before_memory_grows_unbounded(settings):
    assert 0 < settings.CELERY_WORKER_MAX_MEMORY_PER_CHILD <= 2_000_000


@pytest.mark.parametrize(
    "question, message",
    [
        ("", "Type a question first"),
        ("   \n\t ", "Type a question first"),
        ("x" * 100_000, "the limit is"),
        ("what is \x00\x01\x02 BM25?", "control"),
        (bytes(range(256)).decode("latin-1"), "control"),
    ],
    ids=["empty", "blank", "100KB", "nul-bytes", "binary"],
)
def test_bad_questions_get_a_clear_validation_error(collection, alice, question, message):
    from agent.models import Run
    from agent.services import run_create

    with pytest.raises(ValidationError) as caught:
        run_create(collection=collection, user=alice, question=question, config_name="agentic")
    assert message in " ".join(caught.value.messages)
    assert not Run.objects.exists()
