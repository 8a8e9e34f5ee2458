"""Check the second blind set: the checks of bench/blind/check_spans.py with this set's counts,
plus its own rules: a `split` on every question, 24 calibration / 24 test balanced per category,
and every out-of-scope question's `checked_absent` pattern matching no paper's text.

    .venv/bin/python bench/blind2/check_spans.py                 # exit 1 on any problem
    .venv/bin/python bench/blind2/check_spans.py --cache /tmp/qset/txt

Spans are "verbatim" exactly as in bench/blind: whitespace collapsed, nothing else forgiven.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "blind"))
import check_spans as blind  # noqa: E402  (bench/blind/check_spans.py)

QUESTIONS = HERE / "questions.jsonl"
EXPECTED = {  # category -> (expected outcome, how many questions)
    "answerable": ("ANSWER", 26),
    "multi_part": ("ANSWER", 6),
    "false_premise": ("FALSE_PREMISE", 6),
    "out_of_scope": ("REFUSAL", 6),
    "vague": ("CLARIFY", 4),
}
SPLITS = ("calibration", "test")
# `checked_absent` holds the grep command used, e.g. "grep -ilE 'Qwen' (no hits)": the quoted pattern.
PATTERN = re.compile(r"grep -ilE '([^']+)'")


def split_problems(questions: list[dict]) -> list[str]:
    out = [f"{q['question_id']}: split {q.get('split')!r}" for q in questions if q.get("split") not in SPLITS]
    per = Counter((q["category"], q.get("split")) for q in questions)
    for cat, (_, n) in EXPECTED.items():
        if per[(cat, "calibration")] != per[(cat, "test")]:
            out.append(f"category {cat}: {per[(cat, 'calibration')]} calibration vs {per[(cat, 'test')]} test")
    return out


def absent_problems(questions: list[dict], cache: Path) -> list[str]:
    """Each out-of-scope pattern, run case-insensitively over every paper's text, must find nothing."""
    texts = {pdf.name: " ".join(blind.page_texts(pdf, cache).values()) for pdf in sorted(blind.PAPERS.glob("*.pdf"))}
    out = []
    for q in questions:
        if q["category"] != "out_of_scope":
            continue
        found = PATTERN.search(q.get("checked_absent", ""))
        if not found:
            out.append(f"{q['question_id']}: no grep pattern in checked_absent")
            continue
        hits = [name for name, text in texts.items() if re.search(found.group(1), text, re.I)]
        if hits:
            out.append(f"{q['question_id']}: pattern {found.group(1)!r} found in {hits}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", default=str(QUESTIONS))
    parser.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "grounded-blind-texts"),
                        help="folder for the extracted page texts")
    args = parser.parse_args()
    if not blind.PAPERS.is_dir():
        sys.exit(f"no papers at {blind.PAPERS} (set GROUNDED_SHARED_DATA)")
    blind.EXPECTED = EXPECTED
    questions = blind.load(Path(args.questions))
    cache = Path(args.cache)
    found = blind.problems(questions, cache) + split_problems(questions) + absent_problems(questions, cache)
    for p in found:
        print(p)
    spans = sum(len(q.get("evidence", [])) for q in questions)
    print(f"{len(questions)} questions, {spans} evidence spans: {'OK' if not found else f'{len(found)} problem(s)'}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
