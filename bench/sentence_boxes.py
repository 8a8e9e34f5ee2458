"""What sentence boxes (knowledge.pdf_boxes, for the PDF viewer) cost and how many sentences
they place, on the shared papers.

    .venv/bin/python bench/sentence_boxes.py            # all 25 papers
    .venv/bin/python bench/sentence_boxes.py --limit 5  # the first five (CI size)

Per paper: pypdf extraction + cleaning (the reference, measured in the same run), chunking,
then the boxes (pdfium text + match of every chunk sentence); the share of chunk sentences
placed, rectangles per placed sentence, and the JSON size stored on the chunks.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from _shared_data import SHARED

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
DATA = SHARED


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    from knowledge import extract
    from knowledge.chunking import chunk_pages
    from knowledge.pdf_boxes import chunk_boxes
    from knowledge.text import sentence_spans

    papers = sorted((DATA / "papers").glob("*.pdf"))
    if args.limit:
        papers = papers[: args.limit]
    print(f"load: {os.getloadavg()[0]:.1f} (1-min average) on {os.cpu_count()} cores")
    rows, ratios = [], []
    totals = {"pages": 0, "extract": 0.0, "boxes": 0.0, "sentences": 0, "placed": 0, "rects": 0, "bytes": 0}
    for path in papers:
        t = time.perf_counter()
        extracted = extract.extract_pdf(path)
        extract_s = time.perf_counter() - t
        specs = chunk_pages(extracted.pages)
        t = time.perf_counter()
        boxes = chunk_boxes(path, specs)
        took = time.perf_counter() - t
        sentences = sum(len(sentence_spans(s.text)) for s in specs)
        placed = sum(len(b) for b in boxes)
        rects = sum(len(r) for b in boxes for _, _, r in b)
        size = sum(len(json.dumps(b, separators=(",", ":"))) for b in boxes)
        ratios.append(took / extract_s)
        for key, value in (("pages", extracted.page_count), ("extract", extract_s), ("boxes", took),
                           ("sentences", sentences), ("placed", placed), ("rects", rects), ("bytes", size)):
            totals[key] += value
        rows.append(f"| {path.stem[:44]} | {extracted.page_count} | {extract_s:.2f} | {took:.2f} | "
                    f"{placed}/{sentences} ({100 * placed / max(sentences, 1):.1f} %) | {size // 1024} |")
    print("| paper | pages | extract s (pypdf) | boxes s | sentences placed | boxes KB |")
    print("| --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    print(f"| all {len(papers)} | {totals['pages']} | {totals['extract']:.1f} | {totals['boxes']:.1f} | "
          f"{totals['placed']}/{totals['sentences']} ({100 * totals['placed'] / max(totals['sentences'], 1):.1f} %) | "
          f"{totals['bytes'] // 1024} |")
    print(f"median boxes/extract time ratio: {statistics.median(ratios):.2f}; "
          f"rectangles per placed sentence: {totals['rects'] / max(totals['placed'], 1):.1f}; "
          f"boxes per page: {1000 * totals['boxes'] / max(totals['pages'], 1):.0f} ms")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
