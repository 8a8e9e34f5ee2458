"""When two relevant sentences of different chunks are a conflict (agent.local.conflict), on
sentence pairs written for these tests: real disagreements are kept, pairs that agree or
speak of different things are no longer flagged (they were under the cue alone)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent.local.auditor import AuditorParams, LocalAuditor
from agent.local.conflict import Pair, is_conflict, names_apart, pair_cue
from agent.local.planner import RulePlanner
from tests.agent.local.conftest import make_source

# The rule before stop 27: a cue of the four kinds, and a shared statement for a number.
CUE_ONLY = replace(AuditorParams(), conflict_answers_min=0.0, conflict_jaccard_min=0.0,
                   conflict_same_names=False)


def flagged(a: str, b: str, params: AuditorParams, *, fact: str = "", answers_b: float = 0.5) -> bool:
    pair = Pair(fact=fact or a, quote_a=a, quote_b=b, answers_b=answers_b)
    return is_conflict(pair, pair_cue(pair), params)


@pytest.mark.parametrize(("a", "b"), [
    ("The Harrow archive is updated once a week by the maintainers.",
     "The Harrow archive is not updated once a week by the maintainers, only on request."),
    ("The Tallow benchmark holds 4,200 questions in its test set.",
     "The Tallow benchmark holds 3,100 questions in its test set."),
    ("Pruning the Osprey encoder increases its error rate on long inputs.",
     "Pruning the Osprey encoder decreases its error rate on long inputs."),
])
def test_a_real_disagreement_about_one_thing_stays_a_conflict(a, b):
    assert flagged(a, b, AuditorParams())


@pytest.mark.parametrize(("a", "b"), [
    # The same setting reported for two different models.
    ("For Corvex, we used a learning rate of 0.001 and a warm-up of 500 steps.",
     "For Belmar, we used a learning rate of 0.01 and a warm-up of 500 steps."),
    # "narrow" of earlier suites against "wide" of the paper's own.
    ("Earlier suites such as Marwick cover only a narrow range of retrieval tasks.",
     "Our suite Tallow covers a wide range of retrieval tasks and domains."),
])
def test_the_same_cue_about_two_named_things_is_no_conflict(a, b):
    assert flagged(a, b, CUE_ONLY)  # the cue alone flagged it
    assert names_apart(Pair(fact=a, quote_a=a, quote_b=b))
    assert not flagged(a, b, AuditorParams())


def test_a_sentence_that_does_not_answer_the_need_raises_no_conflict():
    a = "The Harrow archive is updated once a week by the maintainers."
    b = "The Harrow archive is not updated once a week by the maintainers, only on request."
    assert flagged(a, b, CUE_ONLY, answers_b=0.01)
    assert not flagged(a, b, AuditorParams(), answers_b=0.01)


def test_a_name_held_only_in_the_context_still_speaks_of_the_same_thing():
    a = "For Corvex, we used a learning rate of 0.001."
    b = "It was trained with a learning rate of 0.01 on ImageNet."
    pair = Pair(fact=a, quote_a=a, quote_b=b, context_b="Corvex is our second model.")
    assert not names_apart(pair)


def test_the_auditor_no_longer_reports_two_models_settings_as_disagreeing(embed):
    title = "Corvex and Belmar: Two Receipt Parsers"
    sources = [
        make_source(21, "Training setup. For Corvex, we used a learning rate of 0.001 and a batch size of 32.",
                    title=title),
        make_source(22, "Baselines. For Belmar, we used a learning rate of 0.01 and a batch size of 32.",
                    title=title),
    ]
    question = "Which learning rate did they train with?"
    plan = RulePlanner().plan(question)
    before = LocalAuditor(embed=embed, params=CUE_ONLY).audit(question, plan, sources, can_retry=False)
    after = LocalAuditor(embed=embed).audit(question, plan, sources, can_retry=False)
    assert before.conflicts  # the cue alone called the two models' settings a disagreement
    assert not after.conflicts


def _traced(a: str, b: str, cue: str, *, answers_b: float = 0.5) -> dict:
    return {"fact": "Which learning rate did they train with?", "quote_a": a, "quote_b": b, "context_a": "", "context_b": "",
            "answers_a": 0.4, "answers_b": answers_b, "support_b": 0.7, "cue": cue, "final": True}


def test_the_bench_counts_the_first_pair_of_a_need_that_holds_against_the_labels(monkeypatch):
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[3] / "bench"))
    import conflicts

    apart = _traced("For Corvex, we used a learning rate of 0.001 and a warm-up of 500 steps.",
                    "For Belmar, we used a learning rate of 0.01 and a warm-up of 500 steps.", "number")
    real = _traced("The Harrow archive is updated once a week by the maintainers.",
                   "The Harrow archive is not updated once a week by the maintainers, only on request.", "negation")
    runs = [{"question_id": "T1", "pairs": [apart, real]}]
    labels = {(apart["quote_a"], apart["quote_b"]): False, (real["quote_a"], real["quote_b"]): True}
    before = conflicts.evaluate(runs, labels, CUE_ONLY)
    after = conflicts.evaluate(runs, labels, AuditorParams())
    # One need, so one conflict: the cue alone reports the first pair, the two models' settings.
    assert (before["raised"], before["real"], before["recall"]) == (1, 0, 0.0)
    assert (after["raised"], after["real"], after["precision"], after["recall"]) == (1, 1, 1.0, 1.0)
