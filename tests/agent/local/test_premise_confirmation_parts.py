"""A question of several needs whose answering sentences state its presupposition
(agent.local.auditor, agent.local.premise_check.answer_confirms), and cited authors in a
premise. Passages and questions are written for these tests; none comes from a benchmark."""

from __future__ import annotations

from agent.local.auditor import AuditorParams, LocalAuditor
from agent.local.candidates import Candidate
from agent.local.planner import RulePlanner
from agent.local.premise_check import answer_confirms
from agent.local.text import term_set
from agent.types import Outcome, Verdict
from tests.agent.local.conftest import make_source

TITLE = "Tidewater: a survey of manifest tagging"
TIDEWATER = [
    make_source(1, "Tagging models are compared on public leaderboards. The Harbor leaderboard ranks manifest "
                   "taggers across 12 ports, covering 40 vessels. Additionally, the Dock leaderboard focuses on "
                   "inland ports.", title=TITLE),
    make_source(2, "Tidewater reviews forty tagging systems published since 2015. Most of them tag each manifest "
                   "line independently.", title=TITLE),
]
QUESTION = "How many ports and vessels does the Harbor leaderboard cover according to the Mbeki et al. survey?"


def _run(embed, question: str, **params):
    from agent.local.generator import ExtractiveGenerator
    from agent.verify import CitationVerifier

    plan = RulePlanner().plan(question)
    audit = LocalAuditor(embed=embed, params=AuditorParams(**params)).audit(question, plan, TIDEWATER,
                                                                           can_retry=False)
    return plan, audit, CitationVerifier().verify(ExtractiveGenerator(embed=embed).generate(question, TIDEWATER, audit),
                                                  TIDEWATER)


def test_a_question_of_two_needs_answered_by_a_sentence_stating_its_premise_is_answered(embed):
    plan, audit, answer = _run(embed, QUESTION)
    assert len(plan.facts) == 2 and plan.premise
    assert all(f.label.value == "supported" for f in audit.facts)
    assert audit.premise.confirmed and audit.verdict == Verdict.SUFFICIENT
    assert answer.outcome == Outcome.ANSWER and "40 vessels" in answer.text


def test_without_the_rule_the_same_question_is_answered_only_in_part(embed):
    _, audit, answer = _run(embed, QUESTION, answer_confirms_premise=False)
    assert not audit.premise.confirmed and answer.outcome == Outcome.PARTIAL


def _candidate(quote: str) -> Candidate:
    return Candidate(0, quote, f" {TITLE}", term_set(quote), quote)


def test_a_cited_author_in_the_premise_need_not_be_named_by_the_document():
    quote = "The Harbor leaderboard ranks manifest taggers across 12 ports, covering 40 vessels."
    premise = "the Harbor leaderboard cover according to the Mbeki et al. survey ports"
    assert answer_confirms(premise, "ports", _candidate(quote), term_set(TITLE))


def test_a_name_of_the_premise_the_document_lacks_still_keeps_it_unconfirmed():
    quote = "The Harbor leaderboard ranks manifest taggers across 12 ports, covering 40 vessels."
    premise = "the Pier leaderboard cover according to the Mbeki et al. survey ports"
    assert not answer_confirms(premise, "ports", _candidate(quote), term_set(TITLE))
