"""The checks shared by the blind evaluation sets (bench/blind, bench/blind2, bench/blind3, bench/blind4).

Each set's rules are in `SETS` (`SetRules`: how many questions per category, how many papers the
answerable ones must cover, whether it has calibration/test splits and `checked_absent` patterns);
its `check_spans.py` is a thin command over `set_cli`:

    .venv/bin/python bench/blind3/check_spans.py                 # exit 1 on any problem
    .venv/bin/python bench/blind3/check_spans.py --cache /tmp/qset3/txt

"Verbatim" means: after collapsing every run of whitespace to one space (pypdf breaks lines
where the PDF does), the span is a substring of its page's pypdf text. Nothing else is forgiven:
hyphenation, ligatures and case must be as pypdf extracted them, so a span that passes was
copied, not remembered. Page texts are cached (one file per paper): pypdf is slow.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _shared_data import SHARED, missing

ROOT = Path(__file__).resolve().parent.parent
PAPERS = SHARED / "papers"
PAGE_MARK = re.compile(r"^=== PAGE (\d+) ===$", re.M)
FIELDS = ("question_id", "question", "category", "expected_outcome", "documents", "evidence", "gold_answer")
SPLITS = ("calibration", "test")
# `checked_absent` holds the grep command used, e.g. "grep -ilE 'Qwen' (no hits)": the quoted pattern.
ABSENT_PATTERN = re.compile(r"grep -ilE '([^']+)'")
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "grounded-blind-texts"


@dataclass(frozen=True)
class SetRules:
    """What one set must look like besides verbatim spans."""

    expected: dict[str, tuple[str, int]]  # category -> (expected outcome, how many questions)
    min_papers: int = 9  # the answerable questions cover at least this many papers
    splits: bool = False  # every question has a split, calibration and test balanced per category
    absent: bool = False  # each out-of-scope question's `checked_absent` pattern matches no paper


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


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def shape_problems(questions: list[dict], rules: SetRules) -> list[str]:
    """Counts per category, unique ids, the fields, each category's outcome, evidence where one is needed."""
    out: list[str] = []
    counts = Counter(q.get("category") for q in questions)
    for cat, (_, n) in rules.expected.items():
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
        want = rules.expected.get(q["category"], (None,))[0]
        if q["expected_outcome"] != want:
            out.append(f"{qid}: expected_outcome {q['expected_outcome']} for category {q['category']} (want {want})")
        needs_evidence = q["expected_outcome"] in ("ANSWER", "FALSE_PREMISE")
        if needs_evidence != bool(q["evidence"]):
            out.append(f"{qid}: {'no' if needs_evidence else 'unexpected'} evidence for {q['expected_outcome']}")
    papers = {d for q in questions if q.get("category") == "answerable" for d in q.get("documents", [])}
    if len(papers) < rules.min_papers:
        out.append(f"answerable questions cover {len(papers)} papers, want at least {rules.min_papers}")
    return out


def span_problems(questions: list[dict], cache: Path) -> list[str]:
    """Every document is a known paper, and every evidence span is verbatim on its stated page."""
    out: list[str] = []
    known = {p.name for p in PAPERS.glob("*.pdf")}
    texts: dict[str, dict[int, str]] = {}
    for q in questions:
        if any(f not in q for f in FIELDS):
            continue  # reported by shape_problems
        qid = q["question_id"]
        out += [f"{qid}: unknown document {doc}" for doc in q["documents"] if doc not in known]
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
    return out


def split_problems(questions: list[dict], rules: SetRules) -> list[str]:
    out = [f"{q['question_id']}: split {q.get('split')!r}" for q in questions if q.get("split") not in SPLITS]
    per = Counter((q["category"], q.get("split")) for q in questions)
    for cat in rules.expected:
        if per[(cat, "calibration")] != per[(cat, "test")]:
            out.append(f"category {cat}: {per[(cat, 'calibration')]} calibration vs {per[(cat, 'test')]} test")
    return out


def absent_problems(questions: list[dict], cache: Path) -> list[str]:
    """Each out-of-scope pattern, run case-insensitively over every paper's text, must find nothing."""
    texts = {pdf.name: " ".join(page_texts(pdf, cache).values()) for pdf in sorted(PAPERS.glob("*.pdf"))}
    out = []
    for q in questions:
        if q["category"] != "out_of_scope":
            continue
        found = ABSENT_PATTERN.search(q.get("checked_absent", ""))
        if not found:
            out.append(f"{q['question_id']}: no grep pattern in checked_absent")
            continue
        hits = [name for name, text in texts.items() if re.search(found.group(1), text, re.I)]
        if hits:
            out.append(f"{q['question_id']}: pattern {found.group(1)!r} found in {hits}")
    return out


def problems(questions: list[dict], cache: Path, rules: SetRules) -> list[str]:
    """Every check the set's rules ask for, as readable lines (empty: the set is sound)."""
    found = shape_problems(questions, rules) + span_problems(questions, cache)
    if rules.splits:
        found += split_problems(questions, rules)
    if rules.absent:
        found += absent_problems(questions, cache)
    return found


# Each set's rules, by its folder under bench/.
_SIX_KINDS = {"answerable": ("ANSWER", 26), "multi_part": ("ANSWER", 6), "false_premise": ("FALSE_PREMISE", 6),
              "out_of_scope": ("REFUSAL", 6), "vague": ("CLARIFY", 4)}
SETS = {
    "blind": SetRules(expected={"answerable": ("ANSWER", 11), "multi_part": ("ANSWER", 3),
                                "false_premise": ("FALSE_PREMISE", 4), "out_of_scope": ("REFUSAL", 3),
                                "vague": ("CLARIFY", 3)}),
    "blind2": SetRules(expected=_SIX_KINDS, splits=True, absent=True),
    "blind3": SetRules(expected=_SIX_KINDS, min_papers=15, splits=True, absent=True),
    "blind4": SetRules(expected=_SIX_KINDS, min_papers=15, splits=True, absent=True),
}


def set_cli(script: str) -> tuple[Callable[[list[dict], Path], list[str]], Callable[[str], None]]:
    """For a set's check_spans.py (its `__file__`): `problems(questions, cache)` by that set's rules,
    and its command line `main(doc)`, which prints the problems and exits 1 if there are any."""
    folder = Path(script).resolve().parent
    rules = SETS[folder.name]

    def set_problems(questions: list[dict], cache: Path) -> list[str]:
        return problems(questions, cache, rules)

    def main(doc: str) -> None:
        parser = argparse.ArgumentParser(description=doc.split("\n")[0])
        parser.add_argument("--questions", default=str(folder / "questions.jsonl"))
        parser.add_argument("--cache", default=str(DEFAULT_CACHE), help="folder for the extracted page texts")
        args = parser.parse_args()
        if not PAPERS.is_dir():
            sys.exit(missing(PAPERS))
        qs = load(Path(args.questions))
        found = set_problems(qs, Path(args.cache))
        for p in found:
            print(p)
        spans = sum(len(q.get("evidence", [])) for q in qs)
        print(f"{len(qs)} questions, {spans} evidence spans: {'OK' if not found else f'{len(found)} problem(s)'}")
        sys.exit(1 if found else 0)

    return set_problems, main
