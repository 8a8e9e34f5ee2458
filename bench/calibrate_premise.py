"""Fit the local auditor's premise classifier (agent.local.entailment) on SciFact calibration
claims, and report it on claims calibration never saw.

    .venv/bin/python bench/calibrate_premise.py [--limit N] [--out var/premise_fit.json]

Data: every labelled SciFact train claim against every sentence of every abstract it cites.
A sentence is CONTRADICT or SUPPORT when it is a gold rationale of that label for the
claim, NEUTRAL otherwise (same abstract, on topic, but neither). Split: claims with
id % 5 in {0,1,2} calibrate, {3,4} are held out (agent.local.calibration.scifact_split).

On the calibration claims only:
1. the L2 strength, and whether the embedding block (|u-v|, u*v) is used, are chosen by
   5-fold cross-validation grouped by claim (log loss of the out-of-fold probabilities);
2. the softmax is refitted on all calibration claims;
3. the probability a premise needs to be called false (AuditorParams.premise_false_min)
   is chosen on the out-of-fold probabilities, claim by claim as the auditor decides (the
   claim is flagged when some sentence with relevance >= premise_contradict_min has
   P(CONTRADICT) >= the threshold): the highest F0.5 of CONTRADICT claims against SUPPORT
   and NEI ones (precision weighs more: a wrong correction of a true premise costs more
   than a missed one, which the loop still refuses to assume).

Held out, before (the surface cues alone) and after (the classifier):
- rationale level (as bench/calibrate_auditor.py): SUPPORT/CONTRADICT claims, flagged when
  one of their gold rationale sentences is;
- claim level: every sentence of the cited abstracts, NEI claims included.

With --synthetic N, pairs synthesised from N SciFact corpus abstracts that no labelled claim
cites (agent.local.entailment.synthetic_pairs: a clause against its sentence is SUPPORT,
the clause with one name/number/noun swapped for a rival from the same abstract is
CONTRADICT, the clause against the closest sentence of another abstract is NEUTRAL) join
every training fold and the final fit, weighing SYNTH_WEIGHTS times the real pairs' total
weight: the largest weight whose out-of-fold log loss on the real calibration pairs is
within SYNTH_LOSS_SLACK of none's is kept. Half of the N abstracts are kept apart to report
how well the fit tells swapped from faithful clauses on abstracts it never saw.

Prints JSON; with --write, rewrites the fitted fields in agent/local/premise_params.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from _shared_data import SHARED

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = SHARED / "scifact"
CACHE = ROOT / "var" / "premise_scifact_vecs.npz"
# Most questions a portal gets have a true premise, so a false alarm (a true premise
# "corrected") costs more than a miss (which the loop still does not assume): the
# classifier may flag at most this share of the non-CONTRADICT calibration claims beyond
# what the surface cues already flag.
FALSE_ALARM_BUDGET = 0.02
SYNTH_WEIGHTS = (0.0, 0.1, 0.25, 0.5, 1.0)
SYNTH_LOSS_SLACK = 0.01  # relative


def load(limit: int):
    claims = [json.loads(line) for line in (DATA / "claims_train_labeled.jsonl").open()]
    if limit:
        claims = claims[:limit]
    needed = {d for c in claims for d in c["cited_doc_ids"]}
    corpus = {}
    for line in (DATA / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        if row["doc_id"] in needed:
            corpus[row["doc_id"]] = (row["title"], row["sentences"])
    return claims, corpus


def load_synthetic(n: int, claims_file: Path = DATA / "claims_train_labeled.jsonl"):
    """N abstracts of the corpus that no labelled claim cites (so neither a calibration nor
    a held-out claim sees them), in corpus order, as {doc: (title, sentences)}."""
    cited = {d for line in claims_file.open() for d in json.loads(line)["cited_doc_ids"]}
    out = {}
    for line in (DATA / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        if row["doc_id"] not in cited and len(row["sentences"]) >= 4:
            out[row["doc_id"]] = (row["title"], row["sentences"])
            if len(out) >= n:
                break
    return out


def synthetic_rows(pairs, abstracts, vecs):
    """Feature rows and labels of synthetic pairs, the evidence read in its abstract as the
    auditor reads a candidate (the sentence before and the title as context, the abstract's
    listed siblings)."""
    from agent.local.contradiction import siblings
    from agent.local.entailment import CLASSES, design

    sib = {d: siblings(sents) for d, (_, sents) in abstracts.items()}
    rows = []
    for p in pairs:
        title, sents = abstracts[p.doc]
        context = f"{sents[p.index - 1] if p.index else ''} {title}"
        rows.append(design(p.premise, vecs[p.premise], [p.evidence], vecs[p.evidence][None, :],
                           contexts=[context], sibling_map=sib[p.doc]))
    return np.vstack(rows), np.array([CLASSES.index(p.label) for p in pairs])


def vectors(texts: list[str]) -> dict[str, np.ndarray]:
    """Embeddings of the texts, cached in var/ across runs (the model is the auditor's)."""
    from agent.local.embed import get_embed

    known: dict[str, np.ndarray] = {}
    if CACHE.exists():
        data = np.load(CACHE, allow_pickle=True)
        known = dict(zip(data["texts"].tolist(), data["vecs"]))
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        vecs = get_embed()(missing)
        known.update(zip(missing, vecs))
        CACHE.parent.mkdir(exist_ok=True)
        np.savez_compressed(CACHE, texts=np.array(list(known), dtype=object), vecs=np.vstack(list(known.values())))
    return known


def build(claims, corpus, vecs):
    """Feature rows (scalar features, and the embedding block separately) of every (claim,
    abstract sentence) pair, with labels, claim groups, relevance, cue flags, gold flags."""
    from agent.local.contradiction import siblings
    from agent.local.entailment import CLASSES, CUES, FEATURES, design, embedding_block
    from agent.local.text import content_terms, coverage, term_set

    rows, blocks, labels, groups, relevance, cues, gold = [], [], [], [], [], [], []
    for c in claims:
        cvec = vecs[c["claim"]]
        terms = content_terms(c["claim"])
        for doc in c["cited_doc_ids"]:
            if doc not in corpus:
                continue
            title, sents = corpus[doc]
            rationale: dict[int, str] = {}
            for ev in c["evidence"].get(str(doc), []):
                for i in ev["sentences"]:
                    rationale[i] = ev["label"]
            svecs = np.vstack([vecs[s] for s in sents])
            contexts = [f"{sents[i - 1] if i else ''} {title}" for i in range(len(sents))]
            sib = siblings(sents)
            x = design(c["claim"], cvec, sents, svecs, contexts=contexts, sibling_map=sib)
            rows.append(x)
            blocks.append(embedding_block(cvec, svecs).astype(np.float32))
            for i, s in enumerate(sents):
                labels.append(CLASSES.index(rationale.get(i, "NEUTRAL")))
                groups.append(c["id"])
                # The auditor's relevance of a sentence to the premise (w_coverage 0.5).
                sim = float(svecs[i] @ cvec)
                relevance.append(max(0.5 * coverage(terms, term_set(s)) + 0.5 * sim,
                                     0.5 * coverage(terms, term_set(s) | term_set(contexts[i])) + 0.5 * sim))
                cues.append(any(x[i, FEATURES.index(f"cue_{k}")] for k in CUES))
                gold.append(i in rationale)
    return (np.vstack(rows), np.vstack(blocks), np.array(labels), np.array(groups), np.array(relevance),
            np.array(cues), np.array(gold))


def standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-9] = 1.0
    return mean, scale


def class_weights(y: np.ndarray) -> np.ndarray:
    """Each class weighs as much in total as the others (NEUTRAL pairs are ~20x the rest)."""
    counts = np.bincount(y, minlength=3).astype(float)
    return (len(y) / (3 * np.maximum(counts, 1)))[y]


def training_weights(y: np.ndarray, y_extra: np.ndarray | None, share: float) -> np.ndarray:
    """Class-balanced weights of the real rows, then of the extra (synthetic) rows scaled so
    that they weigh `share` times the real rows in total."""
    w = class_weights(y)
    if y_extra is None or not len(y_extra):
        return w
    return np.concatenate([w, class_weights(y_extra) * share * len(y) / len(y_extra)])


def fit(x, y, l2, extra=None, share=0.0):
    """Standardise and fit on the real rows plus (x_extra, y_extra) weighing `share`."""
    from agent.local.entailment import fit_softmax

    if extra is not None and share > 0:
        xa, ya = np.vstack([x, extra[0]]), np.concatenate([y, extra[1]])
        weights = training_weights(y, extra[1], share)
    else:
        xa, ya, weights = x, y, class_weights(y)
    mean, scale = standardise(xa)
    w, b = fit_softmax((xa - mean) / scale, ya, l2=l2, sample_weight=weights)
    return w, b, mean, scale


def out_of_fold(x, y, groups, l2, folds=5, extra=None, share=0.0):
    from agent.local.entailment import probabilities

    ids = np.unique(groups)
    fold_of = {g: i % folds for i, g in enumerate(ids)}
    fold = np.array([fold_of[g] for g in groups])
    p = np.zeros((len(y), 3))
    for k in range(folds):
        train, test = fold != k, fold == k
        w, b, mean, scale = fit(x[train], y[train], l2, extra, share)
        p[test] = probabilities(x[test], w, b, mean=mean, scale=scale)
    return p


def log_loss(p, y, weights):
    return float(-(weights * np.log(np.clip(p[np.arange(len(y)), y], 1e-12, 1))).sum() / weights.sum())


def auc(score: np.ndarray, positive: np.ndarray) -> float | None:
    """Probability that a positive outscores a negative (ties count half)."""
    pos, neg = score[positive], score[~positive]
    if not len(pos) or not len(neg):
        return None
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return round(float(wins / (len(pos) * len(neg))), 3)


def claim_flags(flag_pair: np.ndarray, groups: np.ndarray) -> dict[int, bool]:
    out: dict[int, bool] = {}
    for g, f in zip(groups, flag_pair):
        out[g] = out.get(g, False) or bool(f)
    return out


def counts(flags: dict[int, bool], label_of: dict[int, str], *, kinds=("SUPPORT", "NEI")) -> dict:
    tp = sum(f and label_of[g] == "CONTRADICT" for g, f in flags.items())
    fn = sum(not f and label_of[g] == "CONTRADICT" for g, f in flags.items())
    fp = sum(f and label_of[g] in kinds for g, f in flags.items())
    neg = sum(label_of[g] in kinds for g in flags)
    return {"contradict_flagged": tp, "contradict_missed": fn, "others_flagged": fp, "others": neg,
            "recall": round(tp / (tp + fn), 3) if tp + fn else None,
            "precision": round(tp / (tp + fp), 3) if tp + fp else None}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0, help="use only the first N claims (CI size)")
    parser.add_argument("--embedding", action="store_true",
                        help="also fit with the embedding block |u-v|, u*v (slow; held out it did not help)")
    parser.add_argument("--synthetic", type=int, default=0,
                        help="add pairs synthesised from this many uncited corpus abstracts (half to fit, half to report)")
    parser.add_argument("--synthetic-share", type=float, default=None,
                        help="force the synthetic pairs' weight (a diagnostic; default: chosen as described above)")
    parser.add_argument("--write", action="store_true", help="write the fitted parameters to the package")
    args = parser.parse_args()
    from agent.local.auditor import AuditorParams
    from agent.local.calibration import CALIBRATION, scifact_split
    from agent.local.entailment import CLASSES, probabilities

    t0 = time.perf_counter()
    claims, corpus = load(args.limit)
    vecs = vectors([c["claim"] for c in claims] + [s for _, sents in corpus.values() for s in sents])
    embed_s = time.perf_counter() - t0
    label_of = {c["id"]: c["label"] for c in claims}
    relevance_min = AuditorParams().premise_contradict_min
    results = {}
    fitted = {}
    scalar, block, y, groups, rel, cues, gold = build(claims, corpus, vecs)
    extra = extra_test = None
    if args.synthetic:
        from agent.local.entailment import synthetic_pairs

        abstracts = load_synthetic(args.synthetic)
        docs = sorted(abstracts)
        fit_docs = set(docs[::2])  # the odd ones are kept to report
        pairs = synthetic_pairs({d: sents for d, (_, sents) in abstracts.items()})
        vecs.update(vectors([t for p in pairs for t in (p.premise, p.evidence)]))
        xs, ys = synthetic_rows(pairs, abstracts, vecs)
        # A NEUTRAL pair's evidence comes from another abstract: split by the premise's.
        own = np.array([p.doc if p.label != "NEUTRAL" else next(
            q.doc for q in pairs if q.premise == p.premise and q.label == "SUPPORT") for p in pairs])
        in_fit = np.array([d in fit_docs for d in own])
        extra, extra_test = (xs[in_fit], ys[in_fit]), (xs[~in_fit], ys[~in_fit])
        results["synthetic_pairs"] = {"fit": dict(Counter(CLASSES[v] for v in ys[in_fit])),
                                      "report": dict(Counter(CLASSES[v] for v in ys[~in_fit]))}
    for embedding in (False, True) if args.embedding else (False,):
        x = np.hstack([scalar, block]) if embedding else scalar
        calib = np.array([scifact_split(int(g)) == CALIBRATION for g in groups])
        held = ~calib
        xc, yc, gc = x[calib], y[calib], groups[calib]
        grid = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3] if not embedding else [0.01, 0.03, 0.1, 0.3, 1.0]
        losses = {}
        oof = {}
        for l2 in grid:
            oof[l2] = out_of_fold(xc, yc, gc, l2)
            losses[l2] = log_loss(oof[l2], yc, class_weights(yc))
        l2 = min(grid, key=lambda v: losses[v])
        share = 0.0
        if extra is not None and not embedding:
            shares = {}
            for sh in SYNTH_WEIGHTS:
                p_sh = oof[l2] if sh == 0 else out_of_fold(xc, yc, gc, l2, extra=extra, share=sh)
                shares[sh] = (log_loss(p_sh, yc, class_weights(yc)), p_sh)
            share = max(sh for sh in SYNTH_WEIGHTS if shares[sh][0] <= (1 + SYNTH_LOSS_SLACK) * shares[0.0][0])
            if args.synthetic_share is not None:
                share = args.synthetic_share
                if share not in shares:
                    p_sh = out_of_fold(xc, yc, gc, l2, extra=extra, share=share)
                    shares[share] = (log_loss(p_sh, yc, class_weights(yc)), p_sh)
            oof[l2] = shares[share][1]
            results["synthetic_share"] = {"chosen": share, "real_oof_log_loss": {
                str(k): round(v[0], 4) for k, v in shares.items()}}
        # The threshold, on out-of-fold probabilities of the calibration claims.
        p_oof = oof[l2][:, CLASSES.index("CONTRADICT")]
        gate = rel[calib] >= relevance_min
        thresholds = [t / 100 for t in range(30, 100, 2)]

        # The auditor's rule: a relevant sentence with a surface cue, or with P(CONTRADICT) >= t.
        def claim_level(p, cue, gate, grp, t):
            return counts(claim_flags(((p >= t) | cue) & gate, grp), label_of)

        # The lowest threshold at which the classifier adds at most FALSE_ALARM_BUDGET of the
        # calibration claims that are not CONTRADICT as false alarms on top of the cues'.
        others = sum(label_of[g] != "CONTRADICT" for g in set(gc))
        cue_alarms = claim_level(p_oof, cues[calib], gate, gc, 2.0)["others_flagged"]
        t_best = min((t for t in thresholds if claim_level(p_oof, cues[calib], gate, gc, t)["others_flagged"]
                      - cue_alarms <= FALSE_ALARM_BUDGET * others), default=thresholds[-1])
        w, b, mean, scale = fit(xc, yc, l2, extra, share)
        p_held = probabilities(x[held], w, b, mean=mean, scale=scale)[:, CLASSES.index("CONTRADICT")]
        gh = groups[held]
        gate_h = rel[held] >= relevance_min
        no_cue = np.zeros(int(held.sum()), dtype=bool)

        def rationale(flags):
            return counts(claim_flags(flags & gold[held], gh), label_of, kinds=("SUPPORT",))

        name = "with_embedding" if embedding else "scalar"
        results[name] = {
            "l2": l2, "cv_log_loss": {str(k): round(v, 4) for k, v in losses.items()},
            "premise_false_min": t_best,
            "calibration_oof_claim_level": claim_level(p_oof, cues[calib], gate, gc, t_best),
            "held_out_claim_level": claim_level(p_held, cues[held], gate_h, gh, t_best),
            "held_out_claim_level_classifier_alone": claim_level(p_held, no_cue, gate_h, gh, t_best),
            "held_out_rationale_level": rationale((p_held >= t_best) | cues[held]),
            "held_out_rationale_level_classifier_alone": rationale(p_held >= t_best),
            # How well P(CONTRADICT) tells the held-out CONTRADICT rationales from SUPPORT ones.
            "held_out_auc_contradict_vs_support_rationales": auc(p_held[y[held] > 0], y[held][y[held] > 0] == 2),
        }
        if extra_test is not None and not embedding:
            # Abstracts the fit never saw: swapped clauses (CONTRADICT) against faithful ones.
            p_syn = probabilities(extra_test[0], w, b, mean=mean, scale=scale)[:, CLASSES.index("CONTRADICT")]
            cs = extra_test[1] > 0
            swapped = extra_test[1][cs] == 2
            results[name]["synthetic_report_abstracts"] = {
                "auc_swapped_vs_faithful": auc(p_syn[cs], swapped),
                "swapped_flagged": f"{int((p_syn[cs][swapped] >= t_best).sum())}/{int(swapped.sum())}",
                "faithful_flagged": f"{int((p_syn[cs][~swapped] >= t_best).sum())}/{int((~swapped).sum())}",
                "neutral_flagged": f"{int((p_syn[~cs] >= t_best).sum())}/{int((~cs).sum())}"}
        fitted[name] = (w, b, mean, scale, t_best, losses[l2])
        if not embedding:
            results["cues_before"] = {
                "held_out_claim_level": counts(claim_flags(cues[held] & gate_h, gh), label_of),
                "held_out_rationale_level": rationale(cues[held]),
                # The same on the calibration claims: what a change of the cues may be chosen on.
                "calibration_claim_level": counts(claim_flags(cues[calib] & gate, gc), label_of),
                "calibration_rationale_level": counts(claim_flags(cues[calib] & gold[calib], gc), label_of,
                                                      kinds=("SUPPORT",)),
            }
            results["pairs"] = {"calibration": int(calib.sum()), "held_out": int(held.sum()),
                                "labels_calibration": dict(Counter(CLASSES[v] for v in yc))}
            results["weights_scalar"] = {cls: dict(zip(
                __import__("agent.local.entailment", fromlist=["FEATURES"]).FEATURES,
                [round(float(v), 3) for v in w[k]])) for k, cls in enumerate(CLASSES)}
    results["claims"] = len(claims)
    results["embed_seconds"] = round(embed_s, 1)
    chosen = min(fitted, key=lambda k: fitted[k][5])
    results["chosen"] = chosen
    print(json.dumps(results, indent=1))
    if args.write:
        write(fitted[chosen], embedding=chosen == "with_embedding",
              synthetic=(args.synthetic, results.get("synthetic_share", {}).get("chosen", 0.0)))


def write(fit, *, embedding: bool, synthetic: tuple[int, float] = (0, 0.0)) -> None:
    w, b, mean, scale, t, _ = fit
    path = ROOT / "agent" / "local" / "premise_model.json"
    source = "bench/calibrate_premise.py on SciFact calibration claims (agent.local.calibration)"
    if synthetic[0] and synthetic[1]:
        source += f" + pairs synthesised from {synthetic[0] // 2} uncited abstracts at {synthetic[1]} of their weight"
    path.write_text(json.dumps({
        "fitted_by": source,
        "embedding": embedding, "premise_false_min": t,
        "weights": np.round(w, 5).tolist(), "bias": np.round(b, 5).tolist(),
        "mean": np.round(mean, 6).tolist(), "scale": np.round(scale, 6).tolist(),
    }) + "\n")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
