"""Incremental indexing benchmark: the index step of adding (or removing) one paper, incremental vs full.

    .venv/bin/python bench/index_incremental.py                 # 25 papers: add the 25th to 24
    .venv/bin/python bench/index_incremental.py --papers 3      # small
    .venv/bin/python bench/index_incremental.py --keep /tmp/x   # keep the database (and its
                                                                # embedding cache) for a re-run

The papers of ../shared/data/papers are ingested once with the real pipeline
(knowledge.ingest.job_run, local embedding model), so every vector is in the embedding
cache, as it is after a real upload's embedding step. Then, `--reps` times, in alternating
order, from the same starting version (the collection without the last paper, made in full
and not timed): `index_rebuild(publish=(paper,))` incremental vs `full=True`; and the
removal of one paper (its document set FAILED, so it leaves the index) the same two ways.
Medians and their ratio; the load (`/proc/loadavg`) is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ingest as ingest_bench  # bench/ingest.py: Django setup and the real ingest


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _collection(n: int):
    """The bench collection with its first n papers ingested (reused from a kept database)."""
    from django.contrib.auth import get_user_model

    from knowledge import services
    from knowledge.models import Collection, Document

    user, _ = get_user_model().objects.get_or_create(username="bench")
    collection = Collection.objects.filter(name="bench incremental").first() or services.collection_create(
        name="bench incremental", user=user)
    have = set(Document.objects.filter(collection=collection, status=Document.Status.READY)
               .values_list("original_name", flat=True))
    embed_s = {}
    for path in sorted(ingest_bench.PAPERS.glob("*.pdf"))[:n]:
        if path.name not in have:
            r = ingest_bench._ingest(path, collection, user)
            embed_s[path.name] = r["embed_s"]
            print(f"  ingested {path.name}: {r['chunks']} chunks, embed {r['embed_s']:.1f} s", flush=True)
    return collection, embed_s


def measure(collection, reps: int) -> dict:
    from knowledge.indexing import index_rebuild
    from knowledge.models import Chunk, Document

    docs = Document.objects.filter(collection=collection).order_by("original_name")
    paper = docs.last()
    status = Document.Status

    def without(state: str) -> None:
        Document.objects.filter(pk=paper.pk).update(status=state)
        index_rebuild(collection=collection, full=True)

    add = {"incremental": [], "full": []}
    remove = {"incremental": [], "full": []}
    for rep in range(reps):
        for how in (("incremental", "full") if rep % 2 == 0 else ("full", "incremental")):
            without(status.PROCESSING)
            add[how].append(_timed(lambda how=how: index_rebuild(collection=collection, publish=(paper.pk,),
                                                                  full=how == "full")))
        for how in (("incremental", "full") if rep % 2 == 0 else ("full", "incremental")):
            Document.objects.filter(pk=paper.pk).update(status=status.READY)
            index_rebuild(collection=collection, full=True)
            Document.objects.filter(pk=paper.pk).update(status=status.FAILED)
            remove[how].append(_timed(lambda how=how: index_rebuild(collection=collection, full=how == "full")))
    Document.objects.filter(pk=paper.pk).update(status=status.READY)
    index_rebuild(collection=collection, full=True)

    def summary(times: dict) -> dict:
        inc, full = statistics.median(times["incremental"]), statistics.median(times["full"])
        return {"incremental_s": inc, "full_s": full, "full_over_incremental": full / inc}

    return {
        "papers": docs.count(),
        "chunks": Chunk.objects.filter(document__collection=collection).count(),
        "paper": paper.original_name,
        "paper_chunks": paper.chunks.count(),
        "reps": reps,
        "add": summary(add),
        "remove": summary(remove),
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=25)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="a folder for the database, media and index, kept for re-runs")
    args = parser.parse_args()
    if not ingest_bench.PAPERS.exists():
        sys.exit(f"needs {ingest_bench.PAPERS}")
    with tempfile.TemporaryDirectory(prefix="grounded-bench-index-") as tmp_name:
        tmp = args.keep or Path(tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        ingest_bench._setup_django(tmp)
        from django.conf import settings

        settings.MEDIA_ROOT = tmp / "media"
        settings.INDEX_ROOT = tmp / "index"
        print(f"load before: {os.getloadavg()}", flush=True)
        collection, embed_s = _collection(args.papers)
        result = measure(collection, args.reps)
        result["paper_embed_s"] = embed_s.get(result["paper"])
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
