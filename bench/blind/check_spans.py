"""Check the blind set: every evidence span is verbatim in its paper's pypdf text, on its page.

    .venv/bin/python bench/blind/check_spans.py                 # exit 1 on any problem
    .venv/bin/python bench/blind/check_spans.py --cache /tmp/h7/txt

"Verbatim" means: after collapsing every run of whitespace to one space (pypdf breaks lines
where the PDF does), the span is a substring of the page's text. Nothing else is forgiven:
hyphenation, ligatures and case must be as pypdf extracted them, so a span that passes here
was copied, not remembered. The page texts are cached (one file per paper) because pypdf
takes minutes over the whole collection.

It also checks the shape of the set: the fields, the expected outcome of each category, and
that answerable questions spread over at least nine papers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SHARED = Path(os.environ.get("GROUNDED_SHARED_DATA", ROOT.parent / "shared" / "data"))
PAPERS = SHARED / "papers"
QUESTIONS = HERE / "questions.jsonl"
PAGE_MARK = re.compile(r"^=== PAGE (\d+) ===$", re.M)

EXPECTED = {  # category -> (expected outcome, how many questions)
    "answerable": ("ANSWER", 11),
    "multi_part": ("ANSWER", 3),
    "false_premise": ("FALSE_PREMISE", 4),
    "out_of_scope": ("REFUSAL", 3),
    "vague": ("CLARIFY", 3),
}
FIELDS = ("question_id", "question", "category", "expected_outcome", "documents", "evidence", "gold_answer")


def collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def page_texts(pdf: Path, cache: Path) -> dict[int, str]:
    """1-based page number -> whitespace-collapsed pypdf text of that page (cached)."""
    cached = cache / f"{pdf.stem}.txt"
    if not cached.exists():
        from pypdf import PdfReader

        pages = PdfReader(str(pdf)).pages
        cache.mkdir(parents=True, exist_ok=True)
        cached.write_text("".join(f"\n=== PAGE {i} ===\n{p.extract_text() or ''}" for i, p in enumerate(pages, 1)))
    raw = cached.read_text()
    marks = list(PAGE_MARK.finditer(raw))
    return {int(m.group(1)): collapse(raw[m.end(): marks[i + 1].start() if i + 1 < len(marks) else len(raw)])
            for i, m in enumerate(marks)}


def load(path: Path = QUESTIONS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def problems(questions: list[dict], cache: Path) -> list[str]:
    out: list[str] = []
    known = {p.name for p in PAPERS.glob("*.pdf")}
    texts: dict[str, dict[int, str]] = {}
    counts = Counter(q.get("category") for q in questions)
    for cat, (_, n) in EXPECTED.items():
        if counts[cat] != n:
            out.append(f"category {cat}: {counts[cat]} questions, expected {n}")
    ids = Counter(q.get("question_id") for q in questions)
    out += [f"question_id {i} used {n} times" for i, n in ids.items() if n > 1]
    for q in questions:
        qid = q.get("question_id", "?")
        missing = [f for f in FIELDS if f not in q]
        if missing:
            out.append(f"{qid}: missing {missing}")
            continue
        want = EXPECTED.get(q["category"], (None,))[0]
        if q["expected_outcome"] != want:
            out.append(f"{qid}: expected_outcome {q['expected_outcome']} for category {q['category']} (want {want})")
        needs_evidence = q["expected_outcome"] in ("ANSWER", "FALSE_PREMISE")
        if needs_evidence != bool(q["evidence"]):
            out.append(f"{qid}: {'no' if needs_evidence else 'unexpected'} evidence for {q['expected_outcome']}")
        for doc in q["documents"]:
            if doc not in known:
                out.append(f"{qid}: unknown document {doc}")
        for ev in q["evidence"]:
            doc, page, span = ev["document"], ev["page"], collapse(ev["text"])
            if doc not in q["documents"] or doc not in known:
                out.append(f"{qid}: evidence names {doc}, not among its known documents")
                continue
            if doc not in texts:
                texts[doc] = page_texts(PAPERS / doc, cache)
            if span not in texts[doc].get(page, ""):
                elsewhere = [p for p, t in texts[doc].items() if span in t]
                where = f"found on page(s) {elsewhere} instead" if elsewhere else "not in the paper"
                out.append(f"{qid}: span {span[:60]!r}... not on page {page} of {doc}: {where}")
    papers = {d for q in questions if q.get("category") == "answerable" for d in q.get("documents", [])}
    if len(papers) < 9:
        out.append(f"answerable questions cover {len(papers)} papers, want at least 9")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", default=str(QUESTIONS))
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "grounded-blind-texts"),
                        help="folder for the extracted page texts")
    args = parser.parse_args()
    if not PAPERS.is_dir():
        sys.exit(f"no papers at {PAPERS} (set GROUNDED_SHARED_DATA)")
    questions = load(Path(args.questions))
    found = problems(questions, Path(args.cache))
    for p in found:
        print(p)
    spans = sum(len(q.get("evidence", [])) for q in questions)
    print(f"{len(questions)} questions, {spans} evidence spans: {'OK' if not found else f'{len(found)} problem(s)'}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
