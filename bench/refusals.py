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
    ... --run-config '{"top_k": 8}'   # RunConfig fields of the configuration overridden

QASPER asks within one paper. With --scope paper each QASPER-style question goes to a
collection of the bench user that holds only its paper ("paper-<arXiv id>"), made through
the portal's own upload and ingestion the first time (a few seconds a paper); with
--scope collection (the default) to the whole collection. The other sets always go to the
whole collection.

Prints one line per question (id, expected, outcome) and a JSON tally per set: unanswerable
refused x/N (FALSE_PREMISE and CLARIFY counted apart: neither is a refusal nor an answer),
answerable refused, devbench answerable refused y/M, out of scope answered z/K, and per set the
gold evidence spans of the answerable questions that are in a chunk the run read ("spans read",
the premise search's own chunks aside: what retrieval gave the answer's choice).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import _devbench_common as common

SETS = {"qasper": "qasper_style_questions.jsonl", "in_domain": "in_domain_questions.jsonl"}
# The blind sets' answerable and out-of-scope questions, in the form of the others. bench/blind
# has no split: all of it is held out (--split test). blind3 joined in stop 28.
BLIND = {"blind2": "blind2/questions.jsonl", "blind3": "blind3/questions.jsonl", "blind": "blind/questions.jsonl",
         "blind4": "blind4/questions.jsonl"}


def load_set(name: str) -> list[dict]:
    """One of the question files of SETS, each question marked with its set."""
    path = common.ROOT / "bench" / SETS[name]
    return [{**json.loads(line), "set": name} for line in path.open(encoding="utf-8") if line.strip()]


def load_blind(name: str) -> list[dict]:
    """A blind set's answerable and out-of-scope questions with devbench's field names."""
    out = []
    for line in (common.ROOT / "bench" / BLIND[name]).open(encoding="utf-8"):
        if not line.strip():
            continue
        q = json.loads(line)
        if q["expected_outcome"] == "ANSWER":
            behaviour = "ANSWER"
        elif q["category"] == "out_of_scope":
            behaviour = "REFUSE_OUT_OF_SCOPE"
        else:
            continue
        out.append({"question_id": q["question_id"], "question": q["question"], "set": name,
                    "expected_behavior": behaviour, "split": q.get("split", "test"),
                    "papers": [d.removesuffix(".pdf") for d in q.get("documents", [])],
                    "required_evidence_spans": [e["text"] for e in q.get("evidence", [])]})
    return out


def split_questions(collection, chosen: list[str], split: str) -> list[dict]:
    """The questions of the sets `chosen` (SETS, BLIND, "devbench") on one split whose papers
    the collection holds, ready."""
    ready = {n.removesuffix(".pdf") for n in
             collection.documents.filter(status="ready").values_list("original_name", flat=True)}
    questions = [q for name in SETS if name in chosen for q in load_set(name)
                 if q["paper"] in ready and q["split"] == split]
    questions += [q for name in BLIND if name in chosen for q in load_blind(name)
                  if q["split"] == split and set(q["papers"]) <= ready]
    if "devbench" in chosen:
        questions += [q for q in common.with_splits(common.load_questions()) if q["split"] == split
                      and q["expected_behavior"] in ("ANSWER", "REFUSE_OUT_OF_SCOPE")
                      and set(q["expected_doc_ids"]) <= ready]
    return questions


def _holds(span: str, text: str) -> bool:
    """Whether a text holds the evidence span (agent.benchmark's fuzzy match), or the text is
    a part of it (a span over two sentences)."""
    from agent.benchmark.metrics import normalise, span_in_text

    wanted, have = normalise(span), normalise(text)
    return span_in_text(wanted, have, normalised=True) or (len(have) >= 20 and have in wanted)


def _lost_pair(span: str, sources: list, holding: list[int], cands: list) -> str:
    """Where a span over several sentences was lost when no candidate holds a part of it:
    split at a chunk boundary (no chunk holds it whole: which chunk holds which sentence), or
    whole in a chunk, each of its sentences ineligible or no candidate (candidates.py keeps a
    sentence sharing a term with a need; its continuation shares none)."""
    from agent.benchmark.metrics import normalise, span_in_text
    from agent.local.eligibility import eligible
    from agent.local.text import split_sentences

    def whole(part: str, text: str) -> bool:
        return normalise(part) in normalise(text)

    parts = split_sentences(span)
    if not any(whole(span, sources[i].text) for i in holding):
        where = []
        for n, part in enumerate(parts, 1):
            at = [f"#{i + 1} p{sources[i].page}" for i in holding if whole(part, sources[i].text)]
            cut = [f"#{i + 1} p{sources[i].page}" for i in holding
                   if span_in_text(normalise(part), normalise(sources[i].text), normalised=True)]
            # A chunk opening with the sentence's end (or ending with its start): cut there,
            # the rest in a chunk not retrieved.
            edge = [f"#{i + 1} p{sources[i].page} " + ("opens with its end" if opens else "ends with its start")
                    for i in holding for chunk in [split_sentences(sources[i].text)] if chunk
                    for opens in [normalise(part).endswith(normalise(chunk[0]))]
                    if opens or normalise(part).startswith(normalise(chunk[-1]))]
            where.append(f"sentence {n} in chunk {', '.join(at)}" if at else
                         f"sentence {n} cut at the edge of chunk {', '.join(cut)}" if cut else
                         f"sentence {n} cut: chunk {', '.join(edge)}, the rest not retrieved" if edge else
                         f"sentence {n} not retrieved")
        return f"split at a chunk boundary ({'; '.join(where)})"
    quotes = {normalise(c.quote) for c in cands}
    why = [f"sentence {n} " + ("ineligible" if not eligible(part) else
                               "a candidate" if normalise(eligible(part)) in quotes else "no shared term / too long")
           for n, part in enumerate(parts, 1)]
    return f"whole in one chunk ({'; '.join(why)}) but no candidate holds the pair"


def where_lost(question: str, spans: list[str], result, auditor, retriever, k: int) -> list[str]:
    """For an answerable run that was refused or PARTIAL: per evidence span, the stage where
    it was lost. "not retrieved" (with the query, of those tried and a few more, that ranks a
    chunk holding it best within 30), "not a candidate" (the chunk was read but the sentence is
    not an eligible candidate), "gated" (a candidate the need's gates drop: answer type,
    eligibility, pointer, anchors, P(answers) floor), "ranked" (it passed the gates: its rank,
    P(answers) and the need probability it would give as the best sentence)."""
    from agent.local.answer_type import need_of, offers, points_elsewhere
    from agent.local.candidates import candidates, doc_key, gate_coverage, plan_facts, terms_by_document
    from agent.local.eligibility import eligible
    from agent.local.reformulator import _keywords
    from agent.local.selection import candidate_idf
    from agent.local.sufficiency import asked_focus
    from agent.local.text import anchor_terms, split_sentences
    from agent.verify import eligibility

    plan, sources = result.plan, result.sources
    facts = plan_facts(question, plan)
    cands = candidates(facts, plan.premise, sources)
    vecs = auditor._vectors(facts + [c.raw or c.quote for c in cands])
    doc_terms = terms_by_document(sources)
    idf = candidate_idf([c.terms for c in cands])
    ranks = [auditor._rank(f, v, cands, vecs[len(facts):], sources, doc_terms, idf)[1]
             for f, v in zip(facts, vecs[: len(facts)])]
    lines = []
    for span in spans:
        holding = [i for i, s in enumerate(sources) if _holds(span, s.text)]
        if not holding:
            tries = list(dict.fromkeys([*result.queries, question, *facts,
                                        *(_keywords(" ".join(anchor_terms(f) + asked_focus(f))) for f in facts)]))
            found = []
            for query in tries:
                if not query.strip():
                    continue
                hits = retriever.retrieve(query, k=30)
                at = [r for r, h in enumerate(hits, 1) if _holds(span, h.text)]
                if at:
                    found.append((at[0], query))
            best = min(found, default=None)
            where = f"best rank {best[0]} for {best[1]!r}" if best else "in no top 30"
            lines.append(f"  NOT RETRIEVED {span[:60]!r}: {where}")
            continue
        gold = [j for j, c in enumerate(cands) if c.source_index in holding and _holds(span, c.quote)]
        if not gold and len(split_sentences(span)) > 1:
            lines.append(f"  NOT A CANDIDATE {span[:60]!r}: {_lost_pair(span, sources, holding, cands)}")
            continue
        if not gold:
            raws = [r for i in holding for r in split_sentences(sources[i].text) if _holds(span, r)]
            why = [("ineligible" if not eligible(r) else "no shared term / too long") + f": {r[:70]!r}"
                   for r in raws] or ["span over several sentences"]
            lines.append(f"  NOT A CANDIDATE {span[:60]!r}: {'; '.join(why)}")
            continue
        for n, fact in enumerate(facts):
            listed = [(r, row) for r, row in enumerate(ranks[n]) if row[2].index in gold]
            if listed:
                r, row = listed[0]
                p_need = auditor.need_probability([row], fact, cands)
                best_p = auditor.need_probability(ranks[n], fact, cands)
                lines.append(f"  RANKED need {n} {fact[:50]!r}: gold rank {r + 1}/{len(ranks[n])} "
                             f"P(answers) {row[0]:.3f} need P as best {p_need:.2f}; best's need P {best_p:.2f}")
                continue
            c = cands[gold[0]]
            need = need_of(fact)
            gate = ("answer type " + need.kind if offers(need, fact, c.quote, context=c.context) <= 0 else
                    "verifier eligibility" if eligibility(c.quote) else
                    "points elsewhere" if points_elsewhere(c.quote) else
                    "anchors" if gate_coverage(
                        fact, doc_terms[doc_key(sources[c.source_index])]) < auditor.params.anchor_min else
                    "P(answers) floor")
            lines.append(f"  GATED need {n} {fact[:50]!r} by {gate}: {c.quote[:70]!r}")
    return lines


def shown(q: dict, result) -> list[str]:
    """The answer (or a CLARIFY's rephrasings) and each cited quote with its paper, marked
    OWN when it is the question's paper (QASPER-style: `paper`; others: their documents)."""
    wanted = {q["paper"]} if q.get("paper") else set(q.get("papers") or q.get("expected_doc_ids") or [])
    by_chunk = {s.chunk_id: s for s in result.sources}
    lines = [f"  answer: {result.answer.text[:300]!r}"]
    lines += [f"  ask: {s!r}" for s in result.answer.suggestions]
    for c in result.answer.citations:
        source = by_chunk.get(c.chunk_id)
        stem = Path(source.file_name).stem if source else "?"
        lines.append(f"  [{c.marker}] {'OWN' if stem in wanted else 'OTHER'} {stem[:30]}: {c.quote[:140]!r}")
    return lines


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
    parser.add_argument("--sets", default="qasper,in_domain,devbench,blind2,blind3,blind")
    parser.add_argument("--scope", default="collection", choices=("collection", "paper"),
                        help="what a QASPER-style question is asked of: the whole collection or its paper alone")
    parser.add_argument("--why", action="store_true", help="print each run's verdict reason and premise")
    parser.add_argument("--lost", action="store_true",
                        help="for each answerable run refused or PARTIAL, where each evidence span was lost")
    parser.add_argument("--show", action="store_true",
                        help="print each answer, its cited quotes and whether they are from the question's paper")
    parser.add_argument("--ids", default="", help="only these question ids (comma-separated)")
    parser.add_argument("--params", default="", help='AuditorParams fields to override, as JSON ({"need_min": 0.3})')
    parser.add_argument("--run-config", default="",
                        help='RunConfig fields to override, as JSON ({"need_search": 0})')
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    from devbench import _MemoRetriever as MemoRetriever

    from agent.benchmark.metrics import spans_covered
    from agent.configs import build_roles, get_config
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    cfg = replace(get_config(args.config), **json.loads(args.run_config or "{}"))
    collection = Collection.objects.get(slug=args.collection)
    chosen = args.sets.split(",")
    questions = split_questions(collection, chosen, args.split)
    if args.ids:
        questions = [q for q in questions if q["question_id"] in args.ids.split(",")]
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
        if q["expected_behavior"] == "ANSWER" and q.get("required_evidence_spans"):
            # Whether each evidence span is in a chunk the answer's choice read (the premise
            # search's own chunks aside): what retrieval gave the auditor to choose from.
            read = [s.text for s in result.sources if not s.premise_search]
            held = sum(any(_holds(span, text) for text in read) for span in q["required_evidence_spans"])
            spans = outcomes.setdefault(f"{q.get('set', 'devbench')}:spans", Counter())
            spans["read"] += held
            spans["all"] += len(q["required_evidence_spans"])
            hit += f" spans-read {held}/{len(q['required_evidence_spans'])}"
        print(q["question_id"], q["expected_behavior"], outcome + hit, why, flush=True)
        if args.show:
            for line in shown(q, result):
                print(line, flush=True)
        if args.lost and q["expected_behavior"] == "ANSWER" and outcome in ("REFUSAL", "PARTIAL"):
            for line in where_lost(q["question"], q.get("required_evidence_spans") or [], result,
                                   roles.auditor, retriever, cfg.top_k):
                print(line, flush=True)
        kind = f"{q.get('set', 'devbench')}:{q['expected_behavior']}"
        outcomes.setdefault(kind, Counter())[outcome] += 1
        if q["expected_behavior"] == "ANSWER" and outcome == "REFUSAL":
            refused_answerable.append(q["question_id"])

    def n(kind: str, *said: str) -> str:
        c = outcomes.get(kind, Counter())
        return f"{sum(c[s] for s in said)}/{sum(c.values())}"

    tally = {"split": args.split, "config": args.config, "scope": args.scope, "params": overrides,
             "run_config": json.loads(args.run_config or "{}")}
    for kind, c in outcomes.items():
        if kind.endswith(":spans"):
            tally[kind.replace(":", "_") + "_read"] = f"{c['read']}/{c['all']}"
    for name in SETS:
        if name in chosen:
            tally.update({
                f"{name}_unanswerable_refused": n(f"{name}:REFUSE_UNANSWERABLE", "REFUSAL"),
                f"{name}_unanswerable_answered": n(f"{name}:REFUSE_UNANSWERABLE", "ANSWER", "PARTIAL"),
                f"{name}_unanswerable_false_premise": n(f"{name}:REFUSE_UNANSWERABLE", "FALSE_PREMISE"),
                # Asked back which paper is meant: no answer, and no refusal either.
                f"{name}_unanswerable_clarify": n(f"{name}:REFUSE_UNANSWERABLE", "CLARIFY"),
                f"{name}_answerable_clarify": n(f"{name}:ANSWER", "CLARIFY"),
                f"{name}_answerable_refused": n(f"{name}:ANSWER", "REFUSAL"),
                f"{name}_answerable_partial": n(f"{name}:ANSWER", "PARTIAL"),
                f"{name}_answered_quoting_evidence": n(f"{name}:quoted", True),
            })
    for name in BLIND:
        if name in chosen:
            tally.update({f"{name}_answerable_refused": n(f"{name}:ANSWER", "REFUSAL"),
                          f"{name}_answerable_partial": n(f"{name}:ANSWER", "PARTIAL"),
                          f"{name}_answered_quoting_evidence": n(f"{name}:quoted", True),
                          f"{name}_out_of_scope_answered": n(f"{name}:REFUSE_OUT_OF_SCOPE", "ANSWER", "PARTIAL")})
    if "devbench" in chosen:
        tally.update({"devbench_answerable_refused": n("devbench:ANSWER", "REFUSAL"),
                      "devbench_answered_quoting_evidence": n("devbench:quoted", True),
                      "out_of_scope_answered": n("devbench:REFUSE_OUT_OF_SCOPE", "ANSWER", "PARTIAL")})
    tally.update({"refused": refused_answerable, "outcomes": {k: dict(v) for k, v in outcomes.items()}})
    print(json.dumps(tally))


if __name__ == "__main__":
    main()
