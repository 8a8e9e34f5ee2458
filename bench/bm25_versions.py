"""BM25 top 10 at 100k chunks: two checkouts of our code and bm25s in one process, query by query.

    nice -n 5 .venv/bin/python bench/bm25_versions.py --code main=/tmp/main-checkout --code branch=. \\
        --peers /tmp/peers --queries 300 --repeats 3
    # instruction counts of one code (callgrind, the query loop only; whatever the load):
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=/tmp/cg.%p \\
        .venv/bin/python bench/bm25_versions.py --code branch=. --queries 200 --callgrind

Each `--code NAME=FOLDER` is a checkout of this repository: its `knowledge` package is imported
under its own module names, so both codes run in one process on the same corpus and queries
(bench/retrieval.py's synthetic 100k corpus, seed 42). Every query runs every implementation in
a random order (a load burst hits them alike), one thread each (OMP, numba and OpenBLAS threads
set to 1 before numpy loads). bm25s (numba backend) is taken from `--peers` (a `pip install
--target` folder of bench/requirements-peers.txt), not from the project's environment. The
codes' top 10 must agree with each other, positions and scores bit for bit.
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
# The corpus and queries of bench/retrieval.py (it imports this checkout's knowledge package,
# which load_code forgets before importing each code's own).
from _retrieval_bm25 import VOCAB, corpus, queries  # noqa: E402

del sys.path[1]


def load_code(folder: str):
    """knowledge.retrieval.bm25 of the checkout in `folder`, imported apart from any other.

    The previous checkout's modules are forgotten here, not after its import: numba's disk
    cache pickles a kernel's module by name, so each code's kernels must be compiled (its
    index built and searched) while its modules are still the ones in sys.modules."""
    for name in [m for m in sys.modules if m == "knowledge" or m.startswith("knowledge.")]:
        del sys.modules[name]
    sys.path.insert(0, str(Path(folder).resolve()))
    try:
        module = importlib.import_module("knowledge.retrieval.bm25")
    finally:
        sys.path.pop(0)
    return module


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--code", action="append", required=True, help="NAME=FOLDER, a checkout")
    parser.add_argument("--peers", default="", help="folder holding bm25s (pip install --target)")
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--callgrind", action="store_true",
                        help="instrument only the query loop (run under valgrind --instr-atstart=no)")
    args = parser.parse_args()
    rng = np.random.default_rng(42)
    docs = corpus(args.n, rng)
    vocab = {f"w{i}": i for i in range(VOCAB)}
    qs = queries(docs, args.queries, np.random.default_rng(7))
    runs = {}
    for spec in args.code:
        name, folder = spec.split("=", 1)
        bm25 = load_code(folder)
        index = bm25.BM25Index.from_term_ids(docs, vocab)
        for q in qs[:20]:  # compile (or load the compiled kernels); `top` is exact
            exact = bm25.top_k(*index.matching(q), 10)
            got = index.top(q, 10)
            assert np.array_equal(got[0], exact[0]) and np.array_equal(got[1], exact[1])
        runs[name] = lambda q, index=index: index.top(q, 10)
    if args.peers:
        sys.path.insert(0, args.peers)
        import bm25s

        peer = bm25s.BM25(k1=1.5, b=0.75, method="lucene", backend="numba")
        peer.index([[f"w{t}" for t in d] for d in docs], show_progress=False)
        peer.retrieve([["w1", "w2"]], k=10, show_progress=False, n_threads=1)  # numba compiles its kernels
        runs["bm25s"] = lambda q: peer.retrieve([q], k=10, show_progress=False, n_threads=1)
    gc.collect()
    gc.freeze()
    codes = [spec.split("=", 1)[0] for spec in args.code]
    if args.callgrind:
        for name, run in runs.items():
            run(qs[0])
        subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], check=True, capture_output=True)
        for q in qs:
            for name in codes:
                runs[name](q)
        subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], check=True, capture_output=True)
        return
    print(f"# bench/bm25_versions.py {' '.join(sys.argv[1:])}: {args.n:,} chunks, {len(qs)} queries, top 10")
    for repeat in range(args.repeats):
        load = os.getloadavg()[0]
        wall: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        order = np.random.default_rng(repeat)
        for q in qs:
            names = list(runs)
            order.shuffle(names)
            found = {}
            for name in names:
                t0, c0 = time.perf_counter(), time.thread_time()
                found[name] = runs[name](q)
                wall[name].append(time.perf_counter() - t0)
                cpu[name].append(time.thread_time() - c0)
            for name in codes[1:]:
                a, b = found[codes[0]], found[name]
                assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]), (codes[0], name, q)
        ref = np.median(wall[codes[0]])
        print(f"\nrepeat {repeat + 1}, load {load:.1f} -> {os.getloadavg()[0]:.1f}")
        print(f"| implementation | wall p50 / p95 ms | thread CPU p50 / p95 ms | median wall / {codes[0]} |")
        print("| --- | ---: | ---: | ---: |")
        for name in runs:
            print(f"| {name} | {pct(wall[name], 50):.3f} / {pct(wall[name], 95):.3f} | "
                  f"{pct(cpu[name], 50):.3f} / {pct(cpu[name], 95):.3f} | {np.median(wall[name]) / ref:.2f}x |",
                  flush=True)
    gc.unfreeze()


if __name__ == "__main__":
    main()
