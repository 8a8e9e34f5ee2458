"""Does pseudo-relevance feedback bridge the words of a need and of its answering sentence?
Measured on bench/calibrate_selection.py's cached calibration rows only (run it first with
--fit-only, --refresh once so the rows carry each candidate's chunk id, and the same --sets):

    nice .venv/bin/python bench/calibrate_selection.py --var var/bench-blind --collection blind \\
        --sets devbench,qasper,in_domain,blind2,blind3 --fit-only --refresh
    nice .venv/bin/python bench/selection_prf.py --var var/bench-blind --collection blind \\
        --sets devbench,qasper,in_domain,blind2,blind3

Each need's terms are expanded with terms the retrieved text holds near them, and each
candidate sentence scored by how much of that expansion it holds (the expansion's weight
it covers over the expansion's total; the need's own terms are left out, which
idf_coverage already counts). Expansions:

- rm_chunks: RM1 (Lavrenko and Croft) over the need's k first chunks by retrieval rank,
  each weighted by the need's Dirichlet-smoothed query likelihood in it;
- rm_sentences: the same over the k candidate sentences the shipped selection weights put
  first (a relevance model of the best candidates, not of whole chunks);
- lca: local context analysis (Xu and Croft): a term's sentences shared with the need's
  terms in the k first chunks, weighted by the need terms' IDF and its own;
- abstract: the terms of the first chunk (title and abstract) of the paper the need names
  (its anchors in the title), else of the first-ranked chunk's paper;
- vocabulary: the rm_chunks expansion restricted to terms the paper's whole text
  (knowledge.vocabulary.document_vocabulary) writes at most `rare` times: its own rare
  words, not its topic words.

Each column is scored alone (a fact's candidates ranked by it) and appended to the selection
model's features, refitted leave-one-question-out: top-1 (facts whose first candidate holds
a gold span) and the mean reciprocal rank of the first gold candidate; and offered to
calibrate_selection's own forward/backward feature choice, as MaxSim was (stop 30).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from pathlib import Path

import _devbench_common as common
import numpy as np
from calibrate_selection import choose_features, choose_l2, fit
from selection_maxsim import alone, loo


def _relevance_model(need: list[str], docs: list[Counter], mu: float = 200.0,
                     weights: list[float] | None = None) -> dict[str, float]:
    """RM1: P(w | R) = sum over feedback texts d of P(w | d) P(need | d), the query likelihood
    Dirichlet-smoothed against the feedback texts together (or the given weights)."""
    background = Counter()
    for d in docs:
        background.update(d)
    size = sum(background.values()) or 1
    model: dict[str, float] = defaultdict(float)
    for i, d in enumerate(docs):
        n = sum(d.values())
        if not n:
            continue
        if weights is None:
            log_q = sum(math.log((d[t] + mu * (background[t] + 0.5) / size) / (n + mu)) for t in need)
            q = math.exp(log_q)
        else:
            q = weights[i]
        for w, c in d.items():
            model[w] += q * c / n
    total = sum(model.values()) or 1.0
    return {w: v / total for w, v in model.items()}


def _expansion(model: dict[str, float], need: set[str], m: int, allowed=None) -> dict[str, float]:
    ranked = sorted(((v, w) for w, v in model.items()
                     if w not in need and not w.isdigit() and len(w) > 2 and (allowed is None or w in allowed)),
                    reverse=True)
    return {w: v for v, w in ranked[:m]}


def _covered(expansion: dict[str, float], terms: set[str]) -> float:
    total = sum(expansion.values())
    return sum(v for w, v in expansion.items() if w in terms) / total if total else 0.0


def columns(x, quotes, chunks, groups, qids, k: int, m: int, rare: int) -> dict[str, np.ndarray]:
    from agent.local.auditor import AuditorParams
    from agent.local.selection import FEATURES, candidate_idf
    from agent.local.text import anchor_terms, content_terms, split_sentences, term_set
    from knowledge.models import Chunk
    from knowledge.vocabulary import document_vocabulary

    facts = [str(q).split(" || ", 1)[0] for q in quotes]
    sents = [str(q).split(" || ", 1)[1] for q in quotes]
    info = {c.pk: c for c in Chunk.objects.filter(pk__in={int(c) for c in chunks}).select_related("document")}
    firsts: dict[int, str] = {}

    def first_chunk(doc_id: int) -> str:
        if doc_id not in firsts:
            firsts[doc_id] = " ".join(Chunk.objects.filter(document_id=doc_id, is_reference=False)
                                      .order_by("ordinal").values_list("text", flat=True)[:1])
        return firsts[doc_id]

    rare_words: dict[int, set[str]] = {}

    def rare_of(doc_id: int) -> set[str]:
        if doc_id not in rare_words:
            vocab = document_vocabulary(doc_id) or {}
            seen: Counter = Counter()
            for form, n in vocab.items():
                for t in content_terms(form):
                    seen[t] += n
            rare_words[doc_id] = {t for t, n in seen.items() if n <= rare}
        return rare_words[doc_id]

    idf_q = {q: candidate_idf([term_set(sents[i]) for i in np.flatnonzero(qids == q)]) for q in set(qids)}
    shipped = np.asarray(AuditorParams().selection_weights)
    rank_col = FEATURES.index("chunk_rank")
    out: dict[str, np.ndarray] = {n: np.zeros(len(quotes)) for n in
                                  ("rm_chunks", "rm_sentences", "lca", "abstract", "vocabulary")}
    sent_terms = [term_set(s) for s in sents]
    for g in dict.fromkeys(groups):
        idx = np.flatnonzero(groups == g)
        fact = facts[idx[0]]
        need = content_terms(fact)
        need_set = set(need)
        idf = idf_q[qids[idx[0]]]
        # The need's first k chunks by retrieval rank (the chunk_rank feature is 1 / (1 + rank / 5)).
        by_chunk = {}
        for i in idx:
            by_chunk.setdefault(int(chunks[i]), x[i, rank_col])
        top = [c for c, _ in sorted(by_chunk.items(), key=lambda kv: -kv[1])[:k] if c in info]
        docs = [Counter(content_terms_all(info[c].text)) for c in top]
        rm = _relevance_model(need, docs)
        exp = _expansion(rm, need_set, m)
        # Local context analysis over the top chunks' sentences.
        units = [term_set(s) for c in top for s in split_sentences(info[c].text)]
        n_units = max(len(units), 1)
        df = Counter(t for u in units for t in u)
        lca: dict[str, float] = {}
        for w in df:
            if w in need_set or w.isdigit() or len(w) <= 2:
                continue
            idf_w = min(1.0, math.log10(n_units / df[w]) / 5) if df[w] < n_units else 0.0
            score = 1.0
            for t in need:
                if t not in df:
                    continue
                co = sum(1 for u in units if w in u and t in u)
                idf_t = min(1.0, math.log10(n_units / df[t]) / 5) if df[t] < n_units else 0.0
                score *= (0.1 + math.log10(co + 1) * idf_w / math.log10(n_units + 1)) ** idf_t
            lca[w] = score
        exp_l = _expansion(lca, need_set, m)
        # The named paper's title and abstract.
        anchors = set(anchor_terms(fact))
        doc_ids = {info[c].document_id: info[c].document for c in top}
        named = [d for d, doc in doc_ids.items() if anchors & term_set(doc.title or doc.original_name)]
        doc_id = named[0] if named else (info[top[0]].document_id if top else None)
        abstract = Counter(content_terms_all(first_chunk(doc_id))) if doc_id else Counter()
        exp_a = {w: idf.get(w, 0.0) for w in abstract if w not in need_set and len(w) > 2}
        exp_a = dict(sorted(exp_a.items(), key=lambda kv: -kv[1])[:m])
        exp_v = _expansion(rm, need_set, m, allowed=rare_of(doc_id)) if doc_id else {}
        for i in idx:
            out["rm_chunks"][i] = _covered(exp, sent_terms[i])
            out["lca"][i] = _covered(exp_l, sent_terms[i])
            out["abstract"][i] = _covered(exp_a, sent_terms[i])
            out["vocabulary"][i] = _covered(exp_v, sent_terms[i])
    out["rm_sentences"] = ranked_feedback(x, quotes, groups, shipped, k, m)
    return out


def content_terms_all(text: str) -> list[str]:
    """Content stems with their repeats (content_terms keeps each once)."""
    from agent.local.text import STOPWORDS, stem, words

    return [stem(w) for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def ranked_feedback(x, quotes, groups, weights, k: int, m: int) -> np.ndarray:
    """rm_sentences under the given selection weights: each fact's k best candidates by them,
    weighted by their softmax share, expanded by RM1, each candidate's covered share."""
    from agent.local.text import content_terms, term_set

    col = np.zeros(len(quotes))
    for g in dict.fromkeys(groups):
        idx = np.flatnonzero(groups == g)
        need = content_terms(str(quotes[idx[0]]).split(" || ", 1)[0])
        order = idx[np.argsort(-(x[idx] @ weights), kind="stable")][:k]
        z = x[order] @ weights
        share = list(np.exp(z - z.max()) / np.exp(z - z.max()).sum())
        texts = [Counter(content_terms_all(str(quotes[i]).split(" || ", 1)[1])) for i in order]
        expansion = _expansion(_relevance_model(need, texts, weights=share), set(need), m)
        for i in idx:
            col[i] = _covered(expansion, term_set(str(quotes[i]).split(" || ", 1)[1]))
    return col


def fold_feedback(x, y, groups, qids, quotes, ranker: list[int], ranker_l2: float, model: list[int], l2: float,
                  k: int, m: int) -> tuple[int, float]:
    """Leave-one-question-out top-1 and MRR of `model` + rm_sentences, the column rebuilt in
    each fold from a ranking (`ranker` at `ranker_l2`) fitted without the left-out question:
    the shipped weights the plain column is built from were fitted on some of these rows."""
    hits = total = 0
    reciprocal = 0.0
    for qid in sorted(set(qids)):
        test = qids == qid
        train = ~test
        w_rank = np.asarray(fit(x[train], y[train], groups[train], ranker, ranker_l2)[0])
        xx = np.hstack([x, ranked_feedback(x, quotes, groups, w_rank, k, m)[:, None]])
        cols = [*model, x.shape[1]]
        w = np.asarray(fit(xx[train], y[train], groups[train], cols, l2)[0])
        for g in np.unique(groups[test]):
            idx = np.flatnonzero(groups == g)
            if y[idx].any():
                total += 1
                order = idx[np.argsort(-(xx[idx] @ w), kind="stable")]
                hits += y[order[0]] > 0
                reciprocal += 1.0 / (1 + int(np.flatnonzero(y[order] > 0)[0]))
    return int(hits), round(reciprocal / max(total, 1), 4)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench"))
    parser.add_argument("--collection", default="devbench")
    parser.add_argument("--sets", default="devbench,qasper,in_domain")
    parser.add_argument("--k", type=int, default=5, help="feedback chunks (or sentences) per need")
    parser.add_argument("--m", type=int, default=10, help="expansion terms per need")
    parser.add_argument("--rare", type=int, default=5, help="vocabulary: most times the paper writes a term")
    parser.add_argument("--choose", action="store_true", help="also offer each column to the forward choice")
    parser.add_argument("--fold", default="",
                        help="comma-separated features (and ':L2') of a model to score with rm_sentences "
                             "rebuilt inside each fold from the forward choice's ranking")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from agent.local import selection
    from agent.local.auditor import AuditorParams

    FEATURES = selection.FEATURES
    names = [n for n in ("devbench", "qasper", "in_domain", "blind2", "blind3") if n in args.sets.split(",")]
    data = np.load(Path(args.var) / f"selection_rows_{args.collection}_{'-'.join(names)}.npz", allow_pickle=True)
    qids, fidx, x, y, quotes, chunks = (data[k] for k in ("qids", "fidx", "x", "y", "quotes", "chunks"))
    groups = np.array([f"{q}/{f}" for q, f in zip(qids, fidx)])
    cols = columns(x, quotes, chunks, groups, qids, args.k, args.m, args.rare)

    report: dict = {"k": args.k, "m": args.m, "candidates": len(y), "facts_with_gold": len({g for g in groups[y > 0]})}
    report["alone (top1, mrr)"] = {"similarity": alone(x[:, FEATURES.index("similarity")], y, groups),
                                   "idf_coverage": alone(x[:, FEATURES.index("idf_coverage")], y, groups),
                                   **{k: alone(v, y, groups) for k, v in cols.items()}}
    report["gold rows with the column > 0 / all rows"] = {
        k: [round(float((v[y > 0] > 0).mean()), 3), round(float((v > 0).mean()), 3)] for k, v in cols.items()}
    chosen, _ = choose_features(x, y, groups, qids, 0.1)
    base = [FEATURES.index(n) for n in chosen]
    l2, _ = choose_l2(x, y, groups, qids, base)
    shipped = [i for i, w in enumerate(AuditorParams().selection_weights) if w]
    for label, cols_, pen in ((f"chosen {chosen} at l2 {l2}", base, l2), ("chosen at l2 0.1", base, 0.1),
                              ("shipped features refitted, l2 0.1", shipped, 0.1),
                              ("shipped features refitted, l2 0.3", shipped, 0.3)):
        row = {"without": loo(x, y, groups, qids, cols_, pen)}
        for k, v in cols.items():
            xx = np.hstack([x, v[:, None]])
            row[f"+{k}"] = loo(xx, y, groups, qids, [*cols_, xx.shape[1] - 1], pen)
        report[f"leave-one-question-out (top1, mrr): {label}"] = row
        print(label, json.dumps(row), file=sys.stderr, flush=True)
    if args.choose:
        for k, v in cols.items():
            xx = np.hstack([x, v[:, None]])
            selection.FEATURES = (*FEATURES, k)
            try:
                names_k, _ = choose_features(xx, y, groups, qids, 0.1)
                l2_k, trace = choose_l2(xx, y, groups, qids, [selection.FEATURES.index(n) for n in names_k])
            finally:
                selection.FEATURES = FEATURES
            report[f"forward choice offered {k}"] = {"features": names_k, "l2": l2_k, "loo": trace[str(l2_k)]}
            print(k, json.dumps(report[f"forward choice offered {k}"]), file=sys.stderr, flush=True)
    report["forward choice without"] = {"features": chosen, "l2": l2}
    if args.fold:
        names_f, _, pen = args.fold.partition(":")
        model = [FEATURES.index(n) for n in names_f.split(",")]
        pen = float(pen or 0.1)
        report[f"rm_sentences rebuilt in each fold, {args.fold}"] = {
            "with": fold_feedback(x, y, groups, qids, quotes, base, l2, model, pen, args.k, args.m),
            "without": loo(x, y, groups, qids, model, pen)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
