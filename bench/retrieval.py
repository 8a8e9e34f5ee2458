"""Retrieval speed: BM25 vs rank-bm25, and BM25 / dense / hybrid latency at 10k-1M chunks.

    .venv/bin/python bench/retrieval.py            # small: 10k (and rank-bm25 at 10k), CI-sized
    .venv/bin/python bench/retrieval.py --full     # 10k, 100k, 1M; rank-bm25 at 10k and 100k;
                                                   # and real MiniLM vectors tiled to 1M
    .venv/bin/python bench/retrieval.py --dense-sizes 2000,10000,50000   # dense variants only

Peers (bench/_retrieval_peers.py), in the same run when installed (optional imports, not
project dependencies):
    .venv/bin/pip install -r bench/requirements-peers.txt   # bm25s (numba backend), tantivy
faiss (a project dependency) is the dense peer: IndexFlatIP, and IndexScalarQuantizer 8-bit
top-100 + exact rescoring as a plain recipe (what the issue measured).

Synthetic chunks: term ids drawn from a Zipf-like distribution (exponent 1.07) over a
50,000-word vocabulary, lengths uniform in [40, 120] tokens; queries are 2-6 tokens taken
from a random chunk, so they mix rare and common terms like real ones. Dense vectors are
random 384-dim float32, L2-normalised (speed does not depend on what they mean). Query
embedding is not included in the dense/hybrid latency; it is measured on its own with the
local model. Results are printed as a markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _shared_data import SHARED

# As in portal/settings.py: one BLAS thread (set before numpy loads), like the web and
# worker processes; --blas-threads overrides it to compare.
if "--blas-threads" in sys.argv:
    os.environ["OPENBLAS_NUM_THREADS"] = sys.argv[sys.argv.index("--blas-threads") + 1]
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# After OPENBLAS_NUM_THREADS is set above (it imports numpy).
from _retrieval_bm25 import VOCAB, corpus, print_bm25, queries, vs_rank_bm25
from _retrieval_peers import (
    current_rss_mb,
    dense_peers,
    mapped_rss_mb,
    pct,
    print_dense,
)

from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.dense import l2_normalize
from knowledge.retrieval.engine import HybridSearcher
from knowledge.retrieval.store import IndexData, read_index, write_index

DIM = 384


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def latency(n: int, n_queries: int, rng: np.random.Generator, threads: int) -> dict:
    docs = corpus(n, rng)
    vocab = {f"w{i}": i for i in range(VOCAB)}
    before = rss_mb()
    t0 = time.perf_counter()
    bm25 = BM25Index.from_term_ids(docs, vocab)
    build_bm25 = time.perf_counter() - t0
    vectors = l2_normalize(rng.standard_normal((n, DIM), dtype=np.float32))
    data = IndexData(chunk_ids=np.arange(n), document_ids=np.zeros(n, dtype=np.int64),
                     is_reference=np.zeros(n, dtype=bool), bm25=bm25, vectors=vectors,
                     sent_vectors=np.zeros((0, DIM), dtype=np.float32), sent_offsets=np.zeros(n + 1, dtype=np.int64))
    w = bm25.weights
    bm25_mb = (w.data.nbytes + sum(a.nbytes for a in bm25.postings) + w.indptr.nbytes + bm25.impacts.nbytes) / 2**20
    single, pooled = HybridSearcher(data), HybridSearcher(data, threads=threads)
    qs = [" ".join(q) for q in queries(docs, n_queries, rng)]
    qvecs = l2_normalize(rng.standard_normal((len(qs), DIM), dtype=np.float32))
    row = {"n": n, "build_bm25_s": build_bm25, "bm25_mb": bm25_mb, "dense_mb": vectors.nbytes / 2**20,
           "peak_rss_mb": max(rss_mb(), before)}
    runs = [("bm25", single, "bm25"), ("dense", single, "dense"), ("rrf", single, "rrf"),
            ("dense_pooled", pooled, "dense"), ("rrf_pooled", pooled, "rrf")]
    # Interleaved per query, so a burst of load on the machine hits every variant alike.
    times: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    # CPU time of the whole process (every thread) per search: on a busy machine it grows far
    # less than the wall time, which also counts the time spent waiting for a core.
    cpu: dict[str, list[float]] = {name: [] for name, _, _ in runs}
    for q, v in zip(qs, qvecs, strict=True):
        for name, searcher, mode in runs:
            t0, c0 = time.perf_counter(), time.process_time()
            hits = searcher.search(q, query_vector=v, k=10, mode=mode)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
            if name.endswith("_pooled"):
                reference = single.search(q, query_vector=v, k=10, mode=mode)
                assert [h.chunk_id for h in hits] == [h.chunk_id for h in reference], "pooled ranking differs"
    for name, values in times.items():
        row[f"{name}_p50_ms"], row[f"{name}_p95_ms"] = pct(values, 50), pct(values, 95)
    row["pooled_speedup"] = statistics.median(times["rrf"]) / statistics.median(times["rrf_pooled"])
    row["cpu_p50_ms"] = {name: pct(values, 50) for name, values in cpu.items()}
    return row


def scifact_vectors(count: int) -> np.ndarray:
    """MiniLM vectors of up to `count` SciFact abstract sentences (../shared/data), embedded now.

    The same sentence split as tests/knowledge/test_retrieval_dense.py; a cached matrix from
    manage.py eval_retrieval (var/retrieval_eval/*-sentences.npy) is used when there is one.
    """
    cached = sorted(Path(__file__).resolve().parent.parent.glob("var/retrieval_eval/*-sentences.npy"))
    if cached:
        return l2_normalize(np.load(cached[0])[:count])
    from knowledge.embeddings import get_embedder

    corpus = SHARED / "scifact" / "beir" / "corpus.jsonl"
    sentences: list[str] = []
    with corpus.open() as f:
        for line in f:
            sentences += [s for s in re.split(r"(?<=[.!?])\s+", json.loads(line)["text"]) if len(s) > 20]
            if len(sentences) >= count:
                break
    return l2_normalize(get_embedder("local").embed(sentences[:count]))


def tiled(base: np.ndarray, n: int, rng: np.random.Generator, noise: float = 0.05) -> np.ndarray:
    """`n` rows: the base rows over and over, each copy plus Gaussian noise of norm about `noise`."""
    out = np.empty((n, base.shape[1]), dtype=np.float32)
    for a in range(0, n, 65_536):
        b = min(a + 65_536, n)
        rows = base[np.arange(a, b) % len(base)]
        out[a:b] = l2_normalize(rows + rng.standard_normal(rows.shape, dtype=np.float32) * (noise / np.sqrt(base.shape[1])))
    return out


def _loaded_rss(folder: str, qs: list[str], qvecs: np.ndarray, threads: int, out) -> None:
    """In a fresh process: resident MB after loading the index from disk and searching
    (with `threads` search threads at most, as PORTAL_SEARCH_THREADS; each query takes as
    many as there are free cores), then a check that every dense pool was the exact one.

    The libraries the search loads on first use (faiss, numba and the compiled kernels) are
    loaded first, on a tiny index, so the figure is the index's own memory. (Until 2026-12-01
    the tiny index's BM25 was searched for "a", a stopword, so BM25's compiled kernels were
    loaded by the large index's first search and counted in its memory: 25-45 MB.)"""
    tiny = IndexData(chunk_ids=np.arange(2), document_ids=np.zeros(2, dtype=np.int64),
                     is_reference=np.zeros(2, dtype=bool), bm25=BM25Index.build([["alpha"], ["beta"]]),
                     vectors=l2_normalize(np.ones((2, qvecs.shape[1]), dtype=np.float32)),
                     sent_vectors=np.zeros((0, qvecs.shape[1]), dtype=np.float32),
                     sent_offsets=np.zeros(3, dtype=np.int64))
    HybridSearcher(tiny).search("alpha", query_vector=qvecs[0], k=1, mode="rrf")
    from knowledge.retrieval import reads

    getattr(reads, "_reader", lambda: None)()  # the compiled pread loop (absent from older code)
    import faiss  # noqa: F401  (reads the large index's 8-bit quantiser)

    from knowledge.retrieval.dense import dense_search
    from knowledge.retrieval.dense_exact import _exact_all
    from knowledge.retrieval.dense_sq8 import SQ8Blocks
    from knowledge.retrieval.fusion import pool_size

    # The 8-bit scan's compiled kernel (numba loads it on its first call: about 65 MB).
    small = l2_normalize(np.ones((64, qvecs.shape[1]), dtype=np.float32) + np.eye(64, qvecs.shape[1], dtype=np.float32))
    dense_search(small, qvecs[0], 1, sq8=SQ8Blocks.build(small))
    process = current_rss_mb()
    before = process
    searcher = HybridSearcher(read_index(Path(folder)), threads=threads)
    times = []
    for q, v in zip(qs, qvecs, strict=True):
        t0 = time.perf_counter()
        searcher.search(q, query_vector=v, k=10, mode="rrf")
        times.append(time.perf_counter() - t0)
    mb, process_mb = current_rss_mb() - before, current_rss_mb()
    files = {name: size for name, size in sorted(mapped_rss_mb(folder).items()) if size >= 1}
    # After the memory is taken (rescoring every row reads the whole float32 file): each
    # query's dense pool, as the hybrid search gets it, against rescoring every row. The
    # fused ranking is a function of the two pools, so it is then the exact one too.
    same = 0
    for v in qvecs:
        exact = _exact_all(searcher.data.vectors, v, pool_size(10), None)
        got = searcher._dense(v, pool_size(10), None, threads)
        same += np.array_equal(got.positions, exact[0]) and np.array_equal(got.scores, exact[1])
    out.put({"mb": mb, "process_mb": process_mb, "libraries_mb": process,
             "p50": pct(times, 50), "p95": pct(times, 95), "exact": same, "queries": len(qs),
             "files": files})


def realistic(n: int, n_queries: int, rng: np.random.Generator, sentences: int, threads: int
              ) -> tuple[list[dict], dict]:
    """Real MiniLM vectors of SciFact sentences tiled with noise to `n` rows; hybrid from disk."""
    base = scifact_vectors(sentences)
    vectors = tiled(base, n, rng)
    qvecs = tiled(base[rng.integers(len(base), size=n_queries)], n_queries, rng, noise=0.3)
    rows = dense_peers(f"MiniLM SciFact x{n // len(base)}", vectors, qvecs)
    docs = corpus(n, rng)
    data = IndexData(chunk_ids=np.arange(n), document_ids=np.zeros(n, dtype=np.int64),
                     is_reference=np.zeros(n, dtype=bool),
                     bm25=BM25Index.from_term_ids(docs, {f"w{i}": i for i in range(VOCAB)}), vectors=vectors,
                     sent_vectors=np.zeros((0, DIM), dtype=np.float32), sent_offsets=np.zeros(n + 1, dtype=np.int64))
    qs = [" ".join(q) for q in queries(docs, n_queries, rng)]
    with tempfile.TemporaryDirectory(dir=Path(__file__).resolve().parent.parent / "var") as tmp:
        write_index(data, Path(tmp) / "1")
        del data, vectors
        gc.collect()
        context = multiprocessing.get_context("spawn")
        out = context.Queue()
        child = context.Process(target=_loaded_rss, args=(str(Path(tmp) / "1"), qs, qvecs, threads, out))
        child.start()
        loaded = out.get()
        child.join()
    return rows, loaded


def query_embedding_ms(count: int = 20) -> float:
    from knowledge.embeddings import get_embedder

    embedder = get_embedder("local")
    embedder.embed(["warm up"])
    times = []
    for i in range(count):
        t0 = time.perf_counter()
        embedder.embed([f"does retrieval augmented generation reduce hallucination {i}"])
        times.append(time.perf_counter() - t0)
    return pct(times, 50)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--full", action="store_true", help="10k, 100k and 1M chunks (several GB of RAM)")
    parser.add_argument("--queries", type=int, default=None)
    parser.add_argument("--blas-threads", default="1", help="OpenBLAS threads (default 1, as in the portal)")
    parser.add_argument("--threads", type=int, default=min(4, os.cpu_count() or 1),
                        help="search pool threads, as PORTAL_SEARCH_THREADS (default: cores, at most 4)")
    parser.add_argument("--realistic", type=int, default=0,
                        help="rows of the tiled MiniLM set (default with --full: 1M)")
    parser.add_argument("--max-rows", type=int, default=None, help="leave out the sizes above this")
    parser.add_argument("--bm25-only", action="store_true", help="only the BM25 implementations table")
    parser.add_argument("--no-bm25-table", action="store_true", help="leave out the BM25 implementations table")
    parser.add_argument("--sizes", default="", help="comma-separated chunk counts instead of 10k, 100k, 1M "
                        "(BM25 peers, latency and dense tables; rank-bm25 only up to 100k)")
    parser.add_argument("--sentences", type=int, default=5_000, help="SciFact sentences to tile")
    parser.add_argument("--k", type=int, default=10, help="with --dense-sizes: hits per search (a hybrid "
                        "search of k=10 asks each retriever for a pool of 30)")
    parser.add_argument("--dense-sizes", default="",
                        help="only the dense variants table, at these comma-separated row counts")
    args = parser.parse_args()
    rng = np.random.default_rng(42)
    if args.dense_sizes:
        print(f"# bench/retrieval.py --dense-sizes {args.dense_sizes}, load average {os.getloadavg()[0]:.1f}")
        for n in (int(x) for x in args.dense_sizes.split(",")):
            vectors = l2_normalize(rng.standard_normal((n, DIM), dtype=np.float32))
            print_dense(dense_peers("random", vectors, l2_normalize(
                rng.standard_normal((args.queries or 50, DIM), dtype=np.float32)), k=args.k))
        print(f"load average after {os.getloadavg()[0]:.1f}")
        return
    sizes = [10_000, 100_000, 1_000_000] if args.full else [10_000]
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
    if args.max_rows:
        sizes = [n for n in sizes if n <= args.max_rows]
    ref_sizes = sizes
    nq = args.queries or (50 if args.full else 20)
    print(f"# bench/retrieval.py {'--full' if args.full else ''} on {os.cpu_count()} CPUs, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, load average {os.getloadavg()[0]:.1f}")
    print("\nBM25 top 10, every implementation on each query in a random order "
          "(p50 / p95 ms; median time / ours):\n")
    for n in [] if args.no_bm25_table else ref_sizes:
        print_bm25(vs_rank_bm25(n, nq, rng))
    if args.bm25_only:
        print(f"load average after {os.getloadavg()[0]:.1f}")
        return
    t = args.threads
    print(f"\n| chunks | BM25 p50 / p95 ms | dense p50 / p95 ms | hybrid (RRF) p50 / p95 ms | dense, {t} threads | "
          f"hybrid, {t} threads | hybrid 1 / {t} threads | BM25 build s | BM25 MB | dense MB | peak RSS MB |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    cpu_lines = []
    for n in sizes:
        r = latency(n, nq, rng, t)
        cpu_lines.append(f"{n:,} chunks: " + ", ".join(f"{name} {ms:.1f}" for name, ms in r["cpu_p50_ms"].items()))
        print(f"| {n:,} | {r['bm25_p50_ms']:.1f} / {r['bm25_p95_ms']:.1f} | {r['dense_p50_ms']:.1f} / "
              f"{r['dense_p95_ms']:.1f} | {r['rrf_p50_ms']:.1f} / {r['rrf_p95_ms']:.1f} | "
              f"{r['dense_pooled_p50_ms']:.1f} / {r['dense_pooled_p95_ms']:.1f} | "
              f"{r['rrf_pooled_p50_ms']:.1f} / {r['rrf_pooled_p95_ms']:.1f} | {r['pooled_speedup']:.2f}x | "
              f"{r['build_bm25_s']:.1f} | {r['bm25_mb']:.0f} | {r['dense_mb']:.0f} | {r['peak_rss_mb']:.0f} |",
              flush=True)
    print("\nCPU time per search, p50 ms (the process, every thread):\n" + "\n".join(cpu_lines))
    for n in sizes:
        vectors = l2_normalize(rng.standard_normal((n, DIM), dtype=np.float32))
        print_dense(dense_peers("random", vectors, l2_normalize(rng.standard_normal((nq, DIM), dtype=np.float32))))
        del vectors
    if args.full or args.realistic:
        n = args.realistic or 1_000_000
        rows, loaded = realistic(n, nq, rng, args.sentences, t)
        print_dense(rows)
        print(f"\nhybrid (RRF) at {n:,} chunks, index loaded from disk in a fresh process (at most {t} threads): "
              f"p50 {loaded['p50']:.1f} / p95 {loaded['p95']:.1f} ms, resident memory of the loaded index "
              f"{loaded['mb']:.0f} MB (whole process {loaded['process_mb']:.0f} MB, of which "
              f"{loaded['libraries_mb']:.0f} MB before the index); dense pool (30) = exact pool "
              f"on {loaded['exact']}/{loaded['queries']} queries; load average {os.getloadavg()[0]:.1f}")
        print("resident MB per mapped file of the index: " + ", ".join(
            f"{name} {size:.0f}" for name, size in loaded["files"].items()))
    print(f"\nquery embedding (local all-MiniLM-L6-v2 int8, one short query): p50 {query_embedding_ms():.1f} ms")


if __name__ == "__main__":
    main()
