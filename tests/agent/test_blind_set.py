"""The blind evaluation set (bench/blind) stays importable and its checks can fail.

These tests check the set's plumbing, never the system's answers to it: the set is for
reporting only (bench/blind/README.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agent import benchmark as bm

BENCH = Path(__file__).resolve().parents[2] / "bench"
PAPERS = BENCH.parent.parent / "shared" / "data" / "papers"
DOC2QUERY = "1904.08375v2_doc2query.pdf"


@pytest.fixture(scope="module")
def blind():
    sys.path.insert(0, str(BENCH))
    sys.path.insert(0, str(BENCH / "blind"))
    try:
        import blind_eval
        import check_spans

        yield blind_eval, check_spans
    finally:
        sys.path.remove(str(BENCH))
        sys.path.remove(str(BENCH / "blind"))


def test_blind_set_converts_to_a_benchmark_the_importer_accepts(blind):
    blind_eval, _ = blind
    questions = blind_eval.load_questions()
    specs = bm.parse_benchmark(json.dumps(blind_eval.as_benchmark(questions)))
    assert len(specs) == len(questions) == 24
    by_id = {s.question_id: s for s in specs}
    for q in questions:
        spec = by_id[q["question_id"]]
        assert spec.answerable == (q["expected_outcome"] == "ANSWER")
        assert spec.extra["expected_outcome"] == q["expected_outcome"]
        assert list(spec.required_evidence_spans) == [e["text"] for e in q["evidence"]]


def test_quote_overlap_needs_a_long_shared_run_of_text(blind):
    blind_eval, _ = blind
    span = "we predict 10 queries using top-k random sampling and append them to each document"
    assert blind_eval.overlaps("Once trained, we predict 10 queries using top-k random sam-\npling.", span)
    assert blind_eval.overlaps("top-k random sampling", span)  # a short quote wholly inside the span
    assert not blind_eval.overlaps("we predict the relevance of each document", span)
    assert not blind_eval.overlaps("", span)


@pytest.mark.skipif(not (PAPERS / DOC2QUERY).exists(), reason="needs ../shared/data/papers (the shared paper collection)")
def test_span_check_finds_a_verbatim_span_and_rejects_a_changed_one_or_wrong_page(blind, tmp_path):
    _, check_spans = blind
    good = "we predict 10 queries using top-k random sampling (Fan et al., 2018) and append them to each document"

    def question(text: str, page: int) -> dict:
        return {"question_id": "T1", "question": "q", "category": "answerable", "expected_outcome": "ANSWER",
                "documents": [DOC2QUERY], "evidence": [{"document": DOC2QUERY, "page": page, "text": text}],
                "gold_answer": "a"}

    def span_problems(q: dict) -> list[str]:
        return [p for p in check_spans.problems([q], tmp_path) if p.startswith("T1: span")]

    assert span_problems(question(good, 2)) == []
    assert "not in the paper" in span_problems(question(good.replace("10 queries", "20 queries"), 2))[0]
    assert "found on page(s) [2] instead" in span_problems(question(good, 3))[0]


def test_summary_scores_each_category_against_its_own_expected_outcome(blind):
    blind_eval, _ = blind

    def row(category: str, expected: str, outcome: str, ms: int, hit: bool = False) -> dict:
        return {"category": category, "expected_outcome": expected, "outcome": outcome, "latency_ms": ms,
                "has_evidence": expected in ("ANSWER", "FALSE_PREMISE"), "evidence_hit_quote": hit,
                "evidence_hit_chunk": hit}

    rows = [row("answerable", "ANSWER", "ANSWER", 10, hit=True), row("answerable", "ANSWER", "REFUSAL", 30),
            row("false_premise", "FALSE_PREMISE", "ANSWER", 20), row("out_of_scope", "REFUSAL", "PARTIAL", 40),
            row("vague", "CLARIFY", "CLARIFY", 50), row("vague", "CLARIFY", "REFUSAL", 60)]
    s = blind_eval.summarise("agentic", rows)
    assert s["answerable refused"] == "1/2"
    assert s["out-of-scope answered"] == "1/1"
    assert s["false premises corrected"] == "0/1"
    assert s["clarify given"] == "1/2"
    assert s["evidence hit (quote)"] == "1/3"
    assert s["expected outcome met"] == "2/6"
    assert s["latency p50 ms"] == 35
    assert s["outcomes per category"]["vague"] == {"CLARIFY": 1, "REFUSAL": 1}
