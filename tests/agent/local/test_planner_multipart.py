"""A later part of a multi-part question that refers back to the first ("that choice", "them",
"it") is searched with what it refers to: the kind of thing the first part asks for, of the
names it says (agent.local.planner._resolved). The premises keep the asker's words."""

from __future__ import annotations

from agent.local.planner import RulePlanner


def plan(question: str):
    return RulePlanner().plan(question)


def test_that_choice_is_searched_as_the_thing_the_first_part_asks_for():
    p = plan("Which tokenizer does Osprey plug in, and what advantages do the authors give for that choice?")
    assert p.sub_queries[1] == "what advantages do the authors give for the choice of the tokenizer of Osprey?"


def test_a_demonstrative_naming_the_asked_kind_becomes_that_kind():
    p = plan("Which benchmark is Lumen scored on, and what does that benchmark contain?")
    assert p.sub_queries[1] == "what does the benchmark of Lumen contain?"
    # The need the auditor scores sentences against says it too.
    assert p.facts[1] == "what does the benchmark of Lumen contain?"


def test_them_is_the_plural_the_first_part_asks_for():
    p = plan("How many adapters does each Quill block have, and how many of them are active per token?")
    assert p.sub_queries[1] == "how many of the adapters of Quill are active per token?"


def test_it_in_a_search_gets_a_subject():
    assert plan("What is Harrow-2, and how is it trained?").sub_queries[1] == "how is Harrow-2 trained?"


def test_they_stays_when_the_first_part_names_only_a_place():
    # "they" are the annotators, not Osprey: a name is one thing, not a plural.
    p = plan("When building Osprey, how were annotators paid, and did they use a rubric?")
    assert p.sub_queries[1] == "did they use a rubric?"


def test_the_first_sub_query_is_still_the_whole_question():
    q = "Which tokenizer does Osprey plug in, and what advantages do the authors give for that choice?"
    assert plan(q).sub_queries[0] == q


def test_the_premises_keep_the_askers_words():
    p = plan("Which tokenizer does Osprey plug in, and what advantages do the authors give for that choice?")
    assert not any("choice of the tokenizer" in premise for premise in p.premises)


def test_its_in_a_need_is_left_to_the_one_name_rule():
    # The need keeps "its" -> Lumen (one name), not "the corpus of Lumen".
    assert plan("Which corpus feeds Lumen, and how large is its vocabulary?").facts[1] == (
        "how large is Lumen's vocabulary?")
