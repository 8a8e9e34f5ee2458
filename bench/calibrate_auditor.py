"""Calibrate the local auditor's support and contradiction thresholds on SciFact, and report
them on claims calibration never saw.

    .venv/bin/python bench/calibrate_auditor.py [--limit N]

Split (agent.local.calibration.scifact_split, declared in code): labelled train claims with
id % 5 in {0,1,2} calibrate, {3,4} are held out. Two measurements:

1. Three-way claim verification over the claim's first cited abstract
   (agent.local.scoring.verify_claim): the grid chooses w_coverage, support_min and
   contradict_min on the calibration claims; accuracy is reported on the held-out ones.
2. Contradiction detection on the gold rationale sentences: for each SUPPORT or CONTRADICT
   claim, does agent.local.contradiction find a cue between the claim and its rationale
   sentences (with the abstract's own siblings)? The relevance threshold a contradicting
   sentence needs (AuditorParams.premise_contradict_min) is chosen on calibration claims
   (F1 of CONTRADICT against SUPPORT); precision and recall are reported on held-out ones.

Prints JSON: the chosen values (AuditorParams' defaults cite them) and the held-out figures.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import Counter
from pathlib import Path

from _shared_data import SHARED

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = SHARED / "scifact"


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="use only the first N claims (CI size)")
    args = parser.parse_args()
    from agent.local.calibration import CALIBRATION, scifact_split
    from agent.local.contradiction import siblings
    from agent.local.embed import get_embed
    from agent.local.scoring import score_sentences, verify_claim

    claims = [json.loads(line) for line in (DATA / "claims_train_labeled.jsonl").open()]
    if args.limit:
        claims = claims[: args.limit]
    needed = {c["cited_doc_ids"][0] for c in claims if c["cited_doc_ids"]}
    corpus = {}
    for line in (DATA / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        if row["doc_id"] in needed:
            corpus[row["doc_id"]] = row["sentences"]
    embed = get_embed()
    t0 = time.perf_counter()
    items = [(c, corpus[c["cited_doc_ids"][0]]) for c in claims
             if c["cited_doc_ids"] and corpus.get(c["cited_doc_ids"][0])]
    claim_vecs = embed([c["claim"] for c, _ in items])
    sent_vecs = embed([s for _, sents in items for s in sents])
    embed_s = time.perf_counter() - t0

    weights = [0.3, 0.4, 0.5, 0.6]
    pos = 0
    per_item = []
    for (c, sents), cv in zip(items, claim_vecs):
        vecs = sent_vecs[pos: pos + len(sents)]
        pos += len(sents)
        sib = siblings(sents)
        per_item.append((c, sents, {w: score_sentences(c["claim"], cv, sents, vecs, w_coverage=w, cues=True,
                                                       sibling_map=sib) for w in weights}))
    calib = [row for row in per_item if scifact_split(row[0]["id"]) == CALIBRATION]
    held = [row for row in per_item if scifact_split(row[0]["id"]) != CALIBRATION]

    # 1. Three-way verification.
    def accuracy(rows, w, smin, cmin):
        return sum(verify_claim(s[w], support_min=smin, contradict_min=cmin) == c["label"]
                   for c, _, s in rows) / max(len(rows), 1)

    grid = [x / 100 for x in range(30, 81, 2)]
    w, smin, cmin = max(itertools.product(weights, grid, grid),
                        key=lambda p: (accuracy(calib, *p), -abs(p[1] - 0.55)))
    confusion = Counter((c["label"], verify_claim(s[w], support_min=smin, contradict_min=cmin))
                        for c, _, s in held)
    majority = Counter(c["label"] for c, _, _ in held).most_common(1)[0]

    # 2. Contradiction cues on the gold rationale sentences, by relevance threshold.
    def rationale_cue(row, threshold: float) -> bool:
        c, sents, scores = row
        idx = {i for ev in c["evidence"].values() for e in ev for i in e["sentences"]}
        return any(scores[w][i].contradiction and scores[w][i].support >= threshold for i in idx if i < len(sents))

    def cue_counts(rows, threshold: float) -> tuple[int, int, int, int]:
        tp = fp = fn = tn = 0
        for row in rows:
            label = row[0]["label"]
            if label == "NEI":
                continue
            hit = rationale_cue(row, threshold)
            tp += hit and label == "CONTRADICT"
            fp += hit and label == "SUPPORT"
            fn += not hit and label == "CONTRADICT"
            tn += not hit and label == "SUPPORT"
        return tp, fp, fn, tn

    thresholds = [x / 100 for x in range(20, 81, 5)]
    best_t = max(thresholds, key=lambda t: (_f1(*cue_counts(calib, t)[:3]), -t))
    tp, fp, fn, tn = cue_counts(held, best_t)
    cue_kinds = Counter(s[w][i].contradiction for c, sents, s in held if c["label"] == "CONTRADICT"
                        for ev in c["evidence"].values() for e in ev for i in e["sentences"]
                        if i < len(sents) and s[w][i].contradiction)
    print(json.dumps({
        "claims": len(per_item), "calibration": len(calib), "held_out": len(held),
        "w_coverage": w, "support_min": smin, "contradict_min": cmin,
        "calibration_accuracy": round(accuracy(calib, w, smin, cmin), 3),
        "held_out_accuracy": round(accuracy(held, w, smin, cmin), 3),
        "held_out_majority_baseline": round(majority[1] / len(held), 3),
        "held_out_confusion(gold->pred)": {f"{g}->{p}": n for (g, p), n in sorted(confusion.items())},
        "premise_contradict_min": best_t,
        "held_out_rationale_cues": {"contradict_flagged": tp, "contradict_missed": fn, "support_flagged": fp,
                                    "support_clear": tn,
                                    "precision": round(tp / (tp + fp), 3) if tp + fp else None,
                                    "recall": round(tp / (tp + fn), 3) if tp + fn else None},
        "held_out_cue_kinds_on_contradictions": dict(cue_kinds),
        "embed_seconds": round(embed_s, 1),
    }, indent=1))


if __name__ == "__main__":
    main()
