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

    .venv/bin/python bench/index_incremental.py --synthetic 100000   # segments, issue 16
    .venv/bin/python bench/index_incremental.py --bm25-split 100000  # BM25 search, 1 vs 2 segments

`--synthetic N`: a collection of N chunks (documents of 50 chunks, synthetic Zipf words,
rows in the database, index written directly as one segment: random unit vectors, no
sentence vectors), then `--reps` times: one new 50-chunk document, its embedding step
(chunk and sentence vectors into the cache, local model, cold) and then its index step
(`index_rebuild(publish=...)`: one new segment plus a delete mask) timed apart; the removal
of one document; BM25/hybrid search latency on the segmented version, the background merge
(`index_merge`), the same searches on the merged version and whether their results are equal.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

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
    from knowledge.indexing.build import index_rebuild
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


WORDS = 50_000
DIM = 384


def _zipf_words(rng, n_chunks: int) -> list[str]:
    weights = 1.0 / np.arange(1, WORDS + 1) ** 1.07
    cdf = np.cumsum(weights / weights.sum())
    lengths = rng.integers(40, 121, size=n_chunks)
    flat = np.minimum(np.searchsorted(cdf, rng.random(int(lengths.sum()))), WORDS - 1)
    return [" ".join(f"w{t}" for t in part) for part in np.split(flat, np.cumsum(lengths)[:-1])]


def _text(rng) -> str:
    """A 50-chunk document's chunk: five sentences of synthetic words."""
    return " ".join(f"The w{a} model improves w{b} by {c} points on w{d}." for a, b, c, d in
                    rng.integers(1, 5000, size=(5, 4)).tolist())


def _synthetic_collection(n: int, rng):
    """A collection of n chunks in documents of 50, its index version 1 written directly."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from knowledge import services
    from knowledge.embedding_cache import default_embedder
    from knowledge.indexing import merge, versions
    from knowledge.indexing import rows as index_rows
    from knowledge.models import Chunk, Collection, Document
    from knowledge.retrieval.bm25 import BM25Index
    from knowledge.retrieval.dense import l2_normalize
    from knowledge.retrieval.segments import segment_dir, write_version
    from knowledge.retrieval.store import IndexData, write_index

    user, _ = get_user_model().objects.get_or_create(username="bench")
    kept = Collection.objects.filter(name=f"synthetic {n}", index_version__gt=0).first()
    if kept is not None:
        # A kept database (--keep): start again from one segment, its manifest stamped by
        # this checkout (builder, document signatures), as a full build would stamp it.
        merge.index_merge(collection=kept)
        kept.refresh_from_db()
        root = versions.collection_index_dir(kept.pk)
        manifest = json.loads((root / str(kept.index_version) / "manifest.json").read_text())
        deleted = np.load(root / str(kept.index_version) / "deleted.npy")
        meta = {**index_rows.index_meta(kept.pk, default_embedder()),
                "documents": index_rows.signatures(index_rows.included_documents(kept.pk, ()))}
        write_version(root / str(kept.index_version + 1), segments=manifest["segments"], deleted=deleted,
                      meta={**meta, "version": kept.index_version + 1})
        Collection.objects.filter(pk=kept.pk).update(index_version=kept.index_version + 1)
        kept.refresh_from_db()
        return kept
    collection = services.collection_create(name=f"synthetic {n}", user=user)
    t = time.perf_counter()
    docs = Document.objects.bulk_create([
        Document(collection=collection, title=f"Paper {i}", original_name=f"p{i}.txt", file=f"files/{i}",
                 sha256=f"{i:064d}", media_type="text/plain", status=Document.Status.READY, pages=1)
        for i in range(n // 50)], batch_size=1000)
    texts = _zipf_words(rng, n)
    # Plain executemany: Chunk objects through bulk_create took 4x as long at 100k.
    table = Chunk._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} (document_id, ordinal, text, section_title, page_start, page_end, char_start,"
            " char_end, token_count, is_reference, embedding_model, text_hash, boxes)"
            " VALUES (%s, %s, %s, 'Body', 1, 1, 0, %s, %s, 0, 'synthetic', %s, '[]')",
            [(docs[i // 50].pk, i % 50, text, len(text), text.count(" ") + 1, f"synthetic-{i}")
             for i, text in enumerate(texts)])
    print(f"  {n} chunk rows written in {time.perf_counter() - t:.1f} s", flush=True)
    t = time.perf_counter()
    chunks = index_rows.included_chunks(collection.pk, ())
    rows = list(chunks.values_list("id", "document_id"))

    vocab: dict[str, int] = {}
    term_ids = [np.fromiter((vocab.setdefault(w, len(vocab)) for w in text.split()), dtype=np.int64)
                for text in texts]
    del texts
    vectors = l2_normalize(rng.standard_normal((n, DIM), dtype=np.float32))
    data = IndexData(
        chunk_ids=np.array([r[0] for r in rows], dtype=np.int64),
        document_ids=np.array([r[1] for r in rows], dtype=np.int64),
        is_reference=np.zeros(n, dtype=bool),
        bm25=BM25Index.from_term_ids(term_ids, vocab),
        vectors=vectors,
        sent_vectors=np.zeros((0, DIM), dtype=np.float32),
        sent_offsets=np.zeros(n + 1, dtype=np.int64),
        meta={},
    )
    del term_ids, vectors
    meta = {**index_rows.index_meta(collection.pk, default_embedder()),
            "documents": index_rows.signatures(index_rows.included_documents(collection.pk, ()))}
    root = versions.collection_index_dir(collection.pk)
    write_index(data, segment_dir(root, "0-base"))
    write_version(root / "1", segments=["0-base"], deleted=np.zeros(n, dtype=bool), meta={**meta, "version": 1})
    Collection.objects.filter(pk=collection.pk).update(index_version=1)
    collection.refresh_from_db()
    print(f"  index version 1 ({n} chunks) written in {time.perf_counter() - t:.1f} s", flush=True)
    return collection


def _add_document(collection, rng, embedder) -> tuple[int, float]:
    """A new 50-chunk document, PROCESSING with its chunks written; (id, its embedding step in s)."""
    from knowledge.embedding_cache import cache_key, embed_with_cache
    from knowledge.models import Chunk, Document
    from knowledge.text import quotable, split_sentences

    texts = [_text(rng) for _ in range(50)]
    t = time.perf_counter()
    embed_with_cache(texts, embedder=embedder)
    embed_with_cache([q for text in texts for q in map(quotable, split_sentences(text)) if q], embedder=embedder)
    embed_s = time.perf_counter() - t
    # A fresh file hash: a kept database (--keep) holds the documents of earlier runs.
    doc = Document.objects.create(collection=collection, title=f"New {rng.integers(1 << 40)}", original_name="new.txt",
                                  file="files/new", sha256=secrets.token_hex(32), media_type="text/plain",
                                  status=Document.Status.PROCESSING, pages=1)
    Chunk.objects.bulk_create([
        Chunk(document=doc, ordinal=i, text=text, section_title="Body", page_start=1, page_end=1, char_start=0,
              char_end=len(text), token_count=len(text.split()), embedding_model=embedder.model_id,
              text_hash=cache_key(embedder.model_id, text))
        for i, text in enumerate(texts)])
    return doc.pk, embed_s


def _search_ms(collection, queries: list[str]) -> tuple[list, dict]:
    """(hits per query and mode, p50 ms per mode) through index_search (the loaded version,
    database checks included), and of BM25's top 10 alone ("bm25_top", no database)."""
    from knowledge.indexing.search import _searcher, index_search
    from knowledge.models import Collection
    from knowledge.retrieval.tokenize import query_terms

    hits, times = [], {"bm25": [], "rrf": [], "bm25_top": []}
    for mode in ("bm25", "rrf"):
        index_search(collection=collection, query=queries[0], k=10, mode=mode)  # load, warm
        for q in queries:
            t = time.perf_counter()
            found = index_search(collection=collection, query=q, k=10, mode=mode)
            times[mode].append((time.perf_counter() - t) * 1000)
            hits.append([(h.chunk_id, h.score) for h in found])
    bm25 = _searcher(collection, Collection.objects.get(pk=collection.pk).index_version).data.bm25
    for q in queries:
        terms = query_terms(q)
        t = time.perf_counter()
        bm25.top(terms, 10)
        times["bm25_top"].append((time.perf_counter() - t) * 1000)
    return hits, {m: round(statistics.median(v), 2) for m, v in times.items()}


def synthetic(n: int, reps: int) -> dict:
    from knowledge.embedding_cache import default_embedder
    from knowledge.indexing import build
    from knowledge.indexing.build import index_rebuild
    from knowledge.indexing.merge import index_merge
    from knowledge.models import Document

    # The merge is timed below, not queued to a broker after each change.
    build._queue_merge = lambda collection_id: None
    rng = np.random.default_rng(16)
    collection = _synthetic_collection(n, rng)
    # New texts every run: with --keep, the embedding cache holds the earlier runs' ones.
    rng = np.random.default_rng(secrets.randbits(32))
    embedder = default_embedder()
    embedder.embed(["warm the model up"])
    adds, embeds = [], []
    for _ in range(reps):
        doc, embed_s = _add_document(collection, rng, embedder)
        adds.append(_timed(lambda doc=doc: index_rebuild(collection=collection, publish=(doc,))))
        embeds.append(embed_s)
        print(f"  add: embedding {embed_s:.2f} s, index step {adds[-1]:.3f} s", flush=True)
    gone = Document.objects.filter(collection=collection, status=Document.Status.READY,
                                   title__startswith="Paper ").order_by("pk").first()
    Document.objects.filter(pk=gone.pk).update(status=Document.Status.FAILED)
    remove = _timed(lambda: index_rebuild(collection=collection))
    queries = [" ".join(f"w{t}" for t in rng.integers(1, 3000, size=int(rng.integers(2, 6)))) for _ in range(30)]
    before, segmented_ms = _search_ms(collection, queries)
    merge_s = _timed(lambda: index_merge(collection=collection))
    after, merged_ms = _search_ms(collection, queries)
    return {
        "chunks": n,
        "reps": reps,
        "add_index_step_s": [round(a, 3) for a in adds],
        "add_index_step_median_s": round(statistics.median(adds), 3),
        "embedding_step_median_s": round(statistics.median(embeds), 2),
        "remove_index_step_s": round(remove, 3),
        "search_p50_ms_segmented": segmented_ms,
        "merge_s": round(merge_s, 2),
        "search_p50_ms_merged": merged_ms,
        "same_results_after_merge": before == after,
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
    }


def bm25_split(n: int, n_queries: int = 30) -> dict:
    """BM25 top 10 of one index of n + 50 chunks against the same chunks as two segments
    (n + 50, no database): bench/retrieval.py's corpus and queries (common words included)."""
    import retrieval as retrieval_bench  # bench/retrieval.py

    from knowledge.retrieval.bm25 import BM25Index
    from knowledge.retrieval.segments import SegmentedBM25

    rng = np.random.default_rng(1)
    docs = retrieval_bench.corpus(n + 50, rng)
    vocab = {f"w{i}": i for i in range(retrieval_bench.VOCAB)}
    one = BM25Index.from_term_ids(docs, dict(vocab))

    class Part:
        def __init__(self, bm25):
            self.bm25 = bm25

    parts = [Part(BM25Index.from_term_ids(docs[:n], dict(vocab))), Part(BM25Index.from_term_ids(docs[n:], dict(vocab)))]
    split = SegmentedBM25(parts, np.array([0, n, n + 50]), np.ones(n + 50, dtype=bool))
    qs = retrieval_bench.queries(docs, n_queries, rng)
    out: dict = {"chunks": n + 50, "queries": n_queries}
    for name, index in (("one_segment", one), ("two_segments", split)):
        index.top(qs[0], 10)
        times = []
        for q in qs:
            t = time.perf_counter()
            index.top(q, 10)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        out[name] = {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(times[int(0.95 * len(times))], 2)}
    out["identical"] = all(np.array_equal(a, b) for q in qs
                           for a, b in zip(one.top(q, 10), split.top(q, 10), strict=True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=25)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="a folder for the database, media and index, kept for re-runs")
    parser.add_argument("--synthetic", type=int, help="chunks of a synthetic collection (segments bench)")
    parser.add_argument("--bm25-split", type=int, help="BM25 search: one segment vs n + 50 (no database)")
    args = parser.parse_args()
    if args.bm25_split:
        print(json.dumps(bm25_split(args.bm25_split), indent=2))
        return
    if not args.synthetic and not ingest_bench.PAPERS.exists():
        sys.exit(f"needs {ingest_bench.PAPERS}")
    with tempfile.TemporaryDirectory(prefix="grounded-bench-index-") as tmp_name:
        tmp = args.keep or Path(tmp_name)
        tmp.mkdir(parents=True, exist_ok=True)
        ingest_bench._setup_django(tmp)
        from django.conf import settings

        settings.MEDIA_ROOT = tmp / "media"
        settings.INDEX_ROOT = tmp / "index"
        print(f"load before: {os.getloadavg()}", flush=True)
        if args.synthetic:
            print(json.dumps(synthetic(args.synthetic, args.reps), indent=2))
            return
        collection, embed_s = _collection(args.papers)
        result = measure(collection, args.reps)
        result["paper_embed_s"] = embed_s.get(result["paper"])
        print(json.dumps(result, indent=2))

if __name__ == "__main__":
    main()
