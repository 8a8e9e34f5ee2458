"""Retrieval alone on real papers: at what rank does each search mode find devbench's evidence?

    .venv/bin/python bench/devbench_retrieval.py              # every question with evidence, all modes
    .venv/bin/python bench/devbench_retrieval.py --show       # also one line per evidence span

SciFact (manage.py eval_retrieval) measures ranking on short abstracts; this measures it on
the 25 papers of ../shared/data/papers, chunked by the portal's own ingestion, with the
devbench questions as queries (the raw question, as the plain pipelines send it; the agent
adds sub-queries and reformulations on top). For every required evidence span, the best
rank of a chunk that holds it (agent.benchmark.span_in_text: the same matching as the
benchmark report, so a span cut by a chunk boundary still counts); span recall@k is the
share of spans held by one of the k chunks a search with k=k returns (so candidate pools and
the rerank depth are the portal's for that k, as in eval_retrieval), question recall@k the
share of questions with every span within k.

Uses the database and index of bench/devbench.py under var/bench/ (ingesting the papers
there on first use).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _devbench_common import ROOT, collection_with_papers, django_setup, load_questions, paper_stems

CUTS = (1, 5, 10, 20, 60)
MODES = ("bm25", "dense", "rrf", "minmax", "rrf+sentence")


def found(collection, question: dict, mode: str, k: int, chunks: dict[int, str]) -> list[int | None]:
    """Per required span: the best rank (1-based) of a chunk holding it among a k-search's hits."""
    from agent.benchmark import normalise, span_in_text
    from knowledge.indexing.search import index_search

    base, _, rerank = mode.partition("+")
    hits = index_search(collection=collection, query=question["question"], k=k, mode=base, rerank=rerank or None)
    ranks = []
    for span in question["required_evidence_spans"]:
        wanted = normalise(span)
        ranked = [i for i, h in enumerate(hits, 1) if span_in_text(wanted, chunks[h.chunk_id], normalised=True)]
        ranks.append(ranked[0] if ranked else None)
    return ranks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--show", action="store_true", help="one line per span and mode")
    parser.add_argument("--var", default=str(ROOT / "var" / "bench"))
    args = parser.parse_args()
    django_setup(Path(args.var))
    from agent.benchmark import normalise
    from knowledge.models import Chunk

    _, collection = collection_with_papers(paper_stems())
    chunks = {pk: normalise(text) for pk, text in
              Chunk.objects.filter(document__collection=collection).values_list("pk", "text")}
    questions = [q for q in load_questions() if q["required_evidence_spans"]]
    spans = sum(len(q["required_evidence_spans"]) for q in questions)
    print(f"{len(questions)} questions with {spans} evidence spans, {len(chunks)} chunks in {collection.slug!r}\n")
    print("| mode | " + " | ".join(f"span recall@{k}" for k in CUTS) + " | question recall@5 | question recall@10 |")
    print("| --- |" + " ---: |" * (len(CUTS) + 2))
    for mode in MODES:
        # found_at[k][i]: question i's span ranks in a search with k=k.
        found_at = {k: [found(collection, q, mode, k, chunks) for q in questions] for k in CUTS}
        if args.show:
            for q, ranks in zip(questions, found_at[CUTS[-1]], strict=True):
                print(f"{mode:13} {q['question_id']} {q['category'][:16]:16} ranks={ranks}", file=sys.stderr)
        span_recall = [sum(r is not None for ranks in found_at[k] for r in ranks) / spans for k in CUTS]
        question_recall = [sum(None not in ranks for ranks in found_at[k]) / len(questions) for k in (5, 10)]
        print(f"| {mode} | " + " | ".join(f"{v:.3f}" for v in span_recall + question_recall) + " |", flush=True)


if __name__ == "__main__":
    main()
