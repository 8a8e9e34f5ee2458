"""Evidence text quality on the shared papers: headings, figure labels and devbench spans.

    PYTHONDONTWRITEBYTECODE=1 .venv/bin/python bench/evidence_text.py                # this tree
    PYTHONDONTWRITEBYTECODE=1 .venv/bin/python bench/evidence_text.py --root ../main # another checkout (before)
    ... --sample 100 --sample-out /tmp/eligible.txt                                  # sentences to read

Runs the real pure pipeline of the tree at --root: knowledge.pdf.extract_pdf, then
knowledge.chunking.chunk_pages with the embedding model's tokenizer, then the sentences the
agent quotes (agent.local.text.split_sentences) of every chunk outside the reference list.
A sentence is answer-eligible by knowledge.text.is_answer_eligible where the tree has it;
a tree without it is measured with the filter it had (agent.local.text.is_prose).

Reported:
- the share of sentences that start with a section number ("6.1 Machine Translation On ...")
  or contain a figure-label run (three numbers in a row such as axis ticks "55 60 65", or a
  number glued to a word, "75Accuracy"), among all sentences and among eligible ones. The
  two patterns are this script's own, simpler than the classifier's rules, so they are a
  check on it, not a copy of it;
- devbench evidence spans found whole inside one eligible sentence, or two adjacent ones,
  of a chunk of their paper (letters and digits compared, case-folded);
- time to extract, chunk and split the 25 papers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import re
import sys
import time
import unicodedata
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SECTION_START = re.compile(r"^(?:[1-9]\d?(?:\.\d{1,2}){0,3}|[A-H]\.\d{1,2}(?:\.\d{1,2})*)\.?\s+[A-Z]")
TICK = re.compile(r"^[-+~(]?\d+(?:\.\d+)?(?:%|k|K|M|st|nd|rd|th)?[)]?$")
# Two digits or a decimal: "75Accuracy" is a tick run into its axis title; "6The" (a footnote
# mark) and "2WikiMQA" (a name) are not.
GLUED = re.compile(r"(?<![A-Za-z\d])(?:\d\d|\d\.\d)[A-Z][a-z]{2,}")


def _key(text: str) -> str:
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).casefold())


def _figure_run(sentence: str) -> bool:
    run = 0
    for token in sentence.split():
        run = run + 1 if TICK.match(token) else 0
        if run >= 3:
            return True
    return bool(GLUED.search(sentence))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=HERE, help="checkout whose code is measured")
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("GROUNDED_SHARED_DATA", HERE.parent / "shared" / "data")))
    parser.add_argument("--sample", type=int, default=0, help="write this many random eligible sentences")
    parser.add_argument("--sample-out", type=Path, default=Path("eligible_sample.txt"))
    args = parser.parse_args()
    sys.path.insert(0, str(args.root.resolve()))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from agent.local.text import split_sentences
    from knowledge.chunking import chunk_pages
    from knowledge.pdf import extract_pdf

    try:
        from knowledge.text import is_answer_eligible as eligible
        rule = "knowledge.text.is_answer_eligible"
    except ImportError:
        from agent.local.text import is_prose as eligible
        rule = "agent.local.text.is_prose"

    questions = json.loads((args.data / "devbench" / "questions.json").read_text())
    timing = {"extract": 0.0, "chunk": 0.0, "split": 0.0}
    per_doc: dict[str, list[list[tuple[str, bool]]]] = {}
    pages = n_chunks = 0
    for path in sorted((args.data / "papers").glob("*.pdf")):
        t = time.perf_counter()
        extracted = extract_pdf(path)
        timing["extract"] += time.perf_counter() - t
        pages += extracted.page_count
        t = time.perf_counter()
        chunks = chunk_pages(extracted.pages)
        n_chunks += len(chunks)
        timing["chunk"] += time.perf_counter() - t
        t = time.perf_counter()
        per_doc[path.stem] = [[(s, eligible(s)) for s in split_sentences(c.text)] for c in chunks if not c.is_reference]
        timing["split"] += time.perf_counter() - t

    sentences = [s for chunks in per_doc.values() for chunk in chunks for s in chunk]
    ok = [s for s, e in sentences if e]
    all_ = [s for s, _ in sentences]
    print(f"tree: {args.root.resolve()}  eligibility: {rule}")
    print(f"{len(per_doc)} papers, {pages} pages, {n_chunks} chunks; extract {timing['extract']:.1f} s, chunk {timing['chunk']:.1f} s, "
          f"split+classify {timing['split']:.1f} s")
    print(f"sentences in non-reference chunks: {len(all_)}, answer-eligible: {len(ok)} ({100 * len(ok) / len(all_):.1f} %)")
    for label, group in (("all sentences", all_), ("eligible sentences", ok)):
        heads = sum(1 for s in group if SECTION_START.match(s))
        figs = sum(1 for s in group if _figure_run(s))
        print(f"  {label}: start with a section number {heads} ({100 * heads / max(1, len(group)):.2f} %), "
              f"figure-label runs {figs} ({100 * figs / max(1, len(group)):.2f} %)")

    spans = [(q["expected_doc_ids"], span) for q in questions for span in q["required_evidence_spans"]]
    counts = {"any sentence, 1": 0, "eligible, 1": 0, "eligible, 1 or 2 adjacent": 0}
    for docs, span in spans:
        want = _key(span)
        found = dict.fromkeys(counts, False)
        for doc in docs:
            for chunk in per_doc.get(doc, []):
                keys = [(_key(s), e) for s, e in chunk]
                if any(want in k for k, _ in keys):
                    found["any sentence, 1"] = True
                if any(want in k for k, e in keys if e):
                    found["eligible, 1"] = found["eligible, 1 or 2 adjacent"] = True
                if any(want in a + b for (a, ea), (b, eb) in itertools.pairwise(keys) if ea and eb):
                    found["eligible, 1 or 2 adjacent"] = True
        for name, hit in found.items():
            counts[name] += hit
    for name, n in counts.items():
        print(f"  devbench spans whole in {name}: {n}/{len(spans)} ({100 * n / len(spans):.0f} %)")
    if args.sample:
        rng = random.Random(14)
        picked = rng.sample(ok, min(args.sample, len(ok)))
        args.sample_out.write_text("\n".join(f"{i + 1:3d}. {s}" for i, s in enumerate(picked)) + "\n")
        print(f"  {len(picked)} eligible sentences written to {args.sample_out}")


if __name__ == "__main__":
    main()
