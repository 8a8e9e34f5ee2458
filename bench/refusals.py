"""Refusals of the agentic loop (local backend) on one split: the questions of
bench/qasper_style_questions.jsonl (terse QASPER-style questions about one paper, "they" for
its authors, answerable with a stated evidence sentence or not answered by the paper),
bench/in_domain_questions.jsonl (about a named paper of the collection: unanswerable ones the
paper does not answer, answerable ones of the same form) and devbench's answerable and
out-of-scope questions.

    nice .venv/bin/python bench/refusals.py --var var/bench-blind --collection blind --split test
    ... --scope paper      # each QASPER-style question asked of a collection holding only its paper
    ... --sets qasper      # only that set (qasper, in_domain, devbench; comma-separated)
    ... --params '{"need_features": ["best_logit", "support", "focus_miss", "fit_gap"], ...}'

QASPER asks within one paper. With --scope paper each QASPER-style question goes to a
collection of the bench user that holds only its paper ("paper-<arXiv id>"), made through
the portal's own upload and ingestion the first time (a few seconds a paper); with
--scope collection (the default) to the whole collection. The other sets always go to the
whole collection.

Prints one line per question (id, expected, outcome) and a JSON tally per set: unanswerable
refused x/N (FALSE_PREMISE counted apart: it is not a refusal, and not an answer either),
answerable refused, devbench answerable refused y/M, out of scope answered z/K.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import _devbench_common as common

SETS = {"qasper": "qasper_style_questions.jsonl", "in_domain": "in_domain_questions.jsonl"}


def load_set(name: str) -> list[dict]:
    """One of the question files of SETS, each question marked with its set."""
    path = common.ROOT / "bench" / SETS[name]
    return [{**json.loads(line), "set": name} for line in path.open(encoding="utf-8") if line.strip()]


def paper_collection(stem: str):
    """The bench user's collection holding only the paper `stem` (made and ingested once)."""
    _, collection = common.collection_with_papers([stem], slug="paper-" + stem.split("_")[0].replace(".", "-"))
    return collection


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="test", choices=("calibration", "test"))
    parser.add_argument("--config", default="agentic")
    parser.add_argument("--sets", default="qasper,in_domain,devbench")
    parser.add_argument("--scope", default="collection", choices=("collection", "paper"),
                        help="what a QASPER-style question is asked of: the whole collection or its paper alone")
    parser.add_argument("--why", action="store_true", help="print each run's verdict reason and premise")
    parser.add_argument("--params", default="", help='AuditorParams fields to override, as JSON ({"need_min": 0.3})')
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from devbench import _MemoRetriever as MemoRetriever

    from agent.benchmark.metrics import spans_covered
    from agent.configs import build_roles, get_config
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    cfg = get_config(args.config)
    collection = Collection.objects.get(slug=args.collection)
    ready = {n.removesuffix(".pdf") for n in
             collection.documents.filter(status="ready").values_list("original_name", flat=True)}
    chosen = args.sets.split(",")
    questions = [q for name in SETS if name in chosen for q in load_set(name)
                 if q["paper"] in ready and q["split"] == args.split]
    if "devbench" in chosen:
        questions += [q for q in common.with_splits(common.load_questions()) if q["split"] == args.split
                      and q["expected_behavior"] in ("ANSWER", "REFUSE_OUT_OF_SCOPE")
                      and set(q["expected_doc_ids"]) <= ready]
    whole = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    own: dict[str, MemoRetriever] = {}
    overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.params or "{}").items()}
    outcomes: dict[str, Counter] = {}
    refused_answerable = []
    for q in questions:
        retriever = whole
        if args.scope == "paper" and q.get("set") == "qasper":
            if q["paper"] not in own:
                own[q["paper"]] = MemoRetriever(CollectionRetriever(paper_collection(q["paper"]),
                                                                    mode=cfg.retrieval_mode))
            retriever = own[q["paper"]]
        roles = build_roles(cfg, "local", embed=portal_embed())
        if overrides:
            roles.auditor.params = replace(roles.auditor.params, **overrides)
        loop = AgentLoop(cfg, roles, retriever, concurrent=False)
        result = loop.run(q["question"])
        outcome = result.answer.outcome.value
        why = ""
        if args.why and result.audit is not None:
            labels = ",".join(a.label.value for a in result.audit.facts)
            why = (f" | {result.audit.verdict.value} [{labels}] sentences={len(result.answer.sentences)} "
                   f"premise={result.plan.premise!r} "
                   f"confirmed={result.audit.premise.confirmed if result.audit.premise else None} "
                   f"| {result.audit.reason[:160]}")
        hit = ""
        if q["expected_behavior"] == "ANSWER" and q.get("required_evidence_spans") and outcome in ("ANSWER", "PARTIAL"):
            # Whether the answer quotes the evidence sentence (else it answered from elsewhere).
            quoted = bool(spans_covered(q["required_evidence_spans"], [c.quote for c in result.answer.citations]))
            hit = " evidence-quoted" if quoted else " evidence-missed"
            outcomes.setdefault(f"{q.get('set', 'devbench')}:quoted", Counter())[quoted] += 1
        print(q["question_id"], q["expected_behavior"], outcome + hit, why, flush=True)
        kind = f"{q.get('set', 'devbench')}:{q['expected_behavior']}"
        outcomes.setdefault(kind, Counter())[outcome] += 1
        if q["expected_behavior"] == "ANSWER" and outcome == "REFUSAL":
            refused_answerable.append(q["question_id"])

    def n(kind: str, *said: str) -> str:
        c = outcomes.get(kind, Counter())
        return f"{sum(c[s] for s in said)}/{sum(c.values())}"

    tally = {"split": args.split, "config": args.config, "scope": args.scope, "params": overrides}
    for name in SETS:
        if name in chosen:
            tally.update({
                f"{name}_unanswerable_refused": n(f"{name}:REFUSE_UNANSWERABLE", "REFUSAL"),
                f"{name}_unanswerable_answered": n(f"{name}:REFUSE_UNANSWERABLE", "ANSWER", "PARTIAL"),
                f"{name}_unanswerable_false_premise": n(f"{name}:REFUSE_UNANSWERABLE", "FALSE_PREMISE"),
                f"{name}_answerable_refused": n(f"{name}:ANSWER", "REFUSAL"),
                f"{name}_answerable_partial": n(f"{name}:ANSWER", "PARTIAL"),
                f"{name}_answered_quoting_evidence": n(f"{name}:quoted", True),
            })
    if "devbench" in chosen:
        tally.update({"devbench_answerable_refused": n("devbench:ANSWER", "REFUSAL"),
                      "devbench_answered_quoting_evidence": n("devbench:quoted", True),
                      "out_of_scope_answered": n("devbench:REFUSE_OUT_OF_SCOPE", "ANSWER", "PARTIAL")})
    tally.update({"refused": refused_answerable, "outcomes": {k: dict(v) for k, v in outcomes.items()}})
    print(json.dumps(tally))


if __name__ == "__main__":
    main()
