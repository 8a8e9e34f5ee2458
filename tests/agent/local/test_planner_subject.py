"""Every part of a multi-part question carries its subject (agent.local.planner._with_subject,
_topic_resolved) and a lead-in that asks for a question is planned as that question
(_content_question). Questions written for these tests."""

from __future__ import annotations

import pytest

from agent.local.answer_type import need_of
from agent.local.planner import RulePlanner


def plan(question: str):
    return RulePlanner().plan(question)


def test_they_is_the_plural_subject_and_it_what_its_verb_takes():
    p = plan("What do the Osprey designers mean by field hashing, and why did they adopt it?")
    assert p.facts[1] == "why did the Osprey designers adopt field hashing?"
    assert p.sub_queries[1] == "why did the Osprey designers adopt field hashing?"
    # The premises keep the asker's words.
    assert not any("adopt field hashing" in premise for premise in p.premises)


def test_their_after_a_plural_subject_is_its_possessive():
    p = plan("What do the Osprey designers hash, and how do their hashes collide?")
    assert p.facts[1] == "how do the Osprey designers' hashes collide?"


def test_a_topic_announced_before_a_colon_is_what_it_refers_to_in_every_part():
    p = plan("For the vendor classifier in Osprey: what model is it built on, and which loss trains it?")
    assert p.facts == ["what model is the vendor classifier in Osprey built on",
                       "which loss trains the vendor classifier in Osprey?"]
    assert p.sub_queries[1] == "which loss trains the vendor classifier in Osprey?"


def test_an_asked_plural_kind_still_wins_over_the_subject():
    assert plan("Which datasets do the Lumen authors use, and how large are they?").facts[1] == (
        "how large are the datasets of Lumen?")


@pytest.mark.parametrize("question, need, kind", [
    ("Can you tell me which tokenizer Quill uses?", "which tokenizer Quill uses?", "name"),
    ("Do you know how many layers Harrow stacks?", "how many layers Harrow stacks?", "number"),
    ("I wonder why Lumen fails on faded receipts.", "why Lumen fails on faded receipts?", "reason"),
    ("I wonder whether Quill was trained on invoices.", "Is it true that Quill was trained on invoices?", "yesno"),
])
def test_a_lead_in_is_planned_as_the_question_it_introduces(question, need, kind):
    p = plan(question)
    assert p.facts == [need]
    assert need_of(p.facts[0]).kind == kind


def test_a_wondering_sentence_is_asked_not_stated():
    # Not "Is it true that I wonder whether ...?": the sentence asks.
    p = plan("I wonder whether Quill was trained on invoices. Why would it fail on receipts?")
    assert p.facts == ["Is it true that Quill was trained on invoices?", "Why would Quill fail on receipts?"]


def test_the_question_a_statement_introduces_is_situated_by_it():
    p = plan("Osprey wants receipts to be parsed offline. Why not simply call a cloud service?")
    assert p.facts == ["Is it true that Osprey wants receipts to be parsed offline?",
                       "In Osprey, why not simply call a cloud service?"]


@pytest.mark.xfail(strict=True, reason="the rules rank referents by number and role, not by meaning: an asked "
                                       "plural kind takes 'they' even when the verb wants the people who chose")
def test_they_as_the_agent_when_a_plural_kind_is_asked():
    assert plan("Which datasets do the Lumen authors use, and why did they pick them?").facts[1] == (
        "why did the Lumen authors pick the datasets of Lumen?")
