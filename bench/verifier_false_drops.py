"""How often the verifier's structural checks drop a CORRECT sentence (the false-drop rate).

    .venv/bin/python bench/verifier_false_drops.py [--split calibration|test|all] [--scifact N]

Correct sentence/quote pairs:
- devbench: each sentence of a question's reference answer, quoting every gold evidence span of
  the question (the whole sentence of the page that holds the span: what a model citing the
  gold evidence would cite), with the question, the page as the cited chunk and the paper's
  title as context. The split is agent/local/calibration.py's (calibration by default).
- devbench, copied: each of those gold sentences as the answer sentence, quoting itself (what
  the extractive local backend writes);
- SciFact: each SUPPORT claim against its rationale sentences, the abstract as chunk and its
  title as context (no question: the subject check needs one).

`--slots` measures the slot check (agent/verify/slots.py) and the subject-scope check
(agent/verify/scope.py) instead, rule by rule: among the pairs the rest of agent.verify.support
keeps (support score disabled), those each rule drops.

`--gate` measures the local gate of agent.llm.drafts instead (`local_answer_quotes`: the sentences
the local auditor would answer a need with): for each question, the gold pages cut into ~150-word
chunks are the sources, the rule planner's needs the needs; how many gold sentences the gate
accepts (a model citing one would be kept) and how many other sentences of those pages it
accepts (on-topic sentences that are not the gold evidence). Embeds with the local model.
With `--var DIR --collection SLUG` (an ingested devbench collection, e.g. a copy of the shared
25-paper one), the sources are retrieved instead, as the `agentic` LLM path does (the rule
planner's sub-queries, RRF top 5 each), and the sentences are the ones the model is shown
(agent.llm.candidates.candidate_sentences): how many gold ones, and others, the gate keeps, and
for out-of-scope questions how many shown sentences it keeps (a model citing one would answer).

`--quotes` measures the quote checks instead: gold quotes that agent.verify.eligibility rejects
(judged in the page they come from; run at a base commit too for before/after) and, with
`--relevance`, pairs whose quotes agent.verify.relevance finds off the question.

Otherwise only the checks that need no embedding are measured, one by one, as agent.verify.support runs
them: numbers, number/name pairing, names, and the subject check. "before" is the verifier
before the pairing and subject checks (names accepted from the question when the chunk
mentions them); "after" is agent.verify.support with its support score disabled. A drop on
these pairs is a false drop, though the reference answers sometimes state more than their
gold spans (a drop by the number check is then deserved): each dropped sentence is printed
with its reason so a reader can tell.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
from _shared_data import SHARED

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = SHARED


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"(?<=[a-z])-\s+(?=[a-z])", "", re.sub(r"\s+", " ", text)).strip()


def _no_embedding(texts):
    return np.ones((len(texts), 2)) / np.sqrt(2)


def devbench_pairs(split: str) -> list[dict]:
    import csv

    from pypdf import PdfReader

    from agent.local.calibration import devbench_splits
    from agent.local.text import split_sentences
    from agent.verify import find_quote

    questions = json.loads((DATA / "devbench" / "questions.json").read_text())
    splits = devbench_splits(q["question_id"] for q in questions)
    titles = {r["file"].removesuffix(".pdf"): r["title"] for r in csv.DictReader((DATA / "papers" / "MANIFEST.csv").open())}
    pages: dict[tuple[str, int], str] = {}
    pairs = []
    for q in questions:
        if split != "all" and splits[q["question_id"]] != split:
            continue
        if not q["answerable"] or not q.get("reference_answer") or not q.get("required_evidence_spans"):
            continue
        quotes, chunk, title = [], [], ""
        for span in q["required_evidence_spans"]:
            for ref in q["expected_pages"]:
                key = (ref["doc_id"], ref["page"])
                if key not in pages:
                    reader = PdfReader(str(DATA / "papers" / f"{ref['doc_id']}.pdf"))
                    pages[key] = _clean(reader.pages[ref["page"] - 1].extract_text() or "")
                text = pages[key]
                if find_quote(_clean(span), text) < 0:
                    continue
                sentence = next((s for s in split_sentences(text) if find_quote(_clean(span), s) >= 0), _clean(span))
                quotes.append(sentence)
                chunk.append(text)
                title = titles.get(ref["doc_id"], "")
                break
        if not quotes:
            continue
        for sentence in split_sentences(_clean(q["reference_answer"])):
            pairs.append({"id": q["question_id"], "question": q["question"], "sentence": sentence,
                          "quotes": list(dict.fromkeys(quotes)), "chunk": " ".join(dict.fromkeys(chunk)),
                          "context": title})
    return pairs


def scifact_pairs(limit: int) -> list[dict]:
    claims = [json.loads(line) for line in (DATA / "scifact" / "claims_train_labeled.jsonl").open()]
    claims = [c for c in claims if c["label"] == "SUPPORT" and c["cited_doc_ids"]][: limit or None]
    needed = {c["cited_doc_ids"][0] for c in claims}
    corpus = {}
    for line in (DATA / "scifact" / "corpus_sentences.jsonl").open():
        row = json.loads(line)
        if row["doc_id"] in needed:
            corpus[row["doc_id"]] = row
    pairs = []
    for c in claims:
        doc = corpus.get(c["cited_doc_ids"][0])
        ev = (c["evidence"].get(str(doc["doc_id"])) or []) if doc else []
        idx = sorted({i for e in ev for i in e["sentences"]})
        if not idx:
            continue
        pairs.append({"id": c["id"], "question": "", "sentence": c["claim"],
                      "quotes": [doc["sentences"][i] for i in idx], "chunk": " ".join(doc["sentences"]),
                      "context": doc["title"]})
    return pairs


def _before(p: dict) -> str:
    """The structural checks as they were before the pairing and subject checks."""
    from agent.verify import missing_names, missing_numbers

    evidence = " ".join(p["quotes"])
    if missing_numbers(p["sentence"], evidence):
        return "numbers"
    # evidence="we": the question's names counted whenever the chunk mentioned them.
    if missing_names(p["sentence"], f"{evidence} {p['context']}", question=p["question"], chunk=p["chunk"],
                     evidence="we"):
        return "names"
    return ""


def _after(p: dict) -> str:
    from agent.verify import support

    result = support(p["sentence"], p["quotes"], context=p["context"], question=p["question"], chunk=p["chunk"],
                     embed=_no_embedding, support_min=-1.0)
    return "" if result.ok else result.reason


def _eligibility(p: dict) -> str:
    """Why a gold quote is not answer-eligible evidence (agent.verify.eligibility), or ""."""
    from agent.verify import eligibility

    try:
        reasons = [eligibility(q, p["chunk"]) for q in p["quotes"]]
    except TypeError:  # a base commit whose eligibility judges the quote alone
        reasons = [eligibility(q) for q in p["quotes"]]
    return next((f"quote is {r}" for r in reasons if r), "")


def _off_question(p: dict, embed) -> str:
    from agent.verify.relevance import RELEVANCE_MIN, relevance

    if not p["question"]:
        return ""
    score = relevance(p["question"], p["quotes"], embed=embed)
    return f"relevance {score:.2f} below {RELEVANCE_MIN:.2f}" if score < RELEVANCE_MIN else ""


def report_quotes(name: str, pairs: list[dict], *, relevance: bool, show: bool) -> dict:
    """Correct pairs whose gold quotes the eligibility rule rejects, and (with `relevance`) whose
    quotes agent.verify.relevance finds off the question: each is a false drop."""
    embed = None
    if relevance:
        from agent.local.embed import cached
        from knowledge.embeddings import get_embedder

        embed = cached(get_embedder("local").embed)
    ineligible = [(p, _eligibility(p)) for p in pairs]
    ineligible = [(p, r) for p, r in ineligible if r]
    off = [(p, r) for p in pairs for r in [_off_question(p, embed) if embed else ""] if r]
    out = {"set": name, "pairs": len(pairs), "quote_not_eligible": len(ineligible),
           "off_the_question": len(off) if relevance else None}
    print(json.dumps(out))
    if show:
        for p, r in ineligible + off:
            print(f"  DROP {p['id']}: {p['sentence'][:90]!r} -> {r}")
    return out


def report(name: str, pairs: list[dict], *, show: bool) -> dict:
    before = [_before(p) for p in pairs]
    after = [_after(p) for p in pairs]
    kept_before = [i for i, b in enumerate(before) if not b]
    newly = [i for i in kept_before if after[i]]
    out = {"set": name, "pairs": len(pairs), "dropped_before": len(pairs) - len(kept_before),
           "dropped_after": sum(1 for a in after if a), "newly_dropped": len(newly),
           "false_drop_rate_of_new_checks": round(len(newly) / len(kept_before), 4) if kept_before else None}
    print(json.dumps(out))
    if show:
        for i in newly:
            print(f"  NEW DROP {pairs[i]['id']}: {pairs[i]['sentence'][:110]!r} -> {after[i]}")
    return out


def report_slots(name: str, pairs: list[dict], *, show: bool) -> dict:
    """Correct pairs the rest of the support check keeps and the slot check drops, rule by rule
    (agent.verify.slots), and the subject-scope check (agent.verify.scope): each is a false drop."""
    from unittest import mock

    from agent.verify.scope import wider_subject
    from agent.verify.slots import misslotted_numbers
    from agent.verify.supported import _copied

    with mock.patch("agent.verify.supported.misslotted_numbers", lambda *a, **k: []), \
            mock.patch("agent.verify.supported.wider_subject", lambda *a, **k: ""):
        kept = [p for p in pairs if not _after(p)]
    out: dict = {"set": name, "pairs": len(pairs), "kept_without_slot_check": len(kept)}
    dropped: dict[int, str] = {}
    for rule in ("role", "percent", "noun"):
        hits = [(i, misslotted_numbers(p["sentence"], p["quotes"], checks=[rule])) for i, p in enumerate(kept)]
        hits = [(i, r) for i, r in hits if r]
        out[f"dropped_by_{rule}"] = len(hits)
        for i, r in hits:
            dropped.setdefault(i, f"{rule}: {r[0]}")
    out["dropped_by_slot_check"] = len(dropped)
    scope = [(i, wider_subject(p["sentence"], p["quotes"], question=p["question"],
                               written=not _copied(p["sentence"], p["quotes"]))) for i, p in enumerate(kept)]
    scope = [(i, r) for i, r in scope if r]
    out["dropped_by_scope"] = len(scope)
    for i, r in scope:
        dropped.setdefault(i, f"scope: {r}")
    out["false_drop_rate_slots_and_scope"] = round(len(dropped) / len(kept), 4) if kept else None
    print(json.dumps(out))
    if show:
        for i, why in dropped.items():
            print(f"  SLOT DROP {kept[i]['id']}: {kept[i]['sentence'][:110]!r} -> {why}")
    return out


def gate_rows(split: str) -> list[dict]:
    """Per answerable question: its gold spans and its gold pages' text (for `report_gate`)."""
    import csv

    from pypdf import PdfReader

    from agent.local.calibration import devbench_splits

    questions = json.loads((DATA / "devbench" / "questions.json").read_text())
    splits = devbench_splits(q["question_id"] for q in questions)
    titles = {r["file"].removesuffix(".pdf"): r["title"] for r in csv.DictReader((DATA / "papers" / "MANIFEST.csv").open())}
    rows = []
    for q in questions:
        if (split != "all" and splits[q["question_id"]] != split) or not q["answerable"] \
                or not q.get("required_evidence_spans"):
            continue
        pages = []
        for ref in q["expected_pages"]:
            reader = PdfReader(str(DATA / "papers" / f"{ref['doc_id']}.pdf"))
            pages.append((titles.get(ref["doc_id"], ""), _clean(reader.pages[ref["page"] - 1].extract_text() or "")))
        rows.append({"id": q["question_id"], "question": q["question"], "spans": [_clean(x) for x in q["required_evidence_spans"]],
                     "pages": pages})
    return rows


def report_gate(name: str, rows: list[dict], *, show: bool) -> dict:
    """How many gold sentences, and how many other sentences, the local gate accepts."""
    from agent.llm.drafts import local_answer_quotes
    from agent.local.embed import cached
    from agent.local.planner import RulePlanner
    from agent.types import Source
    from agent.verify import find_quote
    from knowledge.embeddings import get_embedder

    embed = cached(get_embedder("local").embed)
    spans = found = accepted = questions_any = others = others_accepted = 0
    for row in rows:
        sources = []
        for title, text in row["pages"]:
            words = text.split(" ")
            for start in range(0, max(len(words) - 30, 1), 120):
                sources.append(Source(chunk_id=len(sources) + 1, document_title=title,
                                      text=" ".join(words[start:start + 150])))
        needs = list(RulePlanner().plan(row["question"]).facts) or [row["question"]]
        answering = local_answer_quotes(row["question"], needs, sources, embed=embed)
        gold = [a for a in answering if any(find_quote(sp, a) >= 0 or find_quote(a, sp) >= 0 for sp in row["spans"])]
        hit = [sp for sp in row["spans"] if any(find_quote(sp, a) >= 0 or find_quote(a, sp) >= 0 for a in answering)]
        present = [sp for sp in row["spans"] if any(find_quote(sp, s.text) >= 0 for s in sources)]
        spans += len(row["spans"])
        found += len(present)
        accepted += len(hit)
        questions_any += bool(hit)
        others_accepted += len(answering) - len(gold)
        others += 1
        if show:
            print(f"  {row['id']}: gold spans accepted {len(hit)}/{len(present)} (in the chunks), "
                  f"other sentences accepted {len(answering) - len(gold)}")
    out = {"set": name, "questions": len(rows), "gold_spans": spans, "gold_spans_in_chunks": found,
           "gold_spans_accepted": accepted, "questions_with_a_gold_span_accepted": questions_any,
           "other_sentences_accepted_per_question": round(others_accepted / max(others, 1), 2)}
    print(json.dumps(out))
    return out


def report_gate_retrieved(split: str, var: str, slug: str, *, show: bool, need_min: float | None = None) -> dict:
    """The gate over the sentences the LLM path shows the model, on retrieved chunks."""
    sys.path.insert(0, str(ROOT / "bench"))
    from _devbench_common import django_setup

    django_setup(Path(var))
    from agent.llm.candidates import candidate_sentences
    from agent.llm.drafts import local_answer_quotes
    from agent.local.calibration import devbench_splits
    from agent.local.embed import cached
    from agent.local.planner import RulePlanner
    from agent.retrieval import CollectionRetriever
    from agent.verify import find_quote, normalise
    from knowledge.embeddings import get_embedder
    from knowledge.models import Collection

    embed = cached(get_embedder("local").embed)
    retriever = CollectionRetriever(Collection.objects.get(slug=slug))
    questions = json.loads((DATA / "devbench" / "questions.json").read_text())
    splits = devbench_splits(q["question_id"] for q in questions)
    counts = {"answerable": 0, "gold_shown": 0, "gold_kept": 0, "gold_sentences_shown": 0, "gold_sentences_kept": 0,
              "others_shown": 0, "others_kept": 0,
              "out_of_scope": 0, "out_of_scope_with_a_kept_sentence": 0}
    for q in questions:
        if split != "all" and splits[q["question_id"]] != split:
            continue
        if q["expected_behavior"] not in ("ANSWER", "REFUSE_OUT_OF_SCOPE"):
            continue
        plan = RulePlanner().plan(q["question"])
        needs = list(plan.facts) or [q["question"]]
        sources, seen = [], set()
        for query in plan.sub_queries:
            for source in retriever.retrieve(query, k=5):
                if source.chunk_id not in seen:
                    seen.add(source.chunk_id)
                    sources.append(source)
        shown = candidate_sentences(q["question"], needs, plan.premise, sources, embed=embed)
        kept = local_answer_quotes(q["question"], needs, sources, embed=embed, need_min=need_min)
        spans = [_clean(x) for x in q.get("required_evidence_spans") or []]
        gold = [c for c in shown if any(find_quote(sp, c.text) >= 0 or find_quote(c.text, sp) >= 0 for sp in spans)]
        gold_kept = [c for c in gold if normalise(c.text) in kept]
        others = [c for c in shown if c not in gold]
        others_kept = [c for c in others if normalise(c.text) in kept]
        if q["expected_behavior"] == "ANSWER":
            counts["answerable"] += 1
            counts["gold_shown"] += bool(gold)
            counts["gold_kept"] += bool(gold_kept)
            counts["gold_sentences_shown"] += len(gold)
            counts["gold_sentences_kept"] += len(gold_kept)
            counts["others_shown"] += len(others)
            counts["others_kept"] += len(others_kept)
        else:
            counts["out_of_scope"] += 1
            counts["out_of_scope_with_a_kept_sentence"] += bool(others_kept)
        if show:
            print(f"  {q['question_id']} {q['expected_behavior']}: shown {len(shown)}, gold shown {len(gold)} "
                  f"kept {len(gold_kept)}, others kept {len(others_kept)}/{len(others)}")
    out = {"set": f"devbench {split}, retrieved", "need_min": need_min, **counts}
    print(json.dumps(out))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="calibration", choices=["calibration", "test", "all"])
    parser.add_argument("--scifact", type=int, default=0, help="SUPPORT claims to use (0: all)")
    parser.add_argument("--quiet", action="store_true", help="do not print each newly dropped sentence")
    parser.add_argument("--quotes", action="store_true",
                        help="instead: gold quotes the eligibility rule rejects, and (--relevance) quotes off the question")
    parser.add_argument("--relevance", action="store_true", help="with --quotes: also the relevance check (embeds)")
    parser.add_argument("--slots", action="store_true", help="instead: the slot check's drops, rule by rule")
    parser.add_argument("--gate", action="store_true", help="instead: gold sentences the local gate accepts")
    parser.add_argument("--var", default="", help="with --gate: an ingested devbench var dir (retrieve)")
    parser.add_argument("--collection", default="blind", help="with --gate --var: the collection's slug")
    parser.add_argument("--need-min", type=float, default=None, help="with --gate --var: another gate threshold")
    args = parser.parse_args()
    if args.gate and args.var:
        report_gate_retrieved(args.split, args.var, args.collection, show=not args.quiet, need_min=args.need_min)
        return
    if args.gate:
        report_gate(f"devbench {args.split}", gate_rows(args.split), show=not args.quiet)
        return
    pairs = devbench_pairs(args.split)
    if args.slots:
        report_slots(f"devbench {args.split}", pairs, show=not args.quiet)
        copied = {(p["id"], q): {**p, "sentence": q, "quotes": [q]} for p in pairs for q in p["quotes"]}
        report_slots(f"devbench {args.split}, gold sentences copied", list(copied.values()), show=not args.quiet)
        report_slots("scifact SUPPORT", scifact_pairs(args.scifact), show=not args.quiet)
        return
    if args.quotes:
        report_quotes(f"devbench {args.split}", pairs, relevance=args.relevance, show=not args.quiet)
        copied = {(p["id"], q): {**p, "sentence": q, "quotes": [q]} for p in pairs for q in p["quotes"]}
        report_quotes(f"devbench {args.split}, gold sentences copied", list(copied.values()),
                      relevance=args.relevance, show=not args.quiet)
        report_quotes("scifact SUPPORT", scifact_pairs(args.scifact), relevance=False, show=not args.quiet)
        return
    report(f"devbench {args.split}", pairs, show=not args.quiet)
    # An extractive answer (the local backend's): each gold sentence copied, quoting itself.
    copied = {(p["id"], q): {**p, "sentence": q, "quotes": [q]} for p in pairs for q in p["quotes"]}
    report(f"devbench {args.split}, gold sentences copied", list(copied.values()), show=not args.quiet)
    report("scifact SUPPORT", scifact_pairs(args.scifact), show=not args.quiet)


if __name__ == "__main__":
    main()
