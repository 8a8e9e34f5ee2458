"""`manage.py ingest`, `reingest` and the demo corpus of `demo_setup`."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from knowledge.models import Chunk, Collection, Document, IngestJob

pytestmark = pytest.mark.django_db


def _corpus(tmp_path):
    folder = tmp_path / "corpus"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("# Alpha\n\nAlpha text about retrieval.\n")
    (folder / "sub" / "b.txt").write_text("Beta plain text.")
    (folder / "bad.pdf").write_bytes(b"%PDF-1.4 broken")
    (folder / "ignored.png").write_bytes(b"\x89PNG")
    return folder


def test_it_ingests_a_folder_and_prints_a_json_summary(tmp_path, alice):
    folder = _corpus(tmp_path)
    out = StringIO()
    call_command("ingest", str(folder), "--collection", "papers", "--create", "--owner", "alice",
                 "--inline", "--json", stdout=out)
    summary = json.loads(out.getvalue())
    assert sorted(i["file"] for i in summary["ready"]) == ["a.md", "b.txt"]
    assert [i["file"] for i in summary["failed"]] == ["bad.pdf"] and "damaged" in summary["failed"][0]["reason"]
    assert Collection.objects.get(slug="papers").documents.count() == 3

    out = StringIO()
    call_command("ingest", str(folder / "a.md"), "--collection", "papers", "--inline", stdout=out)
    assert "0 ready, 0 failed, 1 duplicate" in out.getvalue()


def test_it_needs_an_existing_collection_or_create(tmp_path, alice):
    with pytest.raises(CommandError, match="--create"):
        call_command("ingest", str(_corpus(tmp_path)), "--collection", "nope")


def test_reingest_reruns_every_document(tmp_path, alice):
    folder = _corpus(tmp_path)
    call_command("ingest", str(folder / "a.md"), str(folder / "sub"), "--collection", "papers", "--create",
                 "--owner", "alice", "--inline", stdout=StringIO())
    out = StringIO()
    call_command("reingest", "--collection", "papers", "--inline", stdout=out)
    assert "2 re-ingested, 0 failed" in out.getvalue()
    assert IngestJob.objects.filter(status=IngestJob.Status.DONE).count() == 4
    assert Chunk.objects.count() == 2


def test_demo_setup_loads_the_project_docs(settings, tmp_path):
    import shutil

    # The real demo pages, without the rest of docs/ (which grows) to keep the test fast.
    (tmp_path / "project" / "docs").mkdir(parents=True)
    for name in ("user-guide.md", "architecture.md", "faq.md"):
        shutil.copy(settings.BASE_DIR / "docs" / name, tmp_path / "project" / "docs" / name)
    settings.BASE_DIR = tmp_path / "project"
    out = StringIO()
    call_command("demo_setup", stdout=out)
    demo = Collection.objects.get(slug="demo")
    names = set(demo.documents.values_list("original_name", flat=True))
    assert {"user-guide.md", "architecture.md", "faq.md"} <= names
    assert set(demo.documents.values_list("status", flat=True)) == {Document.Status.READY}
    call_command("demo_setup", stdout=out)
    assert "already there" in out.getvalue()
