"""Premise checks of the agentic loop (local backend) on bench/premise_questions.jsonl: 20
questions whose premise the paper contradicts (each with the contradicting sentence) and 20
matched questions of the same form whose premise the paper states (same subject, the value
the paper gives), each asked of the whole collection.

    nice .venv/bin/python bench/premises.py --var var/bench-blind --collection blind --split calibration
    ... --split test
    ... --questions bench/blind2/questions.jsonl --split calibration   # a blind set's questions
    ... --params '{"premise_false_min": 0.5}'   # AuditorParams fields to override
    ... --premise-search off   # without the in-paper premise search (RunConfig.premise_search)

Per question it prints the outcome, the presuppositions the planner extracted, and what the
premise check saw in the final audit: the sentence it cited (or none), and for a false
premise where its contradicting sentence stood (not among the sentences read, read but not
relevant enough, relevant with no cue and P(CONTRADICT) under the threshold) with its
relevance, cue and P (and whether only the in-paper premise search found it: "searched"). A
false premise is caught when the outcome is FALSE_PREMISE citing the contradicting span (or one
sentence of it); a true premise is a false alarm when the outcome is FALSE_PREMISE. Ends
with a JSON tally per split.
"""

from __future__ import annotations

import argparse
import inspect
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import _devbench_common as common

QUESTIONS = common.ROOT / "bench" / "premise_questions.jsonl"


def load(split: str, path: Path = QUESTIONS) -> list[dict]:
    """The questions of one split. A blind set (bench/blind2: category, expected_outcome,
    evidence) is read as premise questions too: its false premises against its answerable
    and multi-part questions, whose premises are true (out-of-scope and vague ones are left out)."""
    rows = [json.loads(line) for line in path.open(encoding="utf-8") if line.strip()]
    rows = [q if "expected_behavior" in q else _from_blind(q) for q in rows]
    return [q for q in rows if q and (split == "all" or q["split"] == split)]


def _from_blind(q: dict) -> dict:
    if q["category"] not in ("answerable", "multi_part", "false_premise"):
        return {}
    false = q["expected_outcome"] == "FALSE_PREMISE"
    return {**q, "form": q["category"], "expected_behavior": "DEBUNK_FALSE_PREMISE" if false else "ANSWER",
            "required_evidence_spans": [e["text"] for e in q["evidence"]] or [""]}


def _same_sentence(quote: str, span: str) -> bool:
    """Whether a sentence read is (part of) the span, or the span part of it."""
    from agent.benchmark.metrics import normalise, span_in_text

    a, b = normalise(quote), normalise(span)
    return bool(a) and (span_in_text(a, b, normalised=True) or span_in_text(b, a, normalised=True))


def where(trace: list[dict], span: str) -> tuple[str, dict | None]:
    """Where the premise check met the span: the stage a miss happened at, and its row."""
    rows = [r for r in trace if _same_sentence(r["quote"], span)]
    if not rows:
        return "not retrieved", None
    row = max(rows, key=lambda r: (r["role"] != "irrelevant", r.get("relevance", 0.0)))
    if row["role"] == "irrelevant":
        return "not relevant", row
    if row.get("cue") or row.get("p_false", 0.0) >= row.get("threshold", 1.0):
        return "recognised", row
    return "not recognised", row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--split", default="calibration", choices=("calibration", "test", "all"))
    parser.add_argument("--config", default="agentic")
    parser.add_argument("--questions", default=str(QUESTIONS),
                        help="bench/premise_questions.jsonl, or a blind set (bench/blind2/questions.jsonl)")
    parser.add_argument("--only", default="", help="comma-separated question ids")
    parser.add_argument("--params", default="", help='AuditorParams fields to override, as JSON')
    parser.add_argument("--premise-search", default="", choices=("", "on", "off"),
                        help="RunConfig.premise_search on or off (default: the configuration's)")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from devbench import _MemoRetriever as MemoRetriever

    import agent.local.auditor as auditor_module
    from agent.benchmark.metrics import spans_covered
    from agent.configs import build_roles, get_config
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    # The final audit's premise check, traced: every sentence it read, with its scores.
    trace: list[dict] = []
    real_check = auditor_module.check_premises

    def traced(*a, **kw):
        trace.clear()
        return real_check(*a, **kw, trace=trace)

    # (A premise check from before stop 26 takes no trace: the outcomes are still measured.)
    if "trace" in inspect.signature(real_check).parameters:
        auditor_module.check_premises = traced

    cfg = get_config(args.config)
    if args.premise_search and hasattr(cfg, "premise_search"):
        cfg = replace(cfg, premise_search=args.premise_search == "on")
    collection = Collection.objects.get(slug=args.collection)
    retriever = MemoRetriever(CollectionRetriever(collection, mode=cfg.retrieval_mode))
    overrides = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(args.params or "{}").items()}
    only = set(filter(None, args.only.split(",")))
    tally: dict[str, Counter] = {}
    for q in load(args.split, Path(args.questions)):
        if only and q["question_id"] not in only:
            continue
        roles = build_roles(cfg, "local", embed=portal_embed())
        if overrides:
            roles.auditor.params = replace(roles.auditor.params, **overrides)
        threshold = roles.auditor.params.premise_false_min
        result = AgentLoop(cfg, roles, retriever, concurrent=False).run(q["question"])
        outcome = result.answer.outcome.value
        check = result.audit.premise if result.audit is not None else None
        span = q["required_evidence_spans"][0]
        # A cited sentence that is one sentence of a longer span counts as citing it.
        cited = bool(spans_covered([span], [c.quote for c in result.answer.citations])) or any(
            _same_sentence(c.quote, span) for c in result.answer.citations)
        false = q["expected_behavior"] == "DEBUNK_FALSE_PREMISE"
        if false:
            verdict = ("caught" if outcome == "FALSE_PREMISE" and cited else
                       "FALSE_PREMISE, other sentence" if outcome == "FALSE_PREMISE" else "missed")
        else:
            verdict = "false alarm" if outcome == "FALSE_PREMISE" else "ok"
        tally.setdefault(f"{q.get('split', 'all')}:{'false' if false else 'true'}", Counter())[verdict] += 1
        print(f"{q['question_id']} [{q['form']}] {outcome} -> {verdict}", flush=True)
        print(f"   premises: {result.plan.premises}")
        if check is not None and check.contradicted:
            print(f"   cited: {check.quote[:200]!r} ({check.reason})")
            # How the cited sentence was read: its role (relevant, or "loose": a document
            # holding all the premise's names but one), cue and P(CONTRADICT), per premise.
            for row in trace:
                if row["role"] != "irrelevant" and _same_sentence(row["quote"], check.quote):
                    print("   cited as: " + json.dumps({k: v for k, v in row.items() if k != "quote"}))
        if false and verdict != "caught":
            for row in trace:
                row["threshold"] = threshold
            stage = "no premise" if not result.plan.premises else where(trace, span)[0]
            row = where(trace, span)[1]
            tally.setdefault(f"{q.get('split', 'all')}:missed at", Counter())[stage] += 1
            print(f"   contradicting sentence: {stage}" + (f" {json.dumps({k: v for k, v in row.items() if k not in ('quote', 'threshold')})}" if row else ""))
        relevant = sorted((r for r in trace if r["role"] != "irrelevant"), key=lambda r: -r.get("relevance", 0.0))
        for r in relevant[:2]:
            print(f"   read: rel={r['relevance']} cue={r.get('cue', '')!r} P={r.get('p_false', '-')} {r['quote'][:140]!r}")
    print(json.dumps({"split": args.split, "params": overrides, **{k: dict(v) for k, v in tally.items()}}))


if __name__ == "__main__":
    main()
