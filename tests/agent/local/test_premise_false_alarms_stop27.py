"""Premise false alarms (stop 27): a rival name must be a name where the claim's was one,
stand in its slot and not be a system the sentence compares with; a fronted "without X,"
sets a condition rather than denying X; a parenthesis glossing a name asserts nothing; a
later question clause that gives only another place borrows the first clause's relation.
Sentences and questions written for these tests (none comes from a benchmark set)."""

from __future__ import annotations

import pytest

from agent.local.contradiction import contradiction_cue, negated_stems, siblings
from agent.local.contradiction.compared import compared_names
from agent.local.planner import RulePlanner, _fragment

_CACHES = "Caches are refreshed by full, partial, Blendr or CacheMix recompute."


@pytest.mark.parametrize(
    "sentence, cue",
    [
        # "full" is listed beside the name CacheMix, but it names nothing: no rival of a name.
        ("Given that full recompute of the cache is slow, part of the cache is recomputed.", ""),
        # Another name in the subject's place is.
        ("Only Blendr recomputes part of the cache.", "substitution"),
    ],
)
def test_an_identifier_is_replaced_only_by_a_name(sentence, cue):
    assert contradiction_cue("CacheMix recomputes part of the cache", sentence,
                             sibling_map=siblings([_CACHES]), context=_CACHES) == cue


@pytest.mark.parametrize(
    "sentence, cue",
    [
        # "lower" is listed beside "upper", but here it qualifies racks at the end of the
        # sentence, far from the words around "Upper" in the claim.
        ("Thermo probes placed in trials were read first, as readings near the door are noisier than those "
         "on the lower racks.", ""),
        # In the claim's own slot, next to "placed ... shelf", it replaces it.
        ("Thermo probes placed on the lower shelf in trials were read first.", "substitution"),
    ],
)
def test_a_rival_stands_in_the_slot_of_the_claims_term(sentence, cue):
    chunk = "Sensors sit on the upper or lower shelf."
    assert contradiction_cue("the probes placed on the Upper shelf in trials of Thermo", sentence,
                             sibling_map=siblings([chunk]), context=chunk) == cue


@pytest.mark.parametrize(
    "claim, sentence, cue",
    [
        # BERT is the system Lumen is compared against, not Lumen's reranker.
        ("Lumen reranks passages with T5", "We compare Lumen against the BERT pipeline, which reranks passages "
                                           "with BERT.", ""),
        ("Lumen reranks passages with T5", "Lumen reranks passages with BERT.", "substitution"),
        # A claim that compares may be denied by another name in the compared place.
        ("Lumen is compared against a T5 baseline", "Lumen is compared against a BERT baseline.", "substitution"),
    ],
)
def test_a_system_compared_with_is_no_rival(claim, sentence, cue):
    chunk = "We test BERT and T5 rerankers."
    assert contradiction_cue(claim, sentence, sibling_map=siblings([chunk]), context=chunk) == cue


def test_names_set_beside_the_subject_for_comparison():
    assert {"bert", "colbert"} <= compared_names("Lumen is faster than ColBERT and outperforms the BERT pipeline.")
    assert "bm25" in compared_names("Lumen beats the BM25 baseline.")
    assert compared_names("Lumen reranks passages with BERT.") == set()


@pytest.mark.parametrize(
    "sentence, cue",
    [
        # An ablation's what-if: what happens when the reranking is taken away.
        ("Without passage-level reranking, Osprey tends to drop key facts.", ""),
        ("It shows that without passage-level reranking, Osprey tends to drop key facts.", ""),
        # A "without" after the verb's object says what Osprey runs without: a denial.
        ("Osprey runs without passage-level reranking, which keeps it fast.", "negation"),
    ],
)
def test_a_fronted_without_sets_a_condition_and_denies_nothing(sentence, cue):
    assert contradiction_cue("Osprey uses passage-level reranking", sentence) == cue


def test_a_fronted_without_negates_no_word():
    assert negated_stems("When trained without labels, the tagger drifts.") == set()
    assert "label" in negated_stems("The tagger is trained without labels.")


@pytest.mark.parametrize(
    "claim, cue",
    [
        # "(page tagging)" says which paper is meant: the sentence's "did not apply tagging"
        # denies nothing the claim asserts.
        ("Osprey supplied the BM25 baseline in the Quill (page tagging) paper", ""),
        ("Osprey supplied the BM25 tagging baseline in the Quill paper", "negation"),
    ],
)
def test_a_parenthesis_glossing_a_name_is_not_asserted(claim, cue):
    assert contradiction_cue(claim, "We did not apply tagging on top of BM25 because it hurts recall.") == cue


@pytest.mark.parametrize(
    "question, premises",
    [
        # The second clause asks the first one's question of another paper.
        ("Which toolkit supplied the BM25 baseline in the Quill paper, and which in the Heron (page tagging) "
         "paper?", ["toolkit supplied the BM25 baseline in the Quill paper",
                    "toolkit supplied the BM25 baseline in the Heron (page tagging) paper"]),
        ("How many GPUs did Osprey use in training and how many in inference?",
         ["Osprey use in training GPUs", "Osprey use in inference GPUs"]),
    ],
)
def test_a_clause_giving_only_a_place_borrows_the_first_clauses_relation(question, premises):
    assert RulePlanner().plan(question).premises == premises


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("in the Heron (page tagging) paper", True),
        ("for the receipts of 2021", True),
        ("in 2021 the tagger was retrained", False),
        ("Osprey tags receipts in the Heron paper", False),
    ],
)
def test_a_prepositional_phrase_without_a_verb_is_no_presupposition(text, fragment):
    assert _fragment(text) is fragment
