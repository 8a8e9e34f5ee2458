"""bench/calibrate_compose.py's scoring of a recomposed answer and its grid, on made-up rows
(no database, no question set)."""

from __future__ import annotations

from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture
def compose(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import calibrate_compose

    return calibrate_compose


ROW = {"spans": ["the Quillet parser reaches a field accuracy of 91.4% on Ledger-500"], "docs": ["quillet"]}


def test_an_answer_holds_gold_when_one_sentence_holds_the_span(compose):
    answer = {"outcome": "ANSWER", "sentences": [
        {"text": "Training takes two days.", "doc": "quillet"},
        {"text": "In tests the Quillet parser reaches a field accuracy of 91.4% on Ledger-500.", "doc": "other"}]}
    assert compose.score(answer, ROW) == {"answered": True, "gold": True, "sentences": 2, "on_doc": 1}


def test_a_refusal_states_nothing_even_when_its_closest_evidence_holds_the_span(compose):
    refusal = {"outcome": "REFUSAL", "sentences": [
        {"text": "The Quillet parser reaches a field accuracy of 91.4% on Ledger-500.", "doc": "quillet"}]}
    assert compose.score(refusal, ROW) == {"answered": False, "gold": False, "sentences": 0, "on_doc": 0}


def test_the_grid_starts_with_the_shipped_params_then_the_previous_ones(compose):
    from agent.local.generator import ComposeParams

    points = list(compose.grid())
    assert points[0] == ComposeParams()
    assert points[1] == ComposeParams(**compose.PREVIOUS)
    assert len(set(points)) > 100
