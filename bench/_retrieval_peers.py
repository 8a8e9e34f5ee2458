"""The peers bench/retrieval.py measures ours against, and the helpers they share with it.

BM25: bm25s (numba backend when numba is installed) and tantivy, optional imports that are
not project dependencies (bench/requirements-peers.txt); a runner is None when its library
is absent. Dense: faiss IndexFlatIP and IndexScalarQuantizer 8-bit top-100 + exact
rescoring, beside our own first stages (`dense_peers`). Imported by bench/retrieval.py
after it has set OPENBLAS_NUM_THREADS, so numpy is loaded here with the same setting.
"""

from __future__ import annotations

import gc
import re
import statistics
import time
from pathlib import Path

import numpy as np

from knowledge.retrieval.bm25 import top_k
from knowledge.retrieval.dense import dense_search


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000


def current_rss_mb() -> float:
    """Resident memory now (VmRSS), as opposed to the peak."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def mapped_rss_mb(folder: str) -> dict[str, float]:
    """Resident MB of each file of `folder` mapped into this process (/proc/self/smaps)."""
    out: dict[str, float] = {}
    name = None
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if re.fullmatch(r"[0-9a-f]+-[0-9a-f]+", head[0]):
            # A mapping's first line; an anonymous one (no path) is no file's: before this
            # check, its Rss was counted in the file mapped just before it.
            name = Path(head[5]).name if len(head) >= 6 and head[5].startswith(folder) else None
        elif name and line.startswith("Rss:"):
            out[name] = out.get(name, 0.0) + int(head[1]) / 1024
    return out


def bm25s_peer(docs: list[np.ndarray]):
    """bm25s (lucene scores, numba backend when numba is installed), or None when absent."""
    try:
        import bm25s
    except ImportError:
        return None
    backend = "numba" if _has("numba") else "numpy"
    retriever = bm25s.BM25(k1=1.5, b=0.75, method="lucene", backend=backend)
    retriever.index([[f"w{t}" for t in d] for d in docs], show_progress=False)
    retriever.retrieve([["w1", "w2"]], k=10, show_progress=False, n_threads=1)  # JIT compile once
    return retriever


def tantivy_peer(docs: list[np.ndarray]):
    """tantivy (Rust, Lucene-style BM25 over its own postings), or None when absent."""
    try:
        import tantivy
    except ImportError:
        return None
    schema = tantivy.SchemaBuilder().add_text_field("body", stored=False).build()
    index = tantivy.Index(schema)
    writer = index.writer(heap_size=256_000_000, num_threads=1)
    for d in docs:
        writer.add_document(tantivy.Document(body=" ".join(f"w{t}" for t in d)))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()

    def search(tokens: list[str]) -> list:
        return searcher.search(index.parse_query(" ".join(tokens), ["body"]), 10).hits

    search(["w1", "w2"])
    return search


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def dense_peers(label: str, vectors: np.ndarray, qvecs: np.ndarray, k: int = 10) -> list[dict]:
    """Ours (SQ8 or float32 first stage + exact rescoring), numpy's full product, faiss peers.

    recall@10 is against the exact top 10 (every row rescored as dense_exact.exact_scores does).
    Every variant runs on each query in turn, so load bursts hit them alike.
    """
    import faiss

    from knowledge.retrieval.dense_exact import _exact_all
    from knowledge.retrieval.dense_sq8 import SQ8Blocks

    n, dim = vectors.shape
    variants: dict[str, dict] = {}

    def add(name: str, build, search) -> None:
        gc.collect()
        before = current_rss_mb()
        t0 = time.perf_counter()
        state = build()
        variants[name] = {"search": lambda q, st=state: search(st, q), "build_s": time.perf_counter() - t0,
                          "mb": current_rss_mb() - before, "times": [], "hits": 0}

    add("numpy product (before)", lambda: None,
        lambda _, q: top_k(np.arange(n), vectors @ q, k)[0])
    add("ours, float32 first stage (faiss)", lambda: None,
        lambda _, q: dense_search(vectors, q, k, first_stage="faiss")[0])
    add("ours, float32 first stage (numpy)", lambda: None,
        lambda _, q: dense_search(vectors, q, k, first_stage="numpy")[0])
    add("ours, SQ8 first stage", lambda: SQ8Blocks.build(vectors),
        lambda sq, q: dense_search(vectors, q, k, sq8=sq)[0])

    def flat():
        index = faiss.IndexFlatIP(dim)
        index.add(vectors)
        return index

    def sq8():
        index = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        index.add(vectors)
        return index

    def sq8_rescore(index, q):
        _, cand = index.search(q[None], 100)
        cand = np.sort(cand[0][cand[0] >= 0])
        return top_k(cand, vectors[cand] @ q, k)[0]

    add("faiss IndexFlatIP", flat, lambda index, q: index.search(q[None], k)[1][0])
    add("faiss SQ8 top-100 + rescoring", sq8, sq8_rescore)
    faiss.omp_set_num_threads(1)
    for q in qvecs:
        exact = set(_exact_all(vectors, q, k, None)[0].tolist())
        for v in variants.values():
            t0 = time.perf_counter()
            found = v["search"](q)
            v["times"].append(time.perf_counter() - t0)
            v["hits"] += len(exact & set(np.asarray(found).tolist()))
    for name in ("ours, float32 first stage (faiss)", "ours, float32 first stage (numpy)", "ours, SQ8 first stage"):
        assert variants[name]["hits"] == k * len(qvecs), f"{name}: not the exact top {k}"
    ref = statistics.median(variants["faiss IndexFlatIP"]["times"])
    return [{"set": label, "n": n, "variant": name, "p50": pct(v["times"], 50), "p95": pct(v["times"], 95),
             "recall": v["hits"] / (k * len(qvecs)), "build_s": v["build_s"], "mb": v["mb"],
             "vs_flat": ref / statistics.median(v["times"])} for name, v in variants.items()]


def print_dense(rows: list[dict]) -> None:
    print("\n| vectors | rows | variant | p50 / p95 ms | faiss flat p50 / this | recall@10 vs exact | build s | memory MB |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['set']} | {r['n']:,} | {r['variant']} | {r['p50']:.1f} / {r['p95']:.1f} | {r['vs_flat']:.2f}x | "
              f"{r['recall']:.3f} | {r['build_s']:.1f} | {r['mb']:.0f} |", flush=True)
