"""Premise false alarms (stop 26): a presupposition is a clause with a subject of its own, a
sentence denies it only when it speaks of the premise's subject and relation, and numbers
clash only when they count the same thing. Sentences and questions written for these tests
(none comes from a benchmark or from bench/premise_questions.jsonl)."""

from __future__ import annotations

import pytest

from agent.local.contradiction import number_substitution
from agent.local.planner import RulePlanner, presupposition
from tests.agent.local.conftest import make_source


@pytest.mark.parametrize(
    "question, premises",
    [
        # The second clause asks its share of the subject the first clause names: cut from it,
        # "some share are kept from the source page" has no subject and is no premise.
        ("Of the tokens Quill emits (punctuation excluded), what share are invented and what share are kept "
         "from the source page?", []),
        # A pronoun standing for a thing named in another clause.
        ("For the tagger in read-tag-link: what model is it built on, and which optimiser trains it?", []),
        # A full stop after "et al." ends no sentence.
        ("In the Moreau et al. agent survey, which stages make up the Plain agent loop, and what other name is "
         "it given?", ["stages make up the Plain agent loop in the Moreau et al. agent survey"]),
        # "Which N is the one where X does Y": the clause is presupposed, and "the unsupervised"
        # is no passive's verb.
        ("Which receipt set is the one where Lumen does worse than Quill in the unsupervised test?",
         ["Lumen does worse than Quill in the unsupervised test"]),
        # A clause that names its subject is kept.
        ("How many pages does Lumen keep, and why does Lumen cache them?",
         ["Lumen keep pages", "Lumen cache them"]),
    ],
)
def test_a_presupposition_has_a_subject_of_its_own(question, premises):
    assert RulePlanner().plan(question).premises == premises


def test_which_of_the_counted_things_keeps_the_count_in_a_clause():
    assert presupposition("Which of the 12 receipt fields of Harbor has the most errors?") == \
        "one of the 12 receipt fields of Harbor has the most errors"


@pytest.mark.parametrize(
    "claim, sentence, clash",
    [
        ("Osprey caches 6 pages per query", "Osprey caches 4 pages for every query.", True),
        ("Osprey splits 12 receipts per batch", "Osprey splits receipts with 3 splitters per batch.", False),
        # A share of one thing against a share of another.
        ("Harbor drops 20% of all scanned lines", "Harbor keeps a line 70% of the time.", False),
        ("Harbor drops 20% of all scanned lines", "Harbor drops 35% of all scanned lines.", True),
    ],
)
def test_numbers_clash_only_when_they_count_the_same_thing(claim, sentence, clash):
    assert number_substitution(claim, sentence) is clash


def _sentence(text: str, title: str = "Harbor: receipts read as lines"):
    from agent.local.candidates import candidates

    return candidates([text], "", [make_source(91, text, title=title)])[-1]


@pytest.mark.parametrize(
    "premise, sentence, about",
    [
        # Another relation: only a name is shared.
        ("steps make up the Plain Harbor pipeline", "Layered Harbor inherits and grows from the earlier design.", False),
        ("steps make up the Plain Harbor pipeline", "The Plain Harbor pipeline is made up of two steps.", True),
        # A sentence that names nothing speaks of its document's subject.
        ("Osprey caches 6 pages per query", "We cache 4 pages for every query.", True),
        # Another subject named.
        ("Osprey caches 6 pages per query", "Quill caches 4 pages for every query.", False),
    ],
)
def test_a_sentence_denies_only_a_premise_about_its_subject_and_relation(premise, sentence, about):
    from agent.local.premise_check import _same_topic

    assert _same_topic(premise, _sentence(sentence), frozenset({"step"})) is about
