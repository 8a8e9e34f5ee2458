"""The shared checker of the blind sets (bench/_blind_spans.py): each rule can fail.

Plumbing only: these tests never look at the system's answers, nor copy any set's questions.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
PAPERS = BENCH.parent.parent / "shared" / "data" / "papers"
DOC2QUERY = "1904.08375v2_doc2query.pdf"


def load_bench(name: str):
    """bench/<name>.py, loaded from its file and registered under its name (bench/ is not a
    package and stays off sys.path; the dataclass machinery and the bench modules importing it
    look it up in sys.modules). The caller removes it."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def spans():
    """bench/_blind_spans.py, with bench/_shared_data.py, which it imports."""
    try:
        load_bench("_shared_data")
        yield load_bench("_blind_spans")
    finally:
        sys.modules.pop("_blind_spans", None)
        sys.modules.pop("_shared_data", None)


def question(qid: str, category: str, outcome: str, split: str = "calibration", **extra) -> dict:
    return {"question_id": qid, "question": "q", "category": category, "expected_outcome": outcome,
            "documents": [], "evidence": [], "gold_answer": "a", "split": split, **extra}


def test_counts_outcomes_and_paper_spread_are_checked(spans):
    rules = spans.SetRules(expected={"vague": ("CLARIFY", 2), "answerable": ("ANSWER", 0)}, min_papers=1)
    found = spans.shape_problems([question("V1", "vague", "REFUSAL"), question("V1", "vague", "CLARIFY")], rules)
    assert "question_id V1 used 2 times" in found
    assert "V1: expected_outcome REFUSAL for category vague (want CLARIFY)" in found
    assert "answerable questions cover 0 papers, want at least 1" in found
    assert not [p for p in found if p.startswith("category")]


def test_an_answer_without_evidence_and_a_refusal_with_evidence_are_both_flagged(spans):
    rules = spans.SetRules(expected={"answerable": ("ANSWER", 1), "vague": ("CLARIFY", 1)}, min_papers=0)
    with_evidence = question("V1", "vague", "CLARIFY", evidence=[{"document": "x.pdf", "page": 1, "text": "t"}])
    found = spans.shape_problems([question("A1", "answerable", "ANSWER"), with_evidence], rules)
    assert found == ["A1: no evidence for ANSWER", "V1: unexpected evidence for CLARIFY"]


def test_splits_must_be_named_and_balanced_per_category(spans):
    rules = spans.SetRules(expected={"vague": ("CLARIFY", 3)}, splits=True)
    qs = [question("V1", "vague", "CLARIFY"), question("V2", "vague", "CLARIFY", "test"),
          question("V3", "vague", "CLARIFY", "held-out")]
    assert spans.split_problems(qs, rules) == ["V3: split 'held-out'"]
    assert spans.split_problems(qs[:1], rules) == ["category vague: 1 calibration vs 0 test"]


@pytest.mark.skipif(not (PAPERS / DOC2QUERY).exists(), reason="needs ../shared/data/papers (the shared paper collection)")
def test_an_out_of_scope_pattern_found_in_a_paper_is_a_problem(spans, tmp_path):
    found = spans.absent_problems([
        question("O1", "out_of_scope", "REFUSAL", checked_absent="grep -ilE 'doc2query' (no hits)"),
        question("O2", "out_of_scope", "REFUSAL", checked_absent="no grep here"),
    ], tmp_path)
    assert found[0].startswith("O1: pattern 'doc2query' found in [") and DOC2QUERY in found[0]
    assert found[1] == "O2: no grep pattern in checked_absent"


def test_a_set_checker_applies_its_own_rules(spans, tmp_path):
    problems, _ = spans.set_cli(str(BENCH / "blind3" / "check_spans.py"))
    found = problems([question("V1", "vague", "CLARIFY"), question("V2", "vague", "CLARIFY", "test")], tmp_path)
    assert "category answerable: 0 questions, expected 26" in found
    assert "answerable questions cover 0 papers, want at least 15" in found
    assert "category vague: 2 questions, expected 4" in found
    problems, _ = spans.set_cli(str(BENCH / "blind" / "check_spans.py"))
    assert "category vague: 2 questions, expected 3" in problems([question("V1", "vague", "CLARIFY"),
                                                                   question("V2", "vague", "CLARIFY")], tmp_path)


def test_every_set_folder_has_a_checker_on_the_shared_rules(spans):
    for name in spans.SETS:
        assert "set_cli(__file__)" in (BENCH / name / "check_spans.py").read_text()
