"""bench/retrieval.py's BM25 table: ours against rank-bm25 and the peers, on synthetic chunks.

Synthetic chunks: term ids drawn from a Zipf-like distribution (exponent 1.07) over a
50,000-word vocabulary, lengths uniform in [40, 120] tokens; queries are 2-6 tokens taken
from a random chunk, so they mix rare and common terms like real ones.
"""

from __future__ import annotations

import gc
import statistics
import time

import numpy as np
from _retrieval_peers import bm25s_peer, pct, tantivy_peer

from knowledge.retrieval.bm25 import BM25Index, top_k

VOCAB = 50_000


def corpus(n: int, rng: np.random.Generator) -> list[np.ndarray]:
    weights = 1.0 / np.arange(1, VOCAB + 1) ** 1.07
    cdf = np.cumsum(weights / weights.sum())
    lengths = rng.integers(40, 121, size=n)
    flat = np.searchsorted(cdf, rng.random(int(lengths.sum()))).astype(np.int64)
    flat = np.minimum(flat, VOCAB - 1)
    return np.split(flat, np.cumsum(lengths)[:-1])


def queries(docs: list[np.ndarray], count: int, rng: np.random.Generator) -> list[list[str]]:
    out = []
    for _ in range(count):
        doc = docs[int(rng.integers(len(docs)))]
        out.append([f"w{t}" for t in rng.choice(doc, size=int(rng.integers(2, 7)), replace=False)])
    return out


# rank-bm25 scores every chunk in Python (about 0.1 s a query at 100k): left out above this.
RANK_BM25_MAX = 100_000


def vs_rank_bm25(n: int, n_queries: int, rng: np.random.Generator) -> dict:
    from rank_bm25 import BM25Okapi

    docs = corpus(n, rng)
    vocab = {f"w{i}": i for i in range(VOCAB)}
    t0 = time.perf_counter()
    ours = BM25Index.from_term_ids(docs, vocab)
    build_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    reference = BM25Okapi([[f"w{t}" for t in d] for d in docs]) if n <= RANK_BM25_MAX else None
    build_ref = time.perf_counter() - t0
    # rank-bm25 holds millions of small Python objects (a dict per chunk); without this, a
    # garbage collection pass over them lands inside whichever query happens to allocate,
    # and the timings measure the collector instead of either implementation.
    gc.collect()
    gc.freeze()
    bm25s_peer([np.array([i, i + 1]) for i in range(20)])  # numba compiles bm25s's kernels: not its build time
    t0 = time.perf_counter()
    peer = bm25s_peer(docs)
    build_peer = time.perf_counter() - t0
    t0 = time.perf_counter()
    tantivy = tantivy_peer(docs)
    build_tantivy = time.perf_counter() - t0
    ours.top(["w1"], 10)  # compile (or load the compiled kernels) once
    runs = {"ours": lambda q: ours.top(q, 10)[0],
            "ours, every match scored (before)": lambda q: top_k(*ours.matching(q), 10)[0]}
    if reference is not None:
        runs["rank-bm25"] = lambda q: top_k(np.arange(n), reference.get_scores(q), 10)[0]
    if peer is not None:
        runs["bm25s"] = lambda q: peer.retrieve([q], k=10, show_progress=False, n_threads=1)
    if tantivy is not None:
        runs["tantivy"] = tantivy
    times: dict[str, list[float]] = {name: [] for name in runs}
    same = 0
    qs = queries(docs, n_queries, rng)
    for q in qs:
        names = list(runs)
        rng.shuffle(names)  # a random order per query, so neither side always runs on a warm cache
        found = {}
        for name in names:
            t0 = time.perf_counter()
            found[name] = runs[name](q)
            times[name].append(time.perf_counter() - t0)
        best = found["ours"]
        if reference is None:  # against every matching chunk scored (exact float64 sums)
            same += np.array_equal(best, found["ours, every match scored (before)"])
            continue
        ref_best, ref_scores = found["rank-bm25"], reference.get_scores(q)
        # Summation order differs (ours adds a chunk's terms by decreasing bound, rank-bm25
        # by query order), so scores that rank-bm25 computes as exactly tied can differ in
        # the last bit here and swap places: a rank counts as identical if the chunk is the
        # same or rank-bm25 scores both chunks equal within 1e-9.
        same += len(best) == len(ref_best) and all(
            a == b or abs(ref_scores[a] - ref_scores[b]) < 1e-9 for a, b in zip(best, ref_best, strict=True))
    gc.unfreeze()
    ours_t = times["ours"]
    w = ours.weights
    row = {"n": n, "queries": len(qs), "identical_top10": same, "build_ours_s": build_ours,
           "build_ref_s": build_ref, "build_bm25s_s": build_peer, "build_tantivy_s": build_tantivy,
           "first_stage_mb": (sum(a.nbytes for a in ours.postings) + ours.impacts.nbytes + w.indptr.nbytes) / 2**20,
           "indices_mb": w.indices.nbytes / 2**20,
           "exact_mb": w.data.nbytes / 2**20}
    for name, values in times.items():
        row[name] = {"p50": pct(values, 50), "p95": pct(values, 95),
                     "vs_ours": statistics.median(values) / statistics.median(ours_t)}
    return row


def print_bm25(r: dict) -> None:
    """The table of one size, markdown, for docs/benchmarks.md."""
    against = "rank-bm25" if r["n"] <= RANK_BM25_MAX else "scoring every matching chunk"
    print(f"{r['n']:,} chunks, {r['queries']} queries: top 10 identical to {against} on {r['identical_top10']}/"
          f"{r['queries']}; build s: ours {r['build_ours_s']:.1f}, rank-bm25 {r['build_ref_s']:.1f}, "
          f"bm25s {r['build_bm25s_s']:.1f}, tantivy {r['build_tantivy_s']:.1f}; ours: first stage "
          f"(compressed chunk ids, impacts) {r['first_stage_mb']:.0f} MB (int32 chunk ids alone: "
          f"{r['indices_mb']:.0f} MB) + float64 weights {r['exact_mb']:.0f} MB "
          f"(memory-mapped from disk, read for the final candidates only)\n")
    print("| implementation | p50 / p95 ms | median / ours |")
    print("| --- | ---: | ---: |")
    for name in ("ours", "bm25s", "tantivy", "ours, every match scored (before)", "rank-bm25"):
        if name in r:
            print(f"| {name} | {r[name]['p50']:.3f} / {r[name]['p95']:.3f} | {r[name]['vs_ours']:.2f}x |",
                  flush=True)
    print()
