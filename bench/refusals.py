"""Refusals of the agentic loop (local backend) on one split: the questions of
bench/in_domain_questions.jsonl (about a paper of the collection: unanswerable ones the
paper does not answer, answerable ones of the same form) and devbench's answerable and
out-of-scope questions.

    nice .venv/bin/python bench/refusals.py --var var/bench-blind --collection blind --split test
    ... --params '{"need_features": ["best_logit", "support", "focus_miss", "fit_gap"], ...}'

Prints one line per question (id, expected, outcome) and a JSON tally: in-domain refused x/N
(FALSE_PREMISE counted apart: it is not a refusal, and not an answer either), in-domain
answerable refused, devbench answerable refused y/M, out of scope answered z/K.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import _devbench_common as common


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="test", choices=("calibration", "test"))
    parser.add_argument("--config", default="agentic")
    parser.add_argument("--params", default="", help='AuditorParams fields to override, as JSON ({"need_min": 0.3})')
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from devbench import _MemoRetriever as MemoRetriever

    from agent.configs import build_roles, get_config
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    cfg = get_config(args.config)
    collection = Collection.objects.get(slug=args.collection)
    ready = {n.removesuffix(".pdf") for n in
             collection.documents.filter(status="ready").values_list("original_name", flat=True)}
    path = common.ROOT / "bench" / "in_domain_questions.jsonl"
    questions = [{**json.loads(line), "set": "in_domain"} for line in path.open(encoding="utf-8") if line.strip()]
    questions = [q for q in questions if q["paper"] in ready and q["split"] == args.split]
    questions += [q for q in common.with_splits(common.load_questions()) if q["split"] == args.split
                  and q["expected_behavior"] in ("ANSWER", "REFUSE_OUT_OF_SCOPE")
                  and set(q["expected_doc_ids"]) <= ready]
    retriever = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.params or "{}").items()}
    outcomes: dict[str, Counter] = {}
    refused_answerable = []
    for q in questions:
        roles = build_roles(cfg, "local", embed=portal_embed())
        if overrides:
            roles.auditor.params = replace(roles.auditor.params, **overrides)
        loop = AgentLoop(cfg, roles, retriever, concurrent=False)
        outcome = loop.run(q["question"]).answer.outcome.value
        print(q["question_id"], q["expected_behavior"], outcome, flush=True)
        kind = f"{q.get('set', 'devbench')}:{q['expected_behavior']}"
        outcomes.setdefault(kind, Counter())[outcome] += 1
        if q["expected_behavior"] == "ANSWER" and outcome == "REFUSAL":
            refused_answerable.append(q["question_id"])

    def n(kind: str, *said: str) -> str:
        c = outcomes.get(kind, Counter())
        return f"{sum(c[s] for s in said)}/{sum(c.values())}"

    print(json.dumps({
        "split": args.split, "config": args.config, "params": overrides,
        "in_domain_unanswerable_refused": n("in_domain:REFUSE_UNANSWERABLE", "REFUSAL"),
        "in_domain_unanswerable_answered": n("in_domain:REFUSE_UNANSWERABLE", "ANSWER", "PARTIAL"),
        "in_domain_unanswerable_false_premise": n("in_domain:REFUSE_UNANSWERABLE", "FALSE_PREMISE"),
        "in_domain_answerable_refused": n("in_domain:ANSWER", "REFUSAL"),
        "devbench_answerable_refused": n("devbench:ANSWER", "REFUSAL"), "refused": refused_answerable,
        "out_of_scope_answered": n("devbench:REFUSE_OUT_OF_SCOPE", "ANSWER", "PARTIAL"),
        "outcomes": {k: dict(v) for k, v in outcomes.items()},
    }))


if __name__ == "__main__":
    main()
