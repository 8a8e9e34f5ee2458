"""Evidence matching and metrics (agent.benchmark.metrics), without a database; every expected
figure was computed by hand from the runs in tests/agent/benchmark/hand_runs.py."""

from __future__ import annotations

import pytest

from agent import benchmark as b
from tests.agent.benchmark.hand_runs import records as _records

# ---------------------------------------------------------------------------
# Fuzzy span matching
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("span", "text", "found"),
    [
        ("closed-book model performance", "the Closed- book model perfor-\nmance is", True),
        ("we find that fine-tuning helps", "We ﬁnd that ﬁne-tuning helps a lot", True),  # ligatures
        ("the quick brown fox jumps over", "…and then the quick brown fox", True),  # straddles the end
        ("the quick brown fox jumps over", "fox jumps over the hedge", False),  # under half of it
        ("learning rate of 0.001 was used", "learning rate of 0.01 was used", False),
    ],
)
def test_it_matches_spans_fuzzily(span, text, found):
    assert b.span_in_text(span, text) is found


def test_it_splits_answers_into_sentences_keeping_trailing_markers():
    answer = "Foo is bar [1]. Baz is qux. [2] It is 3.5 points higher [1, 2]. Done"
    assert b.answer_sentences(answer) == ["Foo is bar [1].", "Baz is qux. [2]", "It is 3.5 points higher [1, 2].", "Done"]


# ---------------------------------------------------------------------------
# Metrics on hand-made runs
# ---------------------------------------------------------------------------


def test_it_computes_every_metric_of_a_configuration_by_hand():
    report = b.compute_report(_records(), config_order=["bm25", "agentic"])
    assert report.configs == ["bm25", "agentic"]
    m = report.overall["agentic"]
    assert (m.runs, m.answered, m.partial, m.refused, m.debunked, m.failed) == (4, 0.5, 0.0, 0.25, 0.25, 0.0)
    assert (m.out_of_scope_runs, m.hallucination) == (1, 1.0)
    assert (m.false_premise_runs, m.false_premise_debunked) == (1, 1.0)
    assert (m.answerable_runs, m.wrongful_refusal) == (2, 0.5)
    assert (m.citations, m.citation_precision) == (3, 1.0)
    # sentences: run 1 three (two cited), run 3 one (cited), run 4 one (cited); refusals not counted
    assert (m.answer_sentences, m.citation_coverage) == (5, 0.8)
    assert (m.evidence_spans, m.evidence_recall) == (4, 0.75)
    assert (m.latency_p50_ms, m.latency_p95_ms) == (250.0, pytest.approx(385.0))
    assert (m.llm_calls, m.tokens, m.cost_usd) == (10, 570, pytest.approx(0.035))
    # graded: run 1 (1 + 0.5) / 2, run 2 0, run 4 1
    assert (m.graded_runs, m.pending_runs, m.accuracy) == (3, 1, pytest.approx(1.75 / 3))
    # proxy: run 1 one of two spans cited, run 2 refused 0, run 3 answered out of scope 0, run 4 1
    assert m.proxy_accuracy == pytest.approx(0.375)


def test_it_computes_the_baseline_by_hand():
    m = b.compute_report(_records()).overall["bm25"]
    assert (m.answered, m.partial, m.refused, m.debunked) == (0.5, 0.25, 0.25, 0.0)
    assert (m.hallucination, m.false_premise_debunked, m.wrongful_refusal) == (0.0, 0.0, 0.0)
    assert (m.citations, m.citation_precision) == (2, 0.5)
    assert (m.answer_sentences, m.citation_coverage) == (4, 0.5)
    assert (m.evidence_spans, m.evidence_recall) == (4, 0.25)
    assert (m.latency_p50_ms, m.latency_p95_ms) == (65.0, pytest.approx(78.5))
    assert (m.graded_runs, m.pending_runs, m.accuracy) == (2, 2, 0.25)
    # proxy: run 5 half its spans, run 6 none, run 7 a right refusal 1, run 8 no debunk 0
    assert m.proxy_accuracy == pytest.approx(0.375)


def test_it_computes_metrics_by_category():
    report = b.compute_report(_records())
    numeric = report.by_category[("agentic", "numeric")]
    assert (numeric.runs, numeric.refused, numeric.wrongful_refusal, numeric.evidence_recall) == (1, 1.0, 1.0, 0.0)
    assert numeric.hallucination is None  # no out-of-scope question in this category: not 0
    oos = report.by_category[("bm25", "oos")]
    assert (oos.hallucination, oos.evidence_spans, oos.evidence_recall) == (0.0, 0, None)
    assert len(report.rows()) == 2 * (1 + 4)


def test_it_shows_accuracy_as_pending_until_graded():
    records = [r for r in _records() if r.config_name == "bm25"]
    for r in records:
        r.grades = []
    m = b.compute_report(records).overall["bm25"]
    assert (m.accuracy, m.graded_runs, m.pending_runs) == (None, 0, 4)
    assert m.proxy_accuracy == pytest.approx(0.375)
