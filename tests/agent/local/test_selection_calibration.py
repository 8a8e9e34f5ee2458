"""bench/calibrate_selection.py's choice of the conditional logit's L2 penalty, on made-up
candidate groups (no database, no devbench data)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture(scope="module")
def calibrate():
    sys.path.insert(0, str(BENCH))
    try:
        import calibrate_selection

        yield calibrate_selection
    finally:
        sys.path.remove(str(BENCH))


def _groups(rng, questions: int, noisy: bool):
    """Each question one fact of five candidates; the positive has the highest first feature
    (and, when noisy, a second feature that points the wrong way half the time)."""
    from agent.local.selection import FEATURES

    x, y, qids, groups = [], [], [], []
    for q in range(questions):
        for c in range(5):
            row = np.zeros(len(FEATURES))
            row[0] = rng.normal() + (2.0 if c == 0 else 0.0)
            row[1] = rng.normal() + (1.0 if (c == 0) == (not noisy or q % 2 == 0) else 0.0)
            x.append(row)
            y.append(float(c == 0))
            qids.append(f"Q{q}")
            groups.append(f"Q{q}/0")
    return np.array(x), np.array(y), np.array(qids), np.array(groups)


def test_the_penalty_is_chosen_from_the_grid_by_leave_one_question_out(calibrate):
    x, y, qids, groups = _groups(np.random.default_rng(0), 8, noisy=True)
    chosen, trace = calibrate.choose_l2(x, y, groups, qids, [0, 1])
    assert chosen in calibrate.L2_GRID
    assert set(trace) == {str(v) for v in calibrate.L2_GRID}
    best = max(trace.values(), key=lambda s: (s["top1"], s["mrr"]))
    assert (trace[str(chosen)]["top1"], trace[str(chosen)]["mrr"]) == (best["top1"], best["mrr"])


def test_a_tie_goes_to_the_larger_penalty(calibrate):
    # Every penalty puts every positive first: the smoothest model wins.
    x, y, qids, groups = _groups(np.random.default_rng(1), 6, noisy=False)
    x[:, 0] = np.where(y > 0, 5.0, 0.0)
    chosen, trace = calibrate.choose_l2(x, y, groups, qids, [0])
    assert {s["top1"] for s in trace.values()} == {6}
    assert chosen == max(calibrate.L2_GRID)


def test_the_blind_sets_join_by_their_halves_and_bench_blind_never_does(calibrate):
    import json

    papers = set()
    for name in ("blind2", "blind3", "blind"):
        for line in (BENCH / name / "questions.jsonl").open(encoding="utf-8"):
            if line.strip():
                papers |= {d.removesuffix(".pdf") for d in json.loads(line).get("documents", [])}
    rows = calibrate.labelled_questions(papers, sets=("blind2", "blind3", "blind"))
    assert {q["set"] for q in rows} == {"blind2", "blind3"}
    assert {q["split"] for q in rows} == {"calibration", "test"}
    answerable = [q for q in rows if q["expected_behavior"] == "ANSWER"]
    assert answerable and all(q["required_evidence_spans"] for q in answerable)
    # A question whose paper is not ready is left out.
    some = next(iter(answerable))
    assert all(q["question_id"] != some["question_id"] or q["set"] != some["set"]
               for q in calibrate.labelled_questions(papers - set(some["papers"]), sets=("blind2", "blind3")))
