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


def test_clauses_after_a_statement_too_short_to_search_are_searched_together():
    p = plan("Lumen drops some passages from its index. How many, and why?")
    assert p.sub_queries[1] == "How many, and why?"


def test_it_after_a_statement_is_its_one_name_in_each_search():
    p = plan("Lumen grades answers with a rubric. Who writes the rubric, and how long does it take?")
    assert p.sub_queries[2] == "how long does Lumen take?"


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


def test_an_elided_clause_borrows_the_first_clauses_relation_in_its_need_and_search():
    p = plan("Which tokenizer built the vocabulary in the Osprey paper, and which in the Harrow paper?")
    assert p.facts[1] == "Which tokenizer built the vocabulary in the Harrow paper?"
    assert p.sub_queries[1] == "Which tokenizer built the vocabulary in the Harrow paper?"


def test_a_second_hop_names_what_the_statement_named():
    p = plan("Lumen's authors warn that the pooled summary vector is unreliable before fine-tuning. "
             "What did the Quill paper report when that vector is used directly?")
    assert p.facts[1].endswith("what did the Quill paper report when the pooled summary vector is used directly?")
    assert "the pooled summary vector" in p.sub_queries[1]


def test_a_demonstrative_the_statement_does_not_name_stays():
    p = plan("Lumen grades answers with a rubric. Who makes that judgment, and how long does it take?")
    assert "that judgment" in p.facts[1]


def test_each_clause_after_a_statement_is_a_search_of_its_own():
    p = plan("Osprey retrieves every four tokens. How does its stride relate to the chunk size of Quill, "
             "and what did Osprey observe about longer strides?")
    assert p.sub_queries[0] == "Osprey retrieves every four tokens."
    assert p.sub_queries[1] == "How does Osprey's stride relate to the chunk size of Quill"
    assert p.sub_queries[2] == "what did Osprey observe about longer strides?"


def test_a_british_spelling_is_searched_with_its_american_one():
    p = plan("How is the Harrow encoder initialised, and how many neighbours does it read?")
    assert "initialised (initialized)" in p.sub_queries[0]
    assert all("neighbours (neighbors)" in q for q in p.sub_queries)
    # The need the auditor scores is spelled as the paper is likely to; the premise as asked.
    assert "neighbors" in p.facts[1]
    assert "initialised" in p.premise
