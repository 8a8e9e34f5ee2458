"""Conflicts the local auditor raises (agent.local.conflict), and whether a reader calls them real.

Run mode: asks one split of the question sets (local backend, agentic loop, collection
"blind") and writes one JSON line per run: its outcome, the conflicts of its last audit and
every pair whose contradiction cue fired (the answering sentence of a need against another
relevant sentence of another chunk), with what the conditions of agent.local.conflict need.

    nice -n 10 .venv/bin/python bench/conflicts.py run --split calibration --out /tmp/conflicts-cal.jsonl
    ... run --split test --sets blind2,blind3,blind,devbench --out /tmp/conflicts-test.jsonl
    ... run --params '{"conflict_answers_min": 0.3}'    # AuditorParams fields to override

Score mode: precision and recall of the conflict flag against the labels of
bench/conflict_labels.jsonl (one line per pair read: quote_a, quote_b, cue, real, why),
for the shipped AuditorParams and for a grid of the conflict_* fields (calibration dumps only):

    .venv/bin/python bench/conflicts.py score /tmp/conflicts-cal.jsonl [--grid] [--unlabelled]

A raised conflict is the first pair of a need whose conditions hold (what the auditor
reports); recall counts the needs with a real labelled pair that raise one.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from dataclasses import fields, replace
from pathlib import Path

import _devbench_common as common

SETS = {
    "qasper": "qasper_style_questions.jsonl", "in_domain": "in_domain_questions.jsonl",
    "blind": "blind/questions.jsonl", "blind2": "blind2/questions.jsonl", "blind3": "blind3/questions.jsonl",
}
LABELS = common.ROOT / "bench" / "conflict_labels.jsonl"


def _questions(sets: list[str], split: str, ready: set[str]) -> list[dict]:
    out = []
    for name in sets:
        if name == "devbench":
            out += [{**q, "set": name} for q in common.with_splits(common.load_questions())
                    if q["split"] == split and set(q["expected_doc_ids"]) <= ready]
            continue
        path = common.ROOT / "bench" / SETS[name]
        for line in path.open(encoding="utf-8"):
            if not line.strip():
                continue
            q = {**json.loads(line), "set": name}
            # bench/blind has no split: it is held out as a whole.
            if q.get("split", "test") != split:
                continue
            papers = ({d.removesuffix(".pdf") for d in q["documents"]} if "documents" in q else {q["paper"]})
            if papers <= ready:
                out.append(q)
    return out


def run(args: argparse.Namespace) -> None:
    common.django_setup(Path(args.var))
    from devbench import _MemoRetriever as MemoRetriever

    from agent.configs import build_roles, get_config
    from agent.local.auditor import LocalAuditor
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    trace: list[dict] = []
    audit, conflict = LocalAuditor.audit, LocalAuditor._conflict

    attempt = [0]

    def traced_audit(self, *a, **k):
        # Every audit's pairs are read; only the last audit's decide the run's answer.
        attempt[0] += 1
        before = len(trace)
        result = audit(self, *a, **k)
        for pair in trace[before:]:
            pair["attempt"] = attempt[0]
        return result

    def traced_conflict(self, *a, **k):
        return conflict(self, *a, **k, trace=trace)

    LocalAuditor.audit, LocalAuditor._conflict = traced_audit, traced_conflict
    cfg = get_config(args.config)
    collection = Collection.objects.get(slug=args.collection)
    ready = {n.removesuffix(".pdf") for n in
             collection.documents.filter(status="ready").values_list("original_name", flat=True)}
    questions = _questions(args.sets.split(","), args.split, ready)
    retriever = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.params or "{}").items()}
    with Path(args.out).open("w", encoding="utf-8") as out:
        for n, q in enumerate(questions, 1):
            roles = build_roles(cfg, "local", embed=portal_embed())
            if overrides:
                roles.auditor.params = replace(roles.auditor.params, **overrides)
            trace.clear()
            result = AgentLoop(cfg, roles, retriever, concurrent=False).run(q["question"])
            last = max((t["attempt"] for t in trace), default=0)
            for t in trace:
                t["final"] = t.pop("attempt") == last
            raised = [c.model_dump() for c in (result.audit.conflicts if result.audit else [])]
            out.write(json.dumps({
                "set": q["set"], "question_id": q["question_id"], "split": args.split, "question": q["question"],
                "outcome": result.answer.outcome.value, "answer": result.answer.text, "conflicts": raised,
                "pairs": list(trace),
            }) + "\n")
            out.flush()
            print(f"[{n}/{len(questions)}] {q['set']} {q['question_id']} {result.answer.outcome.value} "
                  f"conflicts={len(raised)} pairs={len(trace)}", file=sys.stderr, flush=True)


def _key(pair: dict) -> tuple[str, str]:
    return pair["quote_a"], pair["quote_b"]


def load_labels(path: Path = LABELS) -> dict[tuple[str, str], bool]:
    if not path.exists():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {_key(r): bool(r["real"]) for r in rows}


def evaluate(runs: list[dict], labels: dict[tuple[str, str], bool], params) -> dict:
    """Raised conflicts under `params` (the first pair of a need whose conditions hold), against the labels."""
    from agent.local.conflict import Pair, is_conflict

    names = {f.name for f in fields(Pair)}
    raised = real_raised = unlabelled = real_needs = 0
    runs_with = 0
    for r in runs:
        by_fact: dict[str, list[dict]] = {}
        for p in r["pairs"]:
            if p.get("final", True):
                by_fact.setdefault(p["fact"], []).append(p)
        any_raised = False
        for pairs in by_fact.values():
            real_needs += any(labels.get(_key(p)) for p in pairs)
            hit = next((p for p in pairs if is_conflict(Pair(**{k: p[k] for k in names}), p["cue"], params)), None)
            if hit is None:
                continue
            any_raised = True
            raised += 1
            label = labels.get(_key(hit))
            unlabelled += label is None
            real_raised += bool(label)
        runs_with += any_raised
    return {"raised": raised, "real": real_raised, "unlabelled": unlabelled, "real_needs": real_needs,
            "runs_with_conflict": runs_with,
            "precision": round(real_raised / raised, 3) if raised else None,
            "recall": round(real_raised / real_needs, 3) if real_needs else None}


GRID = {
    "conflict_answers_min": (0.0, 0.04, 0.08, 0.12, 0.2, 0.3),
    "conflict_jaccard_min": (0.0, 0.1, 0.15, 0.2, 0.25, 0.3),
    "conflict_number_jaccard": (0.5,),
    "conflict_same_names": (False, True),
}


def score(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(common.ROOT))
    from agent.local.auditor import AuditorParams

    runs = [json.loads(line) for line in Path(args.dump).read_text(encoding="utf-8").splitlines() if line.strip()]
    labels = load_labels()
    before = replace(AuditorParams(), conflict_answers_min=0.0, conflict_jaccard_min=0.0,
                     conflict_number_jaccard=0.5, conflict_same_names=False)
    print(json.dumps({"rule": "cue only (before)", **evaluate(runs, labels, before)}))
    print(json.dumps({"rule": "shipped", **evaluate(runs, labels, AuditorParams())}))
    if args.unlabelled:
        seen = set()
        for r in runs:
            for p in r["pairs"]:
                if _key(p) not in labels and _key(p) not in seen:
                    seen.add(_key(p))
                    print(json.dumps({"quote_a": p["quote_a"], "quote_b": p["quote_b"], "cue": p["cue"],
                                      "fact": p["fact"], "question_id": r["question_id"]}))
    if args.grid:
        rows = []
        for values in itertools.product(*GRID.values()):
            params = replace(AuditorParams(), **dict(zip(GRID, values)))
            res = evaluate(runs, labels, params)
            rows.append((dict(zip(GRID, values)), res))
        # Fewest wrong flags (raised, not real) plus real ones missed; ties to the least strict point.
        rows.sort(key=lambda r: ((r[1]["raised"] - r[1]["real"]) + (r[1]["real_needs"] - r[1]["real"]),
                                 sum(float(v) for v in r[0].values())))
        for point, res in rows[:15]:
            print(json.dumps({**point, **res}))


def scifact(args: argparse.Namespace) -> None:
    """SciFact calibration claims (agent.local.calibration.scifact_split) as pairs: the claim
    against each sentence of an abstract it cites whose cue fires; real = the sentence is gold
    CONTRADICT evidence (SUPPORT: they agree; NEUTRAL: another statement). No P(answers) here
    (set to 1): this checks the conditions on the two sentences alone."""
    sys.path.insert(0, str(common.ROOT))
    from premise_cue_diff import _pairs as scifact_pairs

    from agent.local.auditor import AuditorParams
    from agent.local.conflict import Pair, is_conflict, pair_cue

    rows = []
    for claim, sentence, gold in scifact_pairs():
        pair = Pair(fact=claim, quote_a=claim, quote_b=sentence)
        cue = pair_cue(pair)
        if cue:
            rows.append((pair, cue, gold))

    def tally(params) -> dict:
        out: dict[str, str] = {}
        for label in ("CONTRADICT", "SUPPORT", "NEUTRAL"):
            mine = [(p, c) for p, c, g in rows if g == label]
            out[label] = f"{sum(is_conflict(p, c, params) for p, c in mine)}/{len(mine)}"
        return out

    before = replace(AuditorParams(), conflict_jaccard_min=0.0, conflict_same_names=False)
    print(json.dumps({"rule": "cue only (before)", **tally(before)}))
    print(json.dumps({"rule": "shipped", **tally(AuditorParams())}))
    if args.grid:
        for jmin, names in itertools.product(GRID["conflict_jaccard_min"], GRID["conflict_same_names"]):
            params = replace(AuditorParams(), conflict_jaccard_min=jmin, conflict_same_names=names)
            print(json.dumps({"conflict_jaccard_min": jmin, "conflict_same_names": names, **tally(params)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    r = sub.add_parser("run")
    r.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    r.add_argument("--collection", default="blind")
    r.add_argument("--split", default="calibration", choices=("calibration", "test"))
    r.add_argument("--config", default="agentic")
    r.add_argument("--sets", default="devbench,blind2,blind3,qasper,in_domain")
    r.add_argument("--params", default="", help='AuditorParams fields to override, as JSON')
    r.add_argument("--out", required=True)
    s = sub.add_parser("score")
    s.add_argument("dump")
    s.add_argument("--grid", action="store_true")
    s.add_argument("--unlabelled", action="store_true", help="print the pairs not yet labelled")
    f = sub.add_parser("scifact")
    f.add_argument("--grid", action="store_true")
    args = parser.parse_args()
    {"run": run, "score": score, "scifact": scifact}[args.mode](args)


if __name__ == "__main__":
    main()
