"""Answer composition: which of the audited sentences the local generator states, fitted on the
calibration halves only (agent.local.compose.ComposeParams).

    nice .venv/bin/python bench/calibrate_compose.py --var var/bench-blind --collection blind
    nice .venv/bin/python bench/calibrate_compose.py ... --why      # per question: gold where?
    nice .venv/bin/python bench/calibrate_compose.py ... --refresh  # rerun the loops (else cached)

The questions: the calibration halves of devbench, the QASPER-style and the in-domain questions
(bench/calibrate_selection.py's sets, a QASPER-style question asked of its paper alone) and of
bench/blind2 (`--sets`). Never a test half and never bench/blind: `--split test` is refused
unless `--report` (then it only prints the shipped params' figures, it chooses nothing).

1. Each answerable question runs once through the agentic loop with the local roles
   (retrieval memoised, one thread), its auditor listing up to AUDITED sentences per fact
   (AuditorParams.sentences_per_fact; the first two are those it lists by default), and
   once through `hybrid`. The sources, the plan and the audit are cached under --var.
2. Every point of GRID recomposes each cached audit (ExtractiveGenerator with those
   ComposeParams, then the verifier): a question is "answered with gold" when a sentence of
   its ANSWER or PARTIAL answer holds one of its evidence spans (calibrate_selection.
   holds_span). The point with the most such questions less PADDING per stated sentence
   wins (a sentence must put gold into one more answer in 1/PADDING to be worth reading);
   ties go to the fewer sentences, then to the earlier point of GRID (the current default first).
3. Prints, per set and in all, agentic's and hybrid's answered-with-gold, sentences per
   answer and citation precision (the cited chunks' papers among the expected ones), and
   with --why, per question where the gold span was when agentic's answer lacks it:
   no source holds it (retrieval), an audited sentence of rank r not stated, the sentence
   after a stated one, the sentence before one, elsewhere in the sources.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path

import _devbench_common as common
from calibrate_selection import SETS, Retrievers, holds_span, labelled_questions

AUDITED = 4
PADDING = 0.05
BLIND2 = common.ROOT / "bench" / "blind2" / "questions.jsonl"


# The composition before stop 27 (a second sentence within 0.08, facts in order), for comparison.
PREVIOUS = {"per_fact": 2, "margin": 0.08, "ratio": 1.01, "follow_on": "", "second_order": "fact"}


def grid():
    """The ComposeParams tried: the current default first, then the previous one."""
    from agent.local.generator import ComposeParams

    yield ComposeParams()
    yield ComposeParams(**PREVIOUS)
    for per_fact, margin, ratio, follow, order in itertools.product(
            (1, 2, 3), (0.0, 0.04, 0.08, 0.16, 0.3, 1.0), (1.01, 0.75, 0.5), ("", "type", "value", "next"),
            ("fact", "score")):
        if ratio < 1.01 and margin >= 1.0:
            continue
        yield ComposeParams(per_fact=per_fact, margin=margin, ratio=ratio, follow_on=follow, second_order=order)


def blind2_questions(ready: set[str]) -> list[dict]:
    """bench/blind2's questions in the benchmark format, marked with their set and split."""
    from blind_eval import as_benchmark, load_questions

    raw = load_questions(BLIND2, "all")
    return [{**b, "set": "blind2", "split": q["split"]} for q, b in zip(raw, as_benchmark(raw))
            if set(b["expected_doc_ids"]) <= ready]


def expected_docs(q: dict) -> set[str]:
    return set(q.get("expected_doc_ids") or ([q["paper"]] if q.get("paper") else []))


def collect(questions: list[dict], retriever_for, embed) -> list[dict]:
    """Per answerable question: the agentic loop's plan, sources and audit (AUDITED sentences
    per fact), and hybrid's answer."""
    from agent.configs import build_roles, get_config
    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.loop import AgentLoop

    agentic, hybrid = get_config("agentic"), get_config("hybrid")
    rows = []
    for n, q in enumerate(questions, 1):
        roles = build_roles(agentic, "local", embed=embed)
        roles.auditor = LocalAuditor(embed, params=replace(AuditorParams(), sentences_per_fact=AUDITED))
        result = AgentLoop(agentic, roles, retriever_for(q), concurrent=False).run(q["question"])
        base = AgentLoop(hybrid, build_roles(hybrid, "local", embed=embed), retriever_for(q),
                         concurrent=False).run(q["question"])
        rows.append({
            "set": q["set"], "question_id": q["question_id"], "question": q["question"],
            "spans": q["required_evidence_spans"], "reference": q.get("reference_answer", ""),
            "docs": sorted(expected_docs(q)),
            "sources": [s.model_dump() for s in result.sources],
            "audit": result.audit.model_dump(mode="json") if result.audit else None,
            "hybrid": {"outcome": base.answer.outcome.value,
                       "sentences": [_cited(s, base.sources) for s in base.answer.sentences]},
        })
        print(f"{n}/{len(questions)} {q['set']}:{q['question_id']}", file=sys.stderr, flush=True)
    return rows


def _cited(sentence, sources) -> dict:
    """An answer sentence with the paper (file stem) of the chunk it cites."""
    cited = [sources[c - 1] for c in sentence.citations if 0 < c <= len(sources)]
    return {"text": sentence.text, "doc": Path(cited[0].file_name).stem if cited else "",
            "chunk_id": cited[0].chunk_id if cited else None}


def compose(row: dict, params, embed) -> dict:
    """The agentic answer of a cached row under `params`: outcome and cited sentences."""
    from agent.local.generator import ExtractiveGenerator
    from agent.types import AuditResult, Source
    from agent.verify import CitationVerifier

    sources = [Source(**s) for s in row["sources"]]
    audit = AuditResult.model_validate(row["audit"]) if row["audit"] else None
    draft = ExtractiveGenerator(embed, params).generate(row["question"], sources, audit)
    answer = CitationVerifier().verify(draft, sources, question=row["question"])
    return {"outcome": answer.outcome.value, "sentences": [_cited(s, sources) for s in answer.sentences]}


def score(answer: dict, row: dict) -> dict:
    """Gold held, sentences stated, cited sentences from an expected paper."""
    said = answer["outcome"] in ("ANSWER", "PARTIAL")
    sentences = answer["sentences"] if said else []
    return {"answered": said, "gold": any(holds_span(s["text"], row["spans"]) for s in sentences),
            "sentences": len(sentences), "on_doc": sum(s["doc"] in row["docs"] for s in sentences)}


def summary(scores: list[dict]) -> dict:
    answered = [s for s in scores if s["answered"]]
    cited = sum(s["sentences"] for s in answered)
    return {"answered": f"{len(answered)}/{len(scores)}", "gold": f"{sum(s['gold'] for s in scores)}/{len(scores)}",
            "sentences_per_answer": round(cited / max(len(answered), 1), 2),
            "one_sentence_answers": sum(s["sentences"] == 1 for s in answered),
            "citation_precision": round(sum(s["on_doc"] for s in answered) / max(cited, 1), 3)}


def why(row: dict, answer: dict) -> str:
    """Where the gold span was when the answer lacks it."""
    from agent import benchmark as bm
    from agent.local.eligibility import eligible
    from agent.local.text import split_sentences

    spans = row["spans"]
    if not bm.spans_covered(spans, [s["text"] for s in row["sources"]]):
        return "retrieval"
    if row["audit"]:
        for fact in row["audit"]["facts"]:
            for r, s in enumerate(fact["sentences"], 1):
                if holds_span(s["quote"], spans):
                    return f"audited rank {r} ({fact['label']}) not stated"
    stated = {s["text"] for s in answer["sentences"]}
    texts = {s["chunk_id"]: s["text"] for s in row["sources"]}
    for s in answer["sentences"]:
        sentences = [eligible(x) for x in split_sentences(texts.get(s["chunk_id"], ""))]
        at = next((n for n, x in enumerate(sentences) if x and x in s["text"]), -1)
        if at >= 0 and at + 1 < len(sentences) and sentences[at + 1] and sentences[at + 1] not in stated \
                and holds_span(sentences[at + 1], spans):
            return "next sentence"
        if at > 0 and sentences[at - 1] and holds_span(sentences[at - 1], spans):
            return "sentence before"
    return "in sources, not audited"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--sets", default=",".join((*SETS, "blind2")))
    parser.add_argument("--split", default="calibration", choices=("calibration", "test"))
    parser.add_argument("--report", action="store_true", help="the shipped params only (required for --split test)")
    parser.add_argument("--why", action="store_true", help="per question: where the gold span was")
    parser.add_argument("--refresh", action="store_true", help="rerun the loops instead of reading the cache")
    parser.add_argument("--dump", default="", help="write each question's answers (chosen params, hybrid) here")
    args = parser.parse_args()
    if args.split == "test" and not args.report:
        sys.exit("a test half only reports: add --report")
    common.django_setup(Path(args.var))

    from agent.local.generator import ComposeParams
    from agent.retrieval import portal_embed
    from knowledge.models import Collection

    collection = Collection.objects.get(slug=args.collection)
    ready = {n.removesuffix(".pdf")
             for n in collection.documents.filter(status="ready").values_list("original_name", flat=True)}
    sets = args.sets.split(",")
    questions = [q for q in labelled_questions(ready, tuple(s for s in SETS if s in sets))
                 + (blind2_questions(ready) if "blind2" in sets else [])
                 if q["split"] == args.split and q["expected_behavior"] == "ANSWER"
                 and q.get("required_evidence_spans")]
    embed = portal_embed()
    cache = Path(args.var) / f"compose_rows_{args.collection}_{args.split}_{'-'.join(sets)}.json"
    if cache.exists() and not args.refresh:
        rows = json.loads(cache.read_text())
    else:
        from agent.configs import get_config

        rows = collect(questions, Retrievers(collection, get_config("agentic").retrieval_mode), embed)
        cache.write_text(json.dumps(rows))

    def figures(params) -> tuple[list[dict], list[dict]]:
        answers = [compose(r, params, embed) for r in rows]
        return answers, [score(a, r) for a, r in zip(answers, rows)]

    hybrid = [score(r["hybrid"], r) for r in rows]
    # A report chooses nothing: the shipped params, compared with the previous ones.
    points = [ComposeParams()] if args.report else list(grid())
    results = []
    for params in points:
        _, s = figures(params)
        gold, said = sum(x["gold"] for x in s), sum(x["sentences"] for x in s)
        results.append((gold - PADDING * said, -said, -len(results), params, gold, said))
        print(json.dumps({**asdict(params), "gold": gold, "sentences": said}), file=sys.stderr, flush=True)
    best = max(results, key=lambda r: r[:3])[3]
    answers, chosen = figures(best)
    default_answers, default = figures(ComposeParams(**PREVIOUS))
    out = {"split": args.split, "questions": len(rows), "chosen": asdict(best), "previous": PREVIOUS,
           "padding": PADDING}
    for name in [*sets, "all"]:
        pick = [i for i, r in enumerate(rows) if name in ("all", r["set"])]
        out[name] = {"hybrid": summary([hybrid[i] for i in pick]),
                     "agentic_previous": summary([default[i] for i in pick]),
                     "agentic_chosen": summary([chosen[i] for i in pick])}
    if args.why:
        for label, (ans, sc) in (("previous", (default_answers, default)), ("chosen", (answers, chosen))):
            causes: Counter = Counter()
            for r, a, s, h in zip(rows, ans, sc, hybrid):
                cause = "" if s["gold"] else (why(r, a) if s["answered"] else "refused")
                causes[f"agentic {'gold' if s['gold'] else cause} / hybrid {'gold' if h['gold'] else 'no'}"] += 1
                print(f"{label} {r['set']}:{r['question_id']} agentic={int(s['gold'])} hybrid={int(h['gold'])} "
                      f"n={s['sentences']} {cause}", file=sys.stderr)
            out[f"why_{label}"] = dict(sorted(causes.items()))
    if args.dump:
        Path(args.dump).write_text(json.dumps([
            {"set": r["set"], "question_id": r["question_id"], "question": r["question"], "reference": r["reference"],
             "agentic": a, "hybrid": r["hybrid"], "agentic_gold": s["gold"], "hybrid_gold": h["gold"]}
            for r, a, s, h in zip(rows, answers, chosen, hybrid)], indent=1))
    out["sentences_p50"] = statistics.median([s["sentences"] for s in chosen if s["answered"]] or [0])
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
