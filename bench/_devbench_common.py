"""What bench/devbench.py and bench/benchmark_devbench.py share: a private Django in its own
var dir, the devbench papers ingested into one collection, and the questions imported as
a benchmark set. The metrics themselves are agent.benchmark's, never defined here.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

from _shared_data import SHARED, require

ROOT = Path(__file__).resolve().parent.parent


def django_setup(var_dir: Path, *, fresh: bool = False) -> None:
    """Django on its own SQLite database and files under var_dir, with the local LLM backend.

    fresh=True deletes var_dir first; otherwise an earlier database, index and embedding
    cache are reused. PORTAL_DATABASE_URL is ignored, so a benchmark never writes into
    the portal's own data.
    """
    if fresh and var_dir.exists():
        shutil.rmtree(var_dir)
    var_dir.mkdir(parents=True, exist_ok=True)
    os.environ["PORTAL_VAR_DIR"] = str(var_dir)
    os.environ.pop("PORTAL_DATABASE_URL", None)
    os.environ["PORTAL_LLM_BACKEND"] = "local"
    os.environ.setdefault("PORTAL_DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def load_questions() -> list[dict]:
    return json.loads(require(SHARED / "devbench" / "questions.json").read_text(encoding="utf-8"))


def paper_stems() -> list[str]:
    """Every paper, including the distractor that no question expects."""
    return sorted(p.stem for p in require(SHARED / "papers").glob("*.pdf"))


def collection_with_papers(stems: list[str], *, slug: str = "devbench"):
    """The user "bench" and its collection `slug`, holding the given papers.

    Papers already ingested (ready) are kept; the others are uploaded and ingested here,
    through the portal's own pipeline (document_upload, then the ingest job in-process).
    """
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile

    from knowledge import services
    from knowledge.ingest import job_run
    from knowledge.models import Collection

    users = get_user_model().objects
    user = users.filter(username="bench").first() or users.create_user("bench", password="bench-bench-bench")
    collection = Collection.objects.filter(slug=slug).first() or services.collection_create(name=slug, user=user)
    ready = set(collection.documents.filter(status="ready").values_list("original_name", flat=True))
    todo = [s for s in stems if f"{s}.pdf" not in ready]
    started = time.perf_counter()
    for stem in todo:
        data = (SHARED / "papers" / f"{stem}.pdf").read_bytes()
        document, _ = services.document_upload(
            collection=collection, user=user, uploaded_file=SimpleUploadedFile(f"{stem}.pdf", data)
        )
        job = job_run(job_id=document.jobs.latest("created_at").pk)
        print(f"ingested {stem}: {job.status if job else '?'} {job.error if job else ''}", file=sys.stderr, flush=True)
    if todo:
        print(f"ingestion of {len(todo)} papers: {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        collection.refresh_from_db()
    return user, collection


def with_splits(questions: list[dict]) -> list[dict]:
    """The questions with the declared split of agent.local.calibration: "calibration" for
    the half the local roles' thresholds may be chosen on, "test" (held out) for the rest."""
    from agent.local.calibration import devbench_splits

    if all("split" in q for q in questions):
        return questions  # already split over the whole set: a subset keeps its splits
    splits = devbench_splits(q["question_id"] for q in questions)
    return [{**q, "split": splits[q["question_id"]]} for q in questions]


def benchmark_set(collection, user, questions: list[dict], *, name: str = "", declare_splits: bool = True):
    """The questions as a benchmark set of the collection, imported once and then reused.

    With declare_splits each question carries its calibration/held-out split, so
    `manage.py benchmark` (split "test" by default) runs and reports the held-out half.
    Without a name the set is named after a hash of its questions, so an edited
    questions.json becomes a new set instead of silently reusing the old rows.
    """
    from agent.benchmark import service as sb
    from agent.models import BenchmarkSet

    if declare_splits:
        questions = with_splits(questions)
    text = json.dumps(questions)
    name = name or f"devbench-{hashlib.sha256(text.encode()).hexdigest()[:10]}"
    existing = BenchmarkSet.objects.filter(collection=collection, name=name).first()
    if existing is not None:
        return existing
    bset, warnings = sb.benchmark_import(collection=collection, user=user, name=name, text=text)
    for warning in warnings:
        print(warning, file=sys.stderr)
    print(f"imported {bset.questions.count()} questions as benchmark set {name!r}", file=sys.stderr)
    return bset
