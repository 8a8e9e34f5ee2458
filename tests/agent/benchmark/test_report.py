"""The benchmark report (agent.benchmark.report): reviewer agreement, CSV rows and its charts,
over the hand-made runs of tests/agent/benchmark/hand_runs.py."""

from __future__ import annotations

import pytest

from agent import benchmark as b
from tests.agent.benchmark.hand_runs import records as _records


def test_it_computes_kappa_over_runs_with_two_grades():
    # runs 1, 2 and 4: observed 2/3, chance (2*1 + 1*1) / 9 = 1/3, kappa 0.5
    report = b.compute_report(_records())
    assert report.kappa_runs == 3
    assert report.kappa == pytest.approx(0.5)


def test_it_matches_a_textbook_kappa():
    # Wikipedia's "Cohen's kappa" example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no -> 0.4
    pairs = [("a", "a")] * 20 + [("a", "b")] * 5 + [("b", "a")] * 10 + [("b", "b")] * 15
    assert b.cohen_kappa(pairs) == pytest.approx(0.4)
    assert b.cohen_kappa([]) is None
    assert b.cohen_kappa([("a", "a")] * 3) is None  # chance agreement 1: undefined


def test_it_exports_csv_rows_with_empty_cells_for_undefined():
    rows = b.report_csv_rows(b.compute_report(_records()))
    header = rows[0]
    assert header[:3] == ["config_name", "category", "runs"]
    numeric = next(r for r in rows if r[0] == "agentic" and r[1] == "numeric")
    assert numeric[header.index("hallucination")] == ""


# ---------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------


def test_it_draws_accessible_grouped_bars_and_skips_undefined_values():
    from xml.etree import ElementTree as ET

    from agent import charts

    svg = charts.grouped_bars(
        title="Rates <per> config", groups=["agentic", "bm25"],
        series=[("accuracy", [0.5, 0.25]), ("hallucination", [None, 1.0])],
    )
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = ET.fromstring(svg)  # well-formed, so the title's "<per>" was escaped
    assert root.get("role") == "img"
    assert root.find("s:title", ns).text == "Rates <per> config"
    assert "agentic: accuracy 50%, hallucination n/a" in root.find("s:desc", ns).text
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.find("s:title", ns) is not None]
    assert [b.find("s:title", ns).text for b in bars] == [
        "agentic, accuracy: 50%", "bm25, accuracy: 25%", "bm25, hallucination: 100%",
    ]
    # a bar's height is its share of the plot height (400 - 56 - 96 = 248 px)
    assert float(bars[0].get("height")) == pytest.approx(124.0)


def test_it_draws_the_report_charts_with_the_proxy_labelled():
    from agent import charts

    drawn = charts.report_charts(b.compute_report(_records()))
    assert set(drawn) == {"rates", "latency"}
    # two runs per configuration are graded, so human accuracy is shown
    assert "accuracy (human)" in drawn["rates"]
    ungraded = _records()
    for r in ungraded:
        r.grades = []
    drawn = charts.report_charts(b.compute_report(ungraded))
    assert "accuracy (automatic proxy)" in drawn["rates"] and "accuracy (human)" not in drawn["rates"]
    assert "agentic: median latency (ms) 250" in drawn["latency"]
    assert drawn["latency"].count("<circle") == 2 + 2  # a point and a legend swatch each
