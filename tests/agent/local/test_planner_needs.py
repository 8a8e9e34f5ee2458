"""Every fact the rule planner hands the auditor is an asking need: a question with an answer
type, carrying the subject the question named before it (agent.local.planner._needs)."""

from __future__ import annotations

import pytest

from agent.local.answer_type import need_of
from agent.local.planner import RulePlanner


def facts(question: str) -> list[str]:
    return RulePlanner().plan(question).facts


def test_a_statement_before_the_question_is_asked_too_and_gives_the_question_its_subject():
    plan = RulePlanner().plan("Osprey indexes receipts by vendor name. How many vendors does its index hold?")
    # The statement is a yes/no need (its evidence is part of the answer), never a bare statement.
    assert plan.facts == ["Is it true that Osprey indexes receipts by vendor name?",
                          "How many vendors does Osprey's index hold?"]
    # It is still the premise to check and a sub-query to search.
    assert plan.premise == "Osprey indexes receipts by vendor name"
    assert plan.sub_queries[0] == "Osprey indexes receipts by vendor name."


def test_each_part_carries_the_lead_in_that_situates_the_question():
    assert facts("In the Quill tokenizer, how many merges are learned, and how are rare digits handled?") == [
        "In the Quill tokenizer, how many merges are learned",
        "In the Quill tokenizer, how are rare digits handled?",
    ]


def test_it_refers_to_the_one_thing_the_question_named():
    assert facts("What is Harrow-2, and how is it trained?") == ["What is Harrow-2", "how is Harrow-2 trained?"]
    assert facts("Which corpus feeds Lumen, and how large is its vocabulary?")[1] == "how large is Lumen's vocabulary?"


def test_it_referring_to_a_quoted_term_keeps_its_quotes():
    # The auditor holds every need about a quoted term to sentences that name it
    # (agent.local.sufficiency.defined_term), the later part too.
    assert facts("What is 'cell hopping', and how does it differ from row pooling?") == [
        "What is 'cell hopping'", "how does 'cell hopping' differ from row pooling?"]


def test_it_stays_when_the_question_named_more_than_one_thing():
    # "it" may be the encoder or Lumen or Quill: nothing is guessed.
    assert facts("Which encoder did Lumen borrow from Quill, and was it frozen?")[1] == "was it frozen?"


def test_it_stays_when_it_refers_to_nothing():
    assert facts("What is Quill, and is it true that Quill reads faded receipts?")[1] == (
        "is it true that Quill reads faded receipts?")


def test_a_part_that_names_nothing_is_situated_by_the_name_before_it():
    assert facts("Which parser does Osprey plug in, and what benefits do the authors claim?")[1] == (
        "In Osprey, what benefits do the authors claim?")


def test_coordinated_things_asked_of_one_clause_are_two_needs():
    assert facts("What batch size and learning rate does Quill use for fine-tuning?") == [
        "What batch size does Quill use for fine-tuning?",
        "What learning rate does Quill use for fine-tuning?",
    ]


def test_a_question_word_alone_asks_it_of_the_clause_before():
    assert facts("What bottleneck of receipt parsing does Lumen remove, and how?")[1] == (
        "how does Lumen remove the bottleneck of receipt parsing?")


@pytest.mark.parametrize("question, second", [
    ("How many receipts does Osprey parse per second, and roughly what share of them is rejected?",
     # "them" is what the first part asks for (planner._resolved).
     "what share of the receipts of Osprey is rejected?"),
    ("Where does Lumen store its index, and on which disks does it fail?", "on which disks does Lumen fail?"),
])
def test_a_part_after_an_adverb_or_a_preposition_is_a_need_of_its_own(question, second):
    assert facts(question)[1] == second


@pytest.mark.parametrize("question", [
    "Osprey indexes receipts by vendor name. How many vendors does its index hold?",
    "In the Quill tokenizer, how many merges are learned, and how are rare digits handled?",
    "What is Harrow-2, and how is it trained?",
    "Which parser does Osprey plug in, and what benefits do the authors claim?",
    "What batch size and learning rate does Quill use for fine-tuning?",
    "What bottleneck of receipt parsing does Lumen remove, and how?",
    "Lumen was trained on invoices. Why does it fail on receipts, and when was it released?",
])
def test_every_need_has_an_answer_type(question):
    assert all(need_of(f).kind != "other" for f in facts(question)), facts(question)


def test_a_request_is_an_ask_not_a_claim_to_confirm():
    # "Describe ..." is asked, not stated: no "Is it true that Describe ...?" need; what it
    # presupposes is its embedded clause, not the request itself.
    plan = RulePlanner().plan("Describe how Osprey splits a receipt into fields.")
    assert plan.facts == ["Describe how Osprey splits a receipt into fields."]
    assert plan.premise == "Osprey splits a receipt into fields"


@pytest.mark.parametrize("request_", ["Define receipt field splitting.", "Identify the parser Osprey uses.",
                                      "Specify the batch size of the Osprey parser."])
def test_requests_by_other_verbs_are_asked_too(request_):
    assert RulePlanner().plan(request_).facts == [request_]


def test_compare_a_dimension_of_one_thing_with_that_of_another_asks_it_of_each():
    plan = RulePlanner().plan("Compare the index size and the latency of Osprey-small with those of Osprey-large.")
    assert plan.facts == ["What is the index size and the latency of Osprey-small?",
                          "What is the index size and the latency of Osprey-large?"]
    assert plan.premise == ""
