"""Does token-level MaxSim (agent.local.maxsim) tell the answering sentence apart where the
pooled cosine and term coverage do not? Measured on bench/calibrate_selection.py's cached
calibration rows only (run it first with --fit-only and the same --sets):

    nice .venv/bin/python bench/calibrate_selection.py --var var/bench-blind --collection blind \\
        --sets devbench,qasper,in_domain,blind2,blind3 --fit-only --refresh
    nice .venv/bin/python bench/selection_maxsim.py --var var/bench-blind --collection blind \\
        --sets devbench,qasper,in_domain,blind2,blind3

Each variant's column is scored alone (a fact's candidates ranked by it) and appended to the
selection model's features (the ones calibrate_selection's forward/backward choice takes on
these rows, and the shipped ones), refitted leave-one-question-out: top-1 (facts whose first
candidate holds a gold span) and the mean reciprocal rank of the first gold candidate. It
also times the word-piece states per sentence.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import _devbench_common as common
import numpy as np
from calibrate_selection import _leave_one_out, choose_features, choose_l2, fit


def _states(texts: list[str], cache: Path) -> dict:
    from knowledge.embeddings import get_embedder

    known = pickle.loads(cache.read_bytes()) if cache.exists() else {}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        start = time.perf_counter()
        known.update(zip(missing, get_embedder("local").token_states(missing)))
        print(f"states: {len(missing)} texts in {time.perf_counter() - start:.1f} s", file=sys.stderr)
        cache.write_bytes(pickle.dumps(known))
    return known


def columns(facts, quotes, previous, groups, states) -> dict[str, np.ndarray]:
    """Every variant's MaxSim of each row's need with its sentence."""
    from agent.local.maxsim import content_piece, maxsim, need_weights
    from agent.local.selection import candidate_idf
    from agent.local.text import term_set

    idf_of = {}
    for g in dict.fromkeys(groups):
        idx = np.flatnonzero(groups == g)
        idf_of[g] = candidate_idf([term_set(str(quotes[i])) for i in idx])
        idf_of[g] = (idf_of[g], float(np.log(1 + len(idx))))
    out: dict[str, list[float]] = {k: [] for k in (
        "all_pieces", "content", "idf", "idf_sentence_content", "idf_with_previous", "content_with_previous",
        "idf_gain")}
    for fact, quote, before, g in zip(facts, quotes, previous, groups):
        need, sent = states[fact], states[quote]
        prev = states[before] if before else None
        idf, unseen = idf_of[g]
        flat = need_weights(need.words, None, 1.0)
        rare = need_weights(need.words, idf, unseen)
        both = np.vstack([sent.vectors, prev.vectors]) if prev is not None else sent.vectors
        own = np.array([content_piece(w) for w in sent.words], dtype=bool)
        out["all_pieces"].append(maxsim(need.vectors, np.ones(len(need.words)), sent.vectors))
        out["content"].append(maxsim(need.vectors, flat, sent.vectors))
        out["idf"].append(maxsim(need.vectors, rare, sent.vectors))
        out["idf_sentence_content"].append(maxsim(need.vectors, rare, sent.vectors[own]))
        out["idf_with_previous"].append(maxsim(need.vectors, rare, both))
        out["content_with_previous"].append(maxsim(need.vectors, flat, both))
        # What the soft matches add over exact ones: a piece whose word the sentence holds scores 1.
        words = set(sent.words)
        exact = np.array([1.0 if w in words else 0.0 for w in need.words])
        total = rare.sum()
        out["idf_gain"].append(out["idf"][-1] - (float(exact @ rare) / total if total else 0.0))
    return {k: np.array(v) for k, v in out.items()}


def alone(col, y, groups) -> tuple[int, float]:
    hits = n = 0
    rr = 0.0
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        if not y[idx].any():
            continue
        n += 1
        order = idx[np.argsort(-col[idx], kind="stable")]
        hits += y[order[0]] > 0
        rr += 1.0 / (1 + int(np.flatnonzero(y[order] > 0)[0]))
    return int(hits), round(rr / max(n, 1), 4)


def loo(x, y, groups, qids, cols, l2) -> tuple[int, float]:
    hits, rr, total = _leave_one_out(x, y, groups, qids, lambda tr: fit(x[tr], y[tr], groups[tr], cols, l2)[0])
    return hits, round(rr / max(total, 1), 4)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench"))
    parser.add_argument("--collection", default="devbench")
    parser.add_argument("--sets", default="devbench,qasper,in_domain")
    parser.add_argument("--time", type=int, default=200, help="sentences to time the word-piece states on")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from agent.local.auditor import AuditorParams
    from agent.local.selection import FEATURES

    names = [n for n in ("devbench", "qasper", "in_domain", "blind2", "blind3") if n in args.sets.split(",")]
    data = np.load(Path(args.var) / f"selection_rows_{args.collection}_{'-'.join(names)}.npz", allow_pickle=True)
    qids, fidx, x, y, quotes, previous = (data[k] for k in ("qids", "fidx", "x", "y", "quotes", "previous"))
    groups = np.array([f"{q}/{f}" for q, f in zip(qids, fidx)])
    facts = np.array([str(q).split(" || ", 1)[0] for q in quotes])
    sents = np.array([str(q).split(" || ", 1)[1] for q in quotes])
    states = _states([*facts, *sents, *[p for p in previous if p]],
                     Path(args.var) / f"maxsim_states_{args.collection}.pkl")
    cols = columns(facts, sents, previous, groups, states)

    report: dict = {"candidates": len(y), "facts_with_gold": len({g for g in groups[y > 0]})}
    report["alone (top1, mrr)"] = {"similarity": alone(x[:, FEATURES.index("similarity")], y, groups),
                                   "idf_coverage": alone(x[:, FEATURES.index("idf_coverage")], y, groups),
                                   **{k: alone(v, y, groups) for k, v in cols.items()}}
    report["correlation with similarity"] = {
        k: round(float(np.corrcoef(v, x[:, FEATURES.index("similarity")])[0, 1]), 3) for k, v in cols.items()}
    chosen, _ = choose_features(x, y, groups, qids, 0.1)
    base = [FEATURES.index(n) for n in chosen]
    l2, _ = choose_l2(x, y, groups, qids, base)
    shipped = [i for i, w in enumerate(AuditorParams().selection_weights) if w]
    for label, cols_, pen in ((f"chosen {chosen} at l2 {l2}", base, l2), ("chosen at l2 0.1", base, 0.1),
                              ("shipped features refitted, l2 0.3", shipped, 0.3)):
        row = {"without": loo(x, y, groups, qids, cols_, pen)}
        for k, v in cols.items():
            xx = np.hstack([x, v[:, None]])
            row[f"+{k}"] = loo(xx, y, groups, qids, [*cols_, xx.shape[1] - 1], pen)
            if "similarity" in chosen and cols_ is base:
                swap = [c for c in cols_ if c != FEATURES.index("similarity")] + [xx.shape[1] - 1]
                row[f"{k} for similarity"] = loo(xx, y, groups, qids, swap, pen)
        report[f"leave-one-question-out (top1, mrr): {label}"] = row
    if args.time:
        from knowledge.embeddings import get_embedder

        sample = list(dict.fromkeys(sents))[: args.time]
        embedder = get_embedder("local")
        start = time.perf_counter()
        embedder.token_states(sample)
        report["ms per sentence (word-piece states)"] = round(1000 * (time.perf_counter() - start) / len(sample), 2)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
