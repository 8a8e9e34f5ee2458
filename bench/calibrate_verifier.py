"""Calibrate the verifier's support threshold (agent.verify.SUPPORT_MIN) on SciFact, report held out.

    .venv/bin/python bench/calibrate_verifier.py [--limit N] [--json out.json]

What is scored is what the verifier scores: an answer sentence (the SciFact claim) against
its quoted evidence (sentences of the cited abstract) plus the document title, with
agent.verify.support_score (key-term coverage + embedding similarity).

- positive: a SUPPORT claim against its rationale sentences (the evidence a model would cite);
- negative (not supported): an NEI claim against the cited abstract's sentence that scores
  highest for it (the most tempting quote: what a model that cites the nearest sentence
  would cite).
- CONTRADICT claims against their rationale sentences are scored and reported, not fitted:
  a support score measures whether a quote speaks to a sentence, not whether it agrees
  (SciFact's contradictions are mostly paraphrases with no surface cue); the number and name
  checks catch some of them, which the full-gate figures show.

`--relevance` calibrates the other threshold, agent.verify.relevance.RELEVANCE_MIN (is an
answer sentence's evidence about what the question asks?), on devbench, which has questions (SciFact has
none): correct pairs are bench/verifier_false_drops.py's (each sentence of a reference answer
with its gold quotes, and each gold sentence copied); off-topic pairs are the same pairs asked
with another question about the same paper (a supported sentence that answers another
question). The threshold is the highest that drops at most --max-false-drop of the
calibration half's correct pairs; both halves are reported.

Claims are split as in bench/calibrate_auditor.py (claim id % 5: 0,1,2 calibrate; 3,4 held
out). The threshold maximises balanced accuracy (SUPPORT vs NEI) on the calibration split
among thresholds whose NEI false-accept rate there is at most --max-false-accept (a verifier
errs on the side of dropping). The full gate (support score + the number and name checks of
agent.verify.support) is reported too, on both splits, with the acceptance rate per gold
label and a threshold curve on the held-out split. `--cache` keeps the scores, so the fit
can be re-run without embedding again (the embedding takes ~20 minutes on a busy 2-core box).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from _shared_data import SHARED

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = SHARED / "scifact"


def _items(limit: int) -> list[dict]:
    claims = [json.loads(line) for line in (DATA / "claims_train_labeled.jsonl").open()]
    if limit:
        claims = claims[:limit]
    needed = {c["cited_doc_ids"][0] for c in claims if c["cited_doc_ids"]}
    corpus = {}
    for line in (DATA / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        if row["doc_id"] in needed:
            corpus[row["doc_id"]] = row
    items = []
    for c in claims:
        if not c["cited_doc_ids"] or c["cited_doc_ids"][0] not in corpus:
            continue
        doc = corpus[c["cited_doc_ids"][0]]
        ev = c["evidence"].get(str(doc["doc_id"])) or []
        rationale = sorted({i for e in ev for i in e["sentences"]})
        items.append({"id": c["id"], "claim": c["claim"], "label": c["label"], "title": doc["title"],
                      "sentences": doc["sentences"], "rationale": rationale})
    return items


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="use only the first N claims (CI size)")
    parser.add_argument("--max-false-accept", type=float, default=0.2)
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    parser.add_argument("--cache", type=Path, default=None, help="scores cache (JSON): read if present, else written")
    parser.add_argument("--relevance", action="store_true", help="calibrate RELEVANCE_MIN on devbench instead")
    parser.add_argument("--max-false-drop", type=float, default=0.05, help="--relevance: on the calibration half")
    args = parser.parse_args()
    if args.relevance:
        _relevance(args)
        return
    if args.cache and args.cache.exists():
        rows, seconds = [tuple(r) for r in json.loads(args.cache.read_text())], 0.0
    else:
        rows, seconds = _score(args.limit)
        if args.cache:
            args.cache.write_text(json.dumps(rows))
    _report(rows, seconds, args)


def _score(limit: int) -> tuple[list[tuple], float]:

    import numpy as np

    from agent import verify
    from agent.local.embed import cached
    from knowledge.embeddings import get_embedder

    embed = cached(get_embedder("local").embed)
    t0 = time.perf_counter()
    items = _items(limit)
    # Embed every claim and sentence once (the support score re-embeds joined quotes, cached).
    embed([it["claim"] for it in items] + [s for it in items for s in it["sentences"]])
    rows = []  # (claim id, gold supported?, label, score, gate ok)
    for it in items:
        if it["label"] == "NEI":
            vecs = embed([it["claim"], *it["sentences"]])
            sims = vecs[1:] @ vecs[0]
            quotes = [it["sentences"][int(np.argmax(sims))]]
        else:
            if not it["rationale"]:
                continue
            quotes = [it["sentences"][i] for i in it["rationale"] if i < len(it["sentences"])]
        evidence = " ".join(quotes)
        score = verify.support_score(it["claim"], evidence, context=it["title"], embed=embed)
        gate = verify.support(it["claim"], quotes, context=it["title"], embed=embed, support_min=-1.0)
        rows.append((it["id"], it["label"] == "SUPPORT", it["label"], score, gate.ok))
    return rows, time.perf_counter() - t0


def _report(rows: list[tuple], seconds: float, args: argparse.Namespace) -> None:
    calib = [r for r in rows if r[0] % 5 in (0, 1, 2)]
    held = [r for r in rows if r[0] % 5 in (3, 4)]

    def rates(rs: list, t: float, *, gate: bool = False) -> dict:
        def accept(r: tuple) -> bool:
            return r[3] >= t and (r[4] or not gate)

        pos = [r for r in rs if r[2] == "SUPPORT"]
        neg = [r for r in rs if r[2] == "NEI"]
        tpr = sum(accept(r) for r in pos) / max(len(pos), 1)
        far = sum(accept(r) for r in neg) / max(len(neg), 1)
        by_label = {lab: round(sum(accept(r) for r in rs if r[2] == lab) / max(sum(r[2] == lab for r in rs), 1), 3)
                    for lab in ("SUPPORT", "NEI", "CONTRADICT")}
        return {"n": len(rs), "accept_supported": round(tpr, 3), "accept_unsupported": round(far, 3),
                "balanced_accuracy": round((tpr + 1 - far) / 2, 3), "accept_rate_by_gold_label": by_label}

    grid = [x / 100 for x in range(30, 91)]
    feasible = [t for t in grid if rates(calib, t)["accept_unsupported"] <= args.max_false_accept] or grid
    best = max(feasible, key=lambda t: (rates(calib, t)["balanced_accuracy"], -t))
    report = {
        "claims_scored": len(rows), "calibration": len(calib), "held_out": len(held),
        "SUPPORT_MIN": best, "max_false_accept": args.max_false_accept,
        "score_only": {"calibration": rates(calib, best), "held_out": rates(held, best)},
        "full_gate_numbers_names_and_score": {"calibration": rates(calib, best, gate=True),
                                              "held_out": rates(held, best, gate=True)},
        "held_out_curve(threshold: accept SUPPORT/NEI/CONTRADICT, full gate)": {
            f"{t:.2f}": "/".join(str(v) for v in rates(held, t, gate=True)["accept_rate_by_gold_label"].values())
            for t in (0.45, 0.5, 0.55, 0.6, 0.65, 0.7)},
        "seconds": round(seconds, 1),
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


def _relevance_rows(split: str, embed) -> list[dict]:
    """Correct and off-topic (question, sentence, quotes) rows of one devbench half, scored."""
    from agent.verify.relevance import relevance
    from bench.verifier_false_drops import devbench_pairs

    pairs = devbench_pairs(split)
    copied = {(p["id"], q): {**p, "sentence": q, "quotes": [q]} for p in pairs for q in p["quotes"]}
    correct = pairs + list(copied.values())
    questions = {p["id"]: (p["question"], p["context"]) for p in correct}
    rows = [{**p, "kind": "correct"} for p in correct]
    for qid, (question, title) in questions.items():
        rows += [{**p, "id": qid, "question": question, "kind": "off-topic, same paper", "from": p["id"]}
                 for p in correct if p["context"] == title and p["id"] != qid]
    for r in rows:
        r["score"] = relevance(r["question"], r["quotes"], embed=embed)
    return rows


def _relevance(args: argparse.Namespace) -> None:
    from agent.local.embed import cached
    from knowledge.embeddings import get_embedder

    embed = cached(get_embedder("local").embed)
    t0 = time.perf_counter()
    halves = {split: _relevance_rows(split, embed) for split in ("calibration", "test")}
    correct = sorted(r["score"] for r in halves["calibration"] if r["kind"] == "correct")
    # The highest threshold that drops at most max_false_drop of the calibration half's correct pairs.
    allowed = int(args.max_false_drop * len(correct))
    best = round(correct[allowed] - 0.005, 2) if correct else 0.0
    while sum(s < best for s in correct) > allowed:
        best = round(best - 0.01, 2)

    def rates(rows: list[dict], t: float) -> dict:
        out = {}
        for kind in ("correct", "off-topic, same paper"):
            rs = [r for r in rows if r["kind"] == kind]
            out[kind] = {"pairs": len(rs), "dropped": sum(r["score"] < t for r in rs),
                         "dropped_rate": round(sum(r["score"] < t for r in rs) / max(len(rs), 1), 3)}
        return out

    report = {"RELEVANCE_MIN": best, "max_false_drop": args.max_false_drop,
              "calibration": rates(halves["calibration"], best), "held_out": rates(halves["test"], best),
              "held_out_curve(threshold: correct dropped / off-topic dropped)": {
                  f"{t:.2f}": "{} / {}".format(*(v["dropped_rate"] for v in rates(halves["test"], t).values()))
                  for t in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35)},
              "seconds": round(time.perf_counter() - t0, 1)}
    text = json.dumps(report, indent=1)
    print(text)
    for r in halves["test"]:
        if r["kind"] == "correct" and r["score"] < best:
            print(f"  held-out correct dropped {r['id']} {r['score']:.2f}: {r['sentence'][:100]!r}")
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
