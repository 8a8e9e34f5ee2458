"""When an unconfirmed premise is waived (agent.local.premise_check.waive_unconfirmed) and how
close the evidence comes to stating it (PremiseCheck.support). Passages and questions are
written for these tests; none comes from a benchmark."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent.local.auditor import AuditorParams, LocalAuditor
from agent.local.planner import RulePlanner
from agent.local.premise_check import waive_unconfirmed
from agent.types import PremiseCheck, Verdict
from tests.agent.local.conftest import make_source

OPEN = PremiseCheck(premise="Harbor was trained on manifests", confirmed=False, support=0.6)
PARAMS = replace(AuditorParams(), need_min=0.3, premise_unconfirmed_min=0.9, premise_waive_support=0.55)


@pytest.mark.parametrize(
    ("need_p", "premise", "waived"),
    [
        # The need is very likely answered: waived whatever the premise's support.
        (0.95, OPEN.model_copy(update={"support": 0.0}), True),
        # Answered, and the evidence comes close to stating the premise.
        (0.5, OPEN, True),
        # Answered, but nothing comes close to the premise.
        (0.5, OPEN.model_copy(update={"support": 0.5}), False),
        # Close to the premise, but the need is not answered.
        (0.2, OPEN, False),
        # A premise confirmed, contradicted or naming what the collection lacks is never waived.
        (0.99, OPEN.model_copy(update={"confirmed": True}), False),
        (0.99, OPEN.model_copy(update={"contradicted": True}), False),
        (0.99, OPEN.model_copy(update={"unknown": ["Harbor 2"]}), False),
        (0.99, PremiseCheck(premise=""), False),
    ],
)
def test_an_unconfirmed_premise_is_waived_only_when_the_need_or_the_evidence_is_strong(need_p, premise, waived):
    assert waive_unconfirmed(need_p, premise, PARAMS) is waived


def test_above_one_the_thresholds_never_waive():
    never = replace(PARAMS, premise_unconfirmed_min=1.01, premise_waive_support=1.01)
    assert not waive_unconfirmed(1.0, OPEN.model_copy(update={"support": 1.0}), never)


TITLE = "Harbor: tagging shipping manifests at scale"
SOURCES = [
    make_source(1, "Harbor tags every line of a shipping manifest with its commodity code, "
                   "using a classifier trained on manifests from three ports.", title=TITLE),
    make_source(2, "Tagging one manifest takes Harbor about forty milliseconds on a laptop.", title=TITLE),
]


def _premise(embed, question: str) -> PremiseCheck:
    plan = RulePlanner().plan(question)
    return LocalAuditor(embed=embed).audit(question, plan, SOURCES, can_retry=False).premise


def test_support_measures_how_close_an_unconfirmed_premise_comes_to_the_evidence(embed):
    close = _premise(embed, "Why does Harbor tag each line of a shipping manifest with a commodity code?")
    assert not close.contradicted
    assert close.support > 0.42


def test_a_sentence_that_drops_the_premises_number_lends_it_no_support(embed):
    # "twelve languages": no sentence states a number of languages, so however close the
    # wording, nothing comes near the premise.
    far = _premise(embed, "Why does Harbor tag each line of a shipping manifest in twelve languages?")
    assert not far.contradicted and not far.confirmed
    assert far.support == 0.0


def test_the_waiver_turns_a_refusal_for_the_premise_into_a_partial_answer(embed):
    # The need is answered (the commodity code), but no sentence says anything of yearly
    # audits by customs inspectors: refused without the waiver, a PARTIAL answer with it.
    question = ("Which commodity code scheme, audited yearly by customs inspectors in every harbour district, "
                "does Harbor tag manifest lines with?")
    plan = RulePlanner().plan(question)
    never = replace(AuditorParams(), premise_unconfirmed_min=1.01, premise_waive_support=1.01)
    cautious = LocalAuditor(embed=embed, params=never).audit(question, plan, SOURCES, can_retry=False)
    assert not cautious.premise.confirmed and not cautious.premise.contradicted
    assert cautious.verdict == Verdict.INSUFFICIENT_REFUSE
    by_need = LocalAuditor(embed=embed, params=replace(never, premise_unconfirmed_min=0.0))
    assert by_need.audit(question, plan, SOURCES, can_retry=False).verdict == Verdict.PARTIALLY_SUFFICIENT
    by_support = LocalAuditor(embed=embed, params=replace(never, premise_waive_support=0.5))
    assert by_support.audit(question, plan, SOURCES, can_retry=False).verdict == Verdict.PARTIALLY_SUFFICIENT
    too_far = LocalAuditor(embed=embed, params=replace(never, premise_waive_support=0.9))
    assert too_far.audit(question, plan, SOURCES, can_retry=False).verdict == Verdict.INSUFFICIENT_REFUSE


LUMEN_TITLE = "Lumen: answering questions from the live web"
LUMEN = [
    make_source(5, "Lumen reranks the fetched passages with a T5 model that reads each passage with the question. "
                   "Earlier agents such as Quill reranked fetched passages with BERT.", title=LUMEN_TITLE),
]
CUP = [make_source(6, "The Harrow Cup 2021 was the last with 16 teams, before the increase to 24 teams in 2023.",
                   title="Harrow notes")]


def test_a_sentence_about_another_subject_or_with_another_name_lends_no_support(embed):
    # Quill's sentence holds "BERT" and "reranked" but is about Quill; Lumen's own sentence
    # names T5, not BERT. Neither comes close to "Lumen uses BERT to rerank".
    question = "How does Lumen use BERT to rerank the fetched passages?"
    check = LocalAuditor(embed=embed).audit(question, RulePlanner().plan(question), LUMEN, can_retry=False).premise
    assert not check.confirmed and check.support == 0.0


def test_a_sentence_with_the_names_but_not_the_relation_lends_no_support(embed):
    # The names and the year are there, but nothing about anyone winning.
    question = "Who won the 2021 Harrow Cup?"
    audit = LocalAuditor(embed=embed).audit(question, RulePlanner().plan(question), CUP, can_retry=False)
    assert not audit.premise.confirmed and audit.premise.support == 0.0
    assert audit.verdict == Verdict.INSUFFICIENT_REFUSE
