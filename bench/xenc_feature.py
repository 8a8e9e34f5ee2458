"""Measure a trained cross-encoder (bench/train_cross_encoder.py) as a feature of answer-sentence
selection, on calibration rows only (docs/benchmarks.md, "A cross-encoder trained on SciFact
(stop 30)"). First cache the rows with main's code:

    nice -n 10 .venv/bin/python bench/calibrate_selection.py --var var/bench-blind --collection blind \
        --sets devbench,in_domain --fit-only
    nice -n 10 .venv/bin/python bench/xenc_feature.py --rows var/bench-blind/selection_rows_blind_devbench-in_domain.npz \
        --model var/xenc/xenc.int8.onnx --features similarity,idf_coverage,...

Scores every (fact, candidate) pair of the rows with onnxruntime and the tokenizers package (no
torch), then reports top-1 of the facts with a gold candidate and the MRR of the first gold
candidate: the cross-encoder alone, the fitted model leave-one-question-out
(calibrate_selection._leave_one_out / fit) without and with the score appended (raw, and
rescaled to the spread of `similarity`), and the cross-encoder in place of `similarity`.
Also the time per pair and per question of 20 candidates.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent))


class Scorer:
    """(need, sentence) -> score with the int8 ONNX cross-encoder."""

    def __init__(self, model: str, tokenizer: str, max_len: int = 96, threads: int = 1) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        self.session = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
        self.tok = Tokenizer.from_file(tokenizer)
        self.tok.no_padding()
        self.tok.no_truncation()
        self.tok.enable_truncation(max_len, strategy="longest_first")
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def __call__(self, need: str, sentences: list[str]) -> np.ndarray:
        if not sentences:
            return np.zeros(0)
        enc = self.tok.encode_batch([(need, s) for s in sentences])
        feed = {"input_ids": np.array([e.ids for e in enc], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64)}
        return self.session.run(["score"], feed)[0].astype(np.float64)


def ranking(x, y, groups, w) -> tuple[int, float, int]:
    hits, rr, n = 0, 0.0, 0
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        if not y[idx].any():
            continue
        order = idx[np.argsort(-(x[idx] @ w), kind="stable")]
        n += 1
        hits += y[order[0]] > 0
        rr += 1.0 / (1 + int(np.flatnonzero(y[order] > 0)[0]))
    return int(hits), round(rr / max(n, 1), 3), n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--tokenizer", default="")
    parser.add_argument("--features", required=True, help="the features the shipped fit chose, comma-separated")
    parser.add_argument("--l2", default="0.01,0.1")
    parser.add_argument("--cache", default="")
    args = parser.parse_args()
    import calibrate_selection as cs

    from agent.local.selection import FEATURES

    data = np.load(args.rows, allow_pickle=True)
    qids, fidx, x, y, quotes = data["qids"], data["fidx"], data["x"], data["y"], data["quotes"]
    groups = np.array([f"{q}/{f}" for q, f in zip(qids, fidx)])
    pairs = [str(s).split(" || ", 1) for s in quotes]
    cache = Path(args.cache) if args.cache else None
    tokenizer = args.tokenizer or str(Path(args.model).parent / "tokenizer.json")
    scorer = Scorer(args.model, tokenizer)
    if cache and cache.exists():
        score = np.load(cache)
    else:
        score = np.zeros(len(pairs))
        by_need: dict[str, list[int]] = {}
        for i, (need, _) in enumerate(pairs):
            by_need.setdefault(need, []).append(i)
        start = time.time()
        for need, idx in by_need.items():
            for b in range(0, len(idx), 32):
                part = idx[b:b + 32]
                score[part] = scorer(need, [pairs[i][1] for i in part])
        per_pair = (time.time() - start) / len(pairs) * 1000
        print(f"scored {len(pairs)} pairs, {per_pair:.1f} ms a pair", file=sys.stderr)
        if cache:
            np.save(cache, score)
    # Timing of one question's 20 candidates, as the auditor would score them.
    sample = [p[1] for p in pairs[:20]]
    t = []
    for _ in range(5):
        start = time.time()
        scorer(pairs[0][0], sample)
        t.append((time.time() - start) * 1000)
    sim = FEATURES.index("similarity")
    scaled = (score - score.mean()) / (score.std() + 1e-9) * x[:, sim].std() + x[:, sim].mean()
    names = args.features.split(",")
    cols = [FEATURES.index(n) for n in names]
    out = {"candidates": len(y), "facts": ranking(x, y, groups, np.eye(x.shape[1])[sim])[2],
           "ms_20_candidates (median of 5)": round(float(np.median(t)), 1),
           "similarity alone": ranking(x, y, groups, np.eye(x.shape[1])[sim])[:2],
           "xenc alone": ranking(score[:, None], y, groups, np.ones(1))[:2],
           "corr(xenc, similarity)": round(float(np.corrcoef(score, x[:, sim])[0, 1]), 3)}
    xa = np.hstack([x, score[:, None]])
    xs = np.hstack([x, scaled[:, None]])
    n = x.shape[1]
    no_sim = [c for c in cols if c != sim]
    for l2 in map(float, args.l2.split(",")):
        def loo(xx, cc, l2=l2):
            h, r, t = cs._leave_one_out(xx, y, groups, qids, lambda tr: cs.fit(xx[tr], y[tr], groups[tr], cc, l2)[0])
            return h, round(r / max(t, 1), 3)
        out[f"L2 {l2}: fitted, leave-one-question-out"] = loo(x, cols)
        out[f"L2 {l2}: + xenc raw"] = loo(xa, [*cols, n])
        out[f"L2 {l2}: + xenc rescaled"] = loo(xs, [*cols, n])
        out[f"L2 {l2}: xenc rescaled in place of similarity"] = loo(xs, [*no_sim, n])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
