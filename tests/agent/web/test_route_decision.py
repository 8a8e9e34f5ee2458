"""The route decision and how the route and web search steps read on the run page (pure)."""

from __future__ import annotations

import pytest

from agent.presentation import answer_html, stage_view
from agent.steps import RouteDecision, RouteStep, WebPageBrief, WebSearchStep, step_read
from agent.types import Verdict
from agent.web.evidence import route_decision


@pytest.mark.parametrize("verdict", [Verdict.SUFFICIENT, Verdict.FALSE_PREMISE, Verdict.CLARIFY, None])
def test_it_stays_on_the_collection_unless_the_evidence_is_still_insufficient(verdict):
    decision, reason = route_decision(verdict, enabled_for_collection=True, allowed_for_question=True)
    assert decision == RouteDecision.KB_ONLY and "enough to go on" in reason


def test_a_partial_verdict_goes_to_the_web_unless_the_setting_says_otherwise():
    decision, reason = route_decision(Verdict.PARTIALLY_SUFFICIENT, enabled_for_collection=True,
                                      allowed_for_question=True)
    assert decision == RouteDecision.WEB and "covers only part of the question" in reason
    decision, reason = route_decision(Verdict.PARTIALLY_SUFFICIENT, enabled_for_collection=True,
                                      allowed_for_question=True, on_partial=False)
    assert decision == RouteDecision.KB_ONLY and "enough to go on" in reason


@pytest.mark.parametrize(("enabled", "allowed", "decision", "words"), [
    (False, True, RouteDecision.KB_ONLY, "owner has not enabled"),
    (True, False, RouteDecision.KB_ONLY, "asker did not allow"),
    (False, False, RouteDecision.KB_ONLY, "owner has not enabled"),
    (True, True, RouteDecision.WEB, "web search is allowed"),
])
def test_it_goes_to_the_web_only_when_both_the_owner_and_the_asker_allow_it(enabled, allowed, decision, words):
    got, reason = route_decision(Verdict.INSUFFICIENT_REFUSE, enabled_for_collection=enabled,
                                 allowed_for_question=allowed)
    assert got == decision and words in reason


def test_the_steps_round_trip_and_read_on_the_run_page():
    route = RouteStep(verdict=Verdict.INSUFFICIENT_REFUSE, enabled_for_collection=True, allowed_for_question=True,
                      decision=RouteDecision.WEB, reason="the collection falls short")
    data_in, data_out = route.columns()
    assert step_read("route", data_in, data_out, schema_version=1) == route
    assert "Decision: search the web, because the collection falls short." in stage_view("route", route).notes
    web = WebSearchStep(queries=["eiffel tower opening"], provider="searxng", pages=[
        WebPageBrief(url="https://a.example/x", title="X", fetched=True, passages=2),
        WebPageBrief(url="http://10.0.0.1/", reason="10.0.0.1 is a private-network address"),
    ])
    view = stage_view("web_search", step_read("web_search", *web.columns(), schema_version=1))
    assert view.web_pages == [("https://a.example/x", "X", "fetched, 2 passages"),
                              ("http://10.0.0.1/", "", "refused: 10.0.0.1 is a private-network address")]


def test_web_markers_say_web_in_the_answer():
    html = str(answer_html("Paris [1]. Opened 1889 [2].", markers={1, 2}, panel_url="/runs/5/citations/0/",
                           web_markers={2}))
    assert ">[1]</button>" in html and ">[2 web]</button>" in html and 'aria-label="Web source 2"' in html
