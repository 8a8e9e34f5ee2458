"""Calibrate the local auditor's thresholds on SciFact and report held-out accuracy.

    .venv/bin/python bench/calibrate_auditor.py [--limit N]

Claims are split deterministically (claim id % 5: 0,1,2 calibrate; 3,4 held out). For each
claim the evidence is its first cited abstract; the decision is agent.local.scoring.verify_claim.
Prints the best constants (copy them into agent/local/scoring.py) and the held-out accuracy.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "data" / "scifact"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="use only the first N claims (CI size)")
    args = parser.parse_args()
    from agent.local.embed import get_embed
    from agent.local.scoring import score_sentences

    claims = [json.loads(line) for line in (DATA / "claims_train_labeled.jsonl").open()]
    if args.limit:
        claims = claims[: args.limit]
    corpus = {}
    needed = {c["cited_doc_ids"][0] for c in claims if c["cited_doc_ids"]}
    for line in (DATA / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        if row["doc_id"] in needed:
            corpus[row["doc_id"]] = row["sentences"]
    embed = get_embed()
    t0 = time.perf_counter()
    items = []
    for c in claims:
        doc = c["cited_doc_ids"][0] if c["cited_doc_ids"] else None
        sents = corpus.get(doc, [])
        if not sents:
            continue
        items.append((c, sents))
    claim_vecs = embed([c["claim"] for c, _ in items])
    all_sents = [s for _, sents in items for s in sents]
    sent_vecs = embed(all_sents)
    embed_s = time.perf_counter() - t0
    # Precompute per-claim scores for each coverage weight, then grid the thresholds.
    weights = [0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8]
    pos = 0
    per_item = []
    for (c, sents), cv in zip(items, claim_vecs):
        vecs = sent_vecs[pos : pos + len(sents)]
        pos += len(sents)
        per_item.append((c, {w: score_sentences(c["claim"], cv, sents, vecs, w_coverage=w) for w in weights}))

    def decide(scores, support_min, contradict_min, margin=0.05):
        best = max(scores, key=lambda s: s.support)
        if best.support < min(support_min, contradict_min):
            return "NEI"
        rel = [s for s in scores if s.support >= contradict_min and s.contradiction]
        if rel and max(rel, key=lambda s: s.support).support >= best.support - margin:
            return "CONTRADICT"
        return "SUPPORT" if best.support >= support_min else "NEI"

    calib = [(c, s) for c, s in per_item if c["id"] % 5 in (0, 1, 2)]
    held = [(c, s) for c, s in per_item if c["id"] % 5 in (3, 4)]

    def accuracy(rows, w, smin, cmin):
        return sum(decide(s[w], smin, cmin) == c["label"] for c, s in rows) / max(len(rows), 1)

    grid = [x / 100 for x in range(30, 81, 2)]
    best = max(
        itertools.product(weights, grid, grid),
        key=lambda p: (accuracy(calib, *p), -abs(p[1] - 0.55)),
    )
    w, smin, cmin = best
    preds = Counter((c["label"], decide(s[w], smin, cmin)) for c, s in held)
    majority = Counter(c["label"] for c, _ in held).most_common(1)[0]
    print(json.dumps({
        "claims": len(per_item), "calibration": len(calib), "held_out": len(held),
        "W_COVERAGE": w, "SUPPORT_MIN": smin, "CONTRADICT_MIN": cmin,
        "calibration_accuracy": round(accuracy(calib, w, smin, cmin), 3),
        "held_out_accuracy": round(accuracy(held, w, smin, cmin), 3),
        "held_out_majority_baseline": round(majority[1] / len(held), 3),
        "held_out_confusion(gold,pred)": {f"{g}->{p}": n for (g, p), n in sorted(preds.items())},
        "embed_seconds": round(embed_s, 1),
    }, indent=1))


if __name__ == "__main__":
    main()
