"""Compare sentence segmenters on the shared papers (the choice behind knowledge.text).

    .venv/bin/python bench/sentence_splitters.py            # candidates that are installed
    PYTHONPATH=/tmp/eval .venv/bin/python bench/sentence_splitters.py   # with pysbd/syntok installed there

For every candidate: the share of devbench evidence spans found whole inside one sentence or
two adjacent sentences of their paper (paragraphs of the cleaned text, split by the
candidate), how many of a handful of hard cases written for this comparison it splits right,
and its speed (characters per second over the 25 papers).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _shared_data import SHARED

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = SHARED

# The split the agent's local roles used before knowledge.text (agent/local/text.py).
_OLD_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[\(\"'])")

# Written for this comparison (not from the papers): each text and the sentences it holds.
HARD_CASES: list[tuple[str, int]] = [
    ("We follow Liu et al. (2019) and tune it. The gain is small.", 2),
    ("The loss fell to 0.35 after 3.5 epochs. It then rose again.", 2),
    ("Dense retrievers [12] beat BM25 [3, 4]. Sparse ones do not [7].", 2),
    ("See Fig. 3 and Sec. 4.1 for the details. Table 2 lists the rest.", 2),
    ("We use e.g. BM25, i.e. a sparse model. It is fast.", 2),
    ("She wrote \"the model fails.\" Nobody agreed.", 2),
    ("The U.S. data set is large. It has 5 M rows.", 2),
    ("Results are in Eq. 7 and in App. B. They hold for all k.", 2),
]


def _candidates() -> dict[str, Callable[[str], list[str]]]:
    out: dict[str, Callable[[str], list[str]]] = {}
    out["regex (agent, before)"] = lambda t: [s for s in _OLD_SENT_END.split(t) if s.strip()]
    try:
        import nupunkt

        out["nupunkt"] = nupunkt.sent_tokenize
    except ImportError:
        pass
    try:
        import pysbd

        seg = pysbd.Segmenter(language="en", clean=False)
        out["pysbd"] = seg.segment
    except ImportError:
        pass
    try:
        from syntok import segmenter

        out["syntok"] = lambda t: ["".join(str(tok) for tok in s) for p in segmenter.analyze(t) for s in p]
    except ImportError:
        pass
    try:
        from knowledge.text import split_sentences

        out["knowledge.text (after)"] = split_sentences
    except ImportError:
        pass
    return out


def _norm(text: str) -> str:
    from agent.benchmark import normalise

    return normalise(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args()
    from knowledge.extract import extract_pdf

    questions = json.loads((DATA / "devbench" / "questions.json").read_text())
    paragraphs: dict[str, list[str]] = {}
    for path in sorted((DATA / "papers").glob("*.pdf")):
        pages = extract_pdf(path).pages
        paragraphs[path.stem] = [p for page in pages for p in page.text.split("\n\n") if p.strip()]
    spans = [(doc, span) for q in questions for span in q["required_evidence_spans"] for doc in q["expected_doc_ids"][:1]]
    total_chars = sum(len(p) for ps in paragraphs.values() for p in ps)
    print(f"{len(paragraphs)} papers, {total_chars:,} characters, {len(spans)} devbench spans\n")
    print("| splitter | spans whole in 1 sentence | in 1 or 2 adjacent | hard cases right | chars/s |")
    print("| --- | --- | --- | --- | --- |")
    for name, split in _candidates().items():
        t = time.perf_counter()
        sentences = {doc: [s for p in ps for s in split(p)] for doc, ps in paragraphs.items()}
        speed = total_chars / (time.perf_counter() - t)
        normed = {doc: [_norm(s) for s in ss] for doc, ss in sentences.items()}
        one = two = 0
        for doc, span in spans:
            want = _norm(span)
            ss = normed.get(doc, [])
            if any(want in s for s in ss):
                one += 1
                two += 1
            elif any(want in a + b for a, b in itertools.pairwise(ss)):
                two += 1
        right = sum(len([s for s in split(text) if s.strip()]) == n for text, n in HARD_CASES)
        print(f"| {name} | {one}/{len(spans)} ({100 * one / len(spans):.0f} %) | {two}/{len(spans)} "
              f"({100 * two / len(spans):.0f} %) | {right}/{len(HARD_CASES)} | {speed:,.0f} |")


if __name__ == "__main__":
    main()
