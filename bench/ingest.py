"""Ingestion benchmark: the real pipeline (knowledge.ingest.job_run) on ../shared/data/papers.

    .venv/bin/python bench/ingest.py --size small   # CI: one 7-page paper
    .venv/bin/python bench/ingest.py                # full: largest paper, a 100-page PDF, all 25
    .venv/bin/python bench/ingest.py --size papers  # only the 25 papers into one collection

Uses a private SQLite database and media folder under a temporary directory, the local
embedding model, and runs jobs in-process (the same code the Celery task calls).

Reported, per case: pages/s and wall time split into extract / chunk / embed / write / index;
the pipeline's embedding throughput against the bare model on the very same chunk texts
(bare runs before and after the pipeline, averaged, to damp machine noise); the share of
wall time that is not embedding; and a second ingest of the same file into another
collection (everything from the caches).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from _shared_data import SHARED, missing

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PAPERS = SHARED / "papers"


def _setup_django(tmp: Path) -> None:
    os.environ["PORTAL_DEBUG"] = "1"
    os.environ["PORTAL_VAR_DIR"] = str(tmp)
    os.environ["PORTAL_DATABASE_URL"] = f"sqlite:///{tmp / 'bench.sqlite3'}"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["DJANGO_SETTINGS_MODULE"] = "portal.settings"
    import django
    from django.core.management import call_command

    django.setup()
    import logging

    logging.getLogger("knowledge.indexing").setLevel(logging.WARNING)
    call_command("migrate", verbosity=0)


def _hundred_pages(tmp: Path) -> Path:
    """A 100-page PDF made of real papers' pages (largest first), for the 60 s goal."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for path in sorted(PAPERS.glob("*.pdf"), key=lambda p: -p.stat().st_size):
        for page in PdfReader(path).pages:
            if len(writer.pages) == 100:
                break
            writer.add_page(page)
    out = tmp / "hundred_pages.pdf"
    with out.open("wb") as f:
        writer.write(f)
    return out


def _ingest(path: Path, collection, user) -> dict:
    from django.core.files import File

    from knowledge import services
    from knowledge.ingest import Timings, job_run

    t0 = time.perf_counter()
    with path.open("rb") as handle:
        document, _ = services.document_upload(collection=collection, user=user, uploaded_file=File(handle, name=path.name))
    upload = time.perf_counter() - t0
    timings = Timings()
    t1 = time.perf_counter()
    job = job_run(job_id=document.jobs.get().pk, timings=timings)
    wall = time.perf_counter() - t1 + upload
    document.refresh_from_db()
    assert job.status == "done", job.error
    return {
        "file": path.name, "pages": document.pages, "chunks": job.chunks_total, "wall_s": wall,
        "upload_s": upload, "extract_s": timings.extract, "chunk_s": timings.chunk, "embed_s": timings.embed,
        "write_s": timings.write, "index_s": timings.index, "embed_cpu_s": timings.embed_cpu,
        "boxes_s": timings.extra.get("boxes", 0.0), "document": document,
    }


def _bare(texts: list[str]) -> tuple[float, float]:
    from django.conf import settings

    from knowledge.embedding_cache import default_embedder

    # The very embedder object the pipeline uses (same session, same batch size), bare.
    embedder = default_embedder()
    t, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), settings.EMBEDDING_BATCH_SIZE):
        embedder.embed(texts[start : start + settings.EMBEDDING_BATCH_SIZE])
    return time.perf_counter() - t, time.process_time() - cpu


def _embed_ratio(texts: list[str], reps: int) -> dict:
    """The pipeline's embedding step (embed_with_cache, empty cache) against the bare model
    on the same texts, alternating which goes first; medians of `reps` rounds."""
    import statistics

    from django.conf import settings

    from knowledge.embedding_cache import default_embedder, embed_with_cache
    from knowledge.models import EmbeddingCache

    embedder = default_embedder()
    pipe: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []

    def pipeline() -> tuple[float, float]:
        EmbeddingCache.objects.all().delete()
        t, cpu = time.perf_counter(), time.process_time()
        embed_with_cache(texts, embedder=embedder, batch_size=settings.EMBEDDING_BATCH_SIZE)
        return time.perf_counter() - t, time.process_time() - cpu

    for rep in range(reps):
        if rep % 2:
            pipe.append(pipeline())
            bare.append(_bare(texts))
        else:
            bare.append(_bare(texts))
            pipe.append(pipeline())
    pipe_wall, pipe_cpu = statistics.median(p[0] for p in pipe), statistics.median(p[1] for p in pipe)
    bare_wall, bare_cpu = statistics.median(b[0] for b in bare), statistics.median(b[1] for b in bare)
    return {
        "ratio_rounds": reps, "bare_embed_s": bare_wall, "pipeline_embed_s": pipe_wall,
        "bare_chunks_per_s": len(texts) / bare_wall, "pipeline_chunks_per_s": len(texts) / pipe_wall,
        "embed_throughput_ratio": bare_wall / pipe_wall, "embed_cpu_ratio": bare_cpu / pipe_cpu,
    }


def run_case(path: Path, user, reps: int = 3) -> dict:
    from knowledge import services
    from knowledge.embedding_cache import default_embedder

    default_embedder().embed(["warm up the session"])
    first = services.collection_create(name=f"bench {path.stem}", user=user)
    # The chunk texts are only known after chunking: extract + chunk once outside the clock.
    from knowledge.chunking import chunk_pages
    from knowledge.extract import extract_pdf

    texts = [c.text for c in chunk_pages(extract_pdf(path).pages)]
    result = _ingest(path, first, user)
    second = services.collection_create(name=f"bench {path.stem} again", user=user)
    again = _ingest(path, second, user)
    non_embed = result["wall_s"] - result["embed_s"]
    result.pop("document")
    again.pop("document")
    return {
        **result,
        "pages_per_s": result["pages"] / result["wall_s"],
        "non_embed_share": non_embed / result["wall_s"],
        "second_ingest_s": again["wall_s"],
        **(_embed_ratio(texts, reps) if reps else {}),
    }


def _all_papers(user) -> dict:
    from knowledge import services

    collection = services.collection_create(name="bench all", user=user)
    totals = {"papers": 0, "pages": 0, "chunks": 0, "wall_s": 0.0, "extract_s": 0.0, "chunk_s": 0.0,
              "embed_s": 0.0, "write_s": 0.0, "index_s": 0.0, "upload_s": 0.0}
    for path in sorted(PAPERS.glob("*.pdf")):
        r = _ingest(path, collection, user)
        totals["papers"] += 1
        for key in ("pages", "chunks", "wall_s", "extract_s", "chunk_s", "embed_s", "write_s", "index_s", "upload_s"):
            totals[key] += r[key]
        print(f"  {path.name}: {r['pages']} pages, {r['chunks']} chunks, {r['wall_s']:.1f} s", flush=True)
    totals["pages_per_s"] = totals["pages"] / totals["wall_s"]
    totals["non_embed_share"] = (totals["wall_s"] - totals["embed_s"]) / totals["wall_s"]
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=("small", "full", "hundred", "papers"), default="full",
                        help="hundred: only the 100-page PDF case of the full size; papers: only the all-25 case")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not PAPERS.exists():
        sys.exit(missing(PAPERS))
    with tempfile.TemporaryDirectory(prefix="grounded-bench-ingest-") as tmp_name:
        tmp = Path(tmp_name)
        _setup_django(tmp)
        from django.conf import settings
        from django.contrib.auth import get_user_model

        settings.MEDIA_ROOT = tmp / "media"
        settings.INDEX_ROOT = tmp / "index"
        user = get_user_model().objects.create_user("bench")
        results: dict = {"size": args.size, "cpus": os.cpu_count()}
        if args.size == "small":
            results["small"] = run_case(PAPERS / "1904.08375v2_doc2query.pdf", user)
        elif args.size == "hundred":
            results["hundred_pages"] = run_case(_hundred_pages(tmp), user, reps=1)
        elif args.size == "papers":
            results["all_papers"] = _all_papers(user)
        else:
            largest = max(PAPERS.glob("*.pdf"), key=lambda p: len(__import__("pypdf").PdfReader(p).pages))
            results["largest"] = run_case(largest, user)
            print(json.dumps(results["largest"], default=str), flush=True)
            results["hundred_pages"] = run_case(_hundred_pages(tmp), user, reps=1)
            print(json.dumps(results["hundred_pages"], default=str), flush=True)
            results["all_papers"] = _all_papers(user)
        out = io.StringIO()
        json.dump(results, out, indent=2, default=str)
        print(out.getvalue())


if __name__ == "__main__":
    main()
