"""knowledge.text.quotable: the one definition of answer-eligible evidence, and the kinds of
text that look like sentences but are not statements of the paper.

Sentences here are written for these tests (not copied from the papers or devbench)."""

from __future__ import annotations

import pytest

from knowledge.text import (
    is_answer_eligible,
    layout_score,
    quotable,
    run_in_heading,
    sentence_kind,
    strip_marks,
)
from knowledge.text.classify import LAYOUT_THRESHOLD


@pytest.mark.parametrize(
    "sentence, heading, rest",
    [
        ("Toy Corpora The toy corpus holds forty short receipts.", "Toy Corpora", "The toy corpus holds forty short receipts."),
        ("Reranking When training the reranker, we freeze the encoder.", "Reranking",
         "When training the reranker, we freeze the encoder."),
        ("Ablation Setup: We drop one gate at a time.", "Ablation Setup:", "We drop one gate at a time."),
        ("Appendix B Receipt Details The receipts come from two stores.", "Appendix B Receipt Details",
         "The receipts come from two stores."),
        ("Scoring receipts with lamps The score counts lamps per receipt.", "Scoring receipts with lamps",
         "The score counts lamps per receipt."),
    ],
)
def test_an_unnumbered_run_in_heading_is_cut_when_the_sentence_is_quoted(sentence, heading, rest):
    assert run_in_heading(sentence) == (heading, rest)
    assert quotable(sentence) == rest


@pytest.mark.parametrize(
    "sentence",
    [
        "For Toy Corpora we report recall at ten.",  # a title does not start with "For"
        "Following Roe and Poe, the gate is learned.",
        "See Table 3 for the full results on receipts.",
        "The Toy Corpus is small but clean.",
    ],
)
def test_ordinary_sentences_keep_their_first_words(sentence):
    assert run_in_heading(sentence) is None
    assert strip_marks(sentence) == sentence


@pytest.mark.parametrize(
    "sentence, kind",
    [
        ("The gate is learned jointly with the 3Code encoder and the parser.", "footnote"),
        ("The gate is learned jointly with the 2WikiToy set and the parser.", "prose"),  # a name, not a footnote
        ("The gate is learned with the com- 4https://example.org/toy pact encoder.", "footnote"),
        ("Does the gate help when the receipts are long?", "question"),
        ("Question: which store printed the longest receipt?", "question"),
        ("Claim: the toy parser reads every receipt twice.", "example"),
        ("Input document: Two lamps and a kettle were sold on Main Street.", "example"),
        ("<Receipt> Two lamps and a kettle were sold on Main Street.", "example"),
        ("Here is the receipt to read:", "fragment"),
        ("Given a receipt, rate its total from 0 to 10. receipt: [receipt] total: [total]", "example"),
        ("The template fills {{receipt}} and {{total}} before it asks the parser.", "example"),
        ("Toy Press ISBN 978-0-00-000000-0 https://doi.org/10.0000/toy the parser reads receipts.", "front_matter"),
        ("The parser is not coupled with any \u2217 Equal contribution.", "footnote"),
        ("If the receipt is blank, you should return the word none.", "instruction"),
        ("Summarize the receipt in one line without any numbers.", "instruction"),
        ("The store on Main Street sold forty lamps that spring...", "fragment"),
        ("ceipts in the toy corpus are short and clean.", "fragment"),
        ("\u201d, so the parser keeps both totals for the receipt.", "fragment"),
        ("Roe et al., 2021).", "fragment"),
        ("(Roe et al., 2021; Poe and Doe, 2022).", "fragment"),
        ("Copyright 2025 by the toy authors of this receipt paper.", "front_matter"),
        ("Figure 3: Recall of the toy parser grows with receipt length.", "caption"),
        ("Lamp count per store Lamp count per receipt low recall high recall Figure 4.", "figure"),
        ("The lamp counts per store are shown in Figure 4.", "prose"),
        ("Toy Parser Receipt Store Lamp Street Total Count Gate", "figure"),
        ("Gate Recall Lumen Toy Corpus Receipt Length Store Count.", "figure"),
        # Enumeration marks close a parenthesis they never opened: still prose.
        ("Two variants exist: 1) the gate is learned; and 2) the gate is fixed at one half.", "prose"),
        ("The gate raises recall by 4.1 points on long receipts (Table 2).", "prose"),
        ("Note that the gate is learned jointly with the encoder.", "prose"),
    ],
)
def test_kinds_of_text_that_look_like_sentences(sentence, kind):
    assert sentence_kind(sentence) == kind
    assert is_answer_eligible(sentence) == (kind == "prose")


def test_the_layout_model_separates_legends_from_prose():
    legend = "Toy Parser Receipt Store Lamp Street Total Count Gate"
    prose = "The toy parser reads each receipt once and keeps the total of the store."
    assert layout_score(legend) >= LAYOUT_THRESHOLD > layout_score(prose)


def test_a_footnote_number_glued_to_its_text_is_cut():
    assert quotable("4The toy corpus is available from the authors on request.") == (
        "The toy corpus is available from the authors on request.")
    assert quotable("2WikiToy holds forty receipts from two stores.") == "2WikiToy holds forty receipts from two stores."


def test_a_prompt_template_printed_before_a_sentence_is_cut():
    assert quotable("receipt: [receipt] total: [total] The parser fills both fields for every receipt.") == (
        "The parser fills both fields for every receipt.")


def test_quotable_is_the_agents_definition():
    from agent.local.eligibility import clean_sentence, eligible

    for raw in ["- The parser drops page footers before it splits sentences.",
                "4.2 Results on Receipts On the receipt test set, Lumen reaches the best accuracy.",
                "Toy Corpora The toy corpus holds forty short receipts.",
                "Does the gate help when the receipts are long?"]:
        assert eligible(raw) == quotable(raw)
        assert clean_sentence(raw) == strip_marks(raw)
