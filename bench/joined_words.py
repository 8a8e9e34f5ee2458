"""What the local roles read differently now that they join words a line break cut (stop 31,
docs/benchmarks.md "Local roles read joined words"), and what it costs an audit.

    nice -n 10 .venv/bin/python bench/joined_words.py --var var/bench-blind            # counts
    nice -n 10 .venv/bin/python bench/joined_words.py --var var/bench-blind --time 16  # + audit time

Counts: the collection's non-reference chunks and sentences whose text the joiner changes (each
document's whole vocabulary as evidence, as the auditor reads them), the words joined or given
their hyphen back, and the BM25 terms the stored text lacks. --time N: the agentic loop on the
first N calibration questions of bench/blind2 and bench/blind3, then each run's final sources
audited three times with and three times without joining, interleaved (fastest of each).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _devbench_common as common


def counts(collection: str) -> None:
    from knowledge.models import Chunk
    from knowledge.retrieval.tokenize import tokenize
    from knowledge.text import join_line_breaks, line_broken, split_sentences
    from knowledge.vocabulary import document_vocabulary

    chunks = sentences = cut = read = read_sentences = missing = 0
    kinds: Counter = Counter()
    words: Counter = Counter()
    for chunk in Chunk.objects.filter(is_reference=False, document__collection__slug=collection).iterator():
        chunks += 1
        split = split_sentences(chunk.text)
        sentences += len(split)
        if not line_broken(chunk.text):
            continue
        cut += 1
        evidence = [document_vocabulary(chunk.document_id)]
        joined = join_line_breaks(chunk.text, evidence)
        if joined == chunk.text:
            continue
        read += 1
        read_sentences += sum(join_line_breaks(s, evidence) != s for s in split)
        for m in re.finditer(r"(\w[\w.\-/]*)-\s(\w+)", chunk.text):
            whole = join_line_breaks(m.group(0), evidence)
            if whole != m.group(0):
                kinds["hyphen kept" if whole == f"{m.group(1)}-{m.group(2)}" else "joined"] += 1
                words[whole] += 1
        missing += len(set(tokenize(joined)) - set(tokenize(chunk.text)))
    print(f"chunks {chunks}, with a line-break hyphen {cut}, read differently {read}; "
          f"sentences {sentences}, read differently {read_sentences}")
    print(dict(kinds), words.most_common(30))
    print(f"BM25 terms of the joined text that the stored text lacks: {missing}")


def audit_time(collection: str, n: int) -> None:
    from agent.configs import build_roles, get_config
    from agent.local.auditor import LocalAuditor
    from agent.loop import AgentLoop
    from agent.retrieval import CollectionRetriever, portal_embed
    from knowledge.models import Collection

    cfg = get_config("agentic")
    retriever = CollectionRetriever(Collection.objects.get(slug=collection), mode=cfg.retrieval_mode)
    embed = portal_embed()
    questions = [q["question"] for name in ("blind2", "blind3")
                 for q in map(json.loads, (common.ROOT / "bench" / name / "questions.jsonl").open())
                 if q.get("split") == "calibration"][:n]

    class Stored(LocalAuditor):
        def _read(self, sources):
            return sources, lambda text, documents: text

    joined, stored = LocalAuditor(embed, vocabulary=retriever.vocabulary), Stored(embed)
    base, added = [], []
    for question in questions:
        result = AgentLoop(cfg, build_roles(cfg, "local", embed=embed), retriever, concurrent=False).run(question)
        if result.audit is None:
            continue
        times: dict[int, list[float]] = {0: [], 1: []}
        for _ in range(3):
            for k, auditor in enumerate((stored, joined)):
                started = time.perf_counter()
                auditor.audit(question, result.plan, result.sources, can_retry=False)
                times[k].append(time.perf_counter() - started)
        base.append(min(times[0]))
        added.append(min(times[1]) - min(times[0]))
    print(f"{len(base)} audits: p50 {1000 * statistics.median(base):.0f} ms without joining; added by joining "
          f"p50 {1000 * statistics.median(added):.1f} ms, max {1000 * max(added):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-blind"))
    parser.add_argument("--collection", default="blind")
    parser.add_argument("--time", type=int, default=0, help="questions to time audits on (0: none)")
    args = parser.parse_args()
    common.django_setup(Path(args.var))
    counts(args.collection)
    if args.time:
        audit_time(args.collection, args.time)


if __name__ == "__main__":
    main()
