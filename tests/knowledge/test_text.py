"""knowledge.text: the one sentence splitter, normalise, and which sentences may be evidence.

Sentences here are written for these tests (not copied from the papers or devbench)."""

from __future__ import annotations

import pytest

from knowledge.text import (
    is_answer_eligible,
    match_key,
    normalise,
    sentence_kind,
    sentence_spans,
    split_heading,
    split_sentences,
)


@pytest.mark.parametrize(
    "text, sentences",
    [
        ("We follow Chen et al. (2021) closely. The gain is small.",
         ["We follow Chen et al. (2021) closely.", "The gain is small."]),
        ("The loss fell to 0.35 after 3.5 epochs. It rose later.",
         ["The loss fell to 0.35 after 3.5 epochs.", "It rose later."]),
        ("Sparse models [4, 9] are fast [12]. Dense ones are not.",
         ["Sparse models [4, 9] are fast [12].", "Dense ones are not."]),
        ("See Fig. 2 and Sec. 3.1 for the setup. Table 4 has the rest.",
         ["See Fig. 2 and Sec. 3.1 for the setup.", "Table 4 has the rest."]),
        ("We use e.g. TF-IDF, i.e. a sparse model. It is cheap.",
         ["We use e.g. TF-IDF, i.e. a sparse model.", "It is cheap."]),
        ('The reviewer wrote "the gain is noise." We disagree.',
         ['The reviewer wrote "the gain is noise."', "We disagree."]),
    ],
)
def test_the_splitter_handles_abbreviations_decimals_citations_and_quotes(text, sentences):
    assert split_sentences(text) == sentences


def test_a_blank_line_ends_a_sentence_so_a_heading_stays_apart():
    text = "Results so far are mixed\n\n4 Experiments\n\nWe train three models on the corpus."
    assert split_sentences(text) == ["Results so far are mixed", "4 Experiments", "We train three models on the corpus."]


def test_a_sentence_cut_by_a_page_or_column_break_runs_on_across_the_blank_line():
    text = "Our tagger is built on\n\nthree open toolkits that we combine. It runs fast."
    assert split_sentences(text) == ["Our tagger is built on three open toolkits that we combine.", "It runs fast."]
    # A finished sentence, or a capitalised start, still ends at the blank line.
    assert split_sentences("The tagger is small.\n\nresults follow below.") == [
        "The tagger is small.", "results follow below."]
    assert split_sentences("Training details\n\nWe train for two days.") == ["Training details", "We train for two days."]
    # A numbered heading broken over two lines does not run into the text.
    assert split_sentences("4 Tuning the Tagger\n\nwith Small Data We tune it twice.")[0] == "4 Tuning the Tagger"


@pytest.mark.parametrize(
    "glued, heading, rest",
    [
        ("5.2 Ablation Study Removing the gate lowers recall.", "5.2 Ablation Study", "Removing the gate lowers recall."),
        ("8 Conclusion In this paper we built a toy.", "8 Conclusion", "In this paper we built a toy."),
        ("2.4 DENSE RETRIEVAL SETUP Training uses hard negatives.", "2.4 DENSE RETRIEVAL SETUP",
         "Training uses hard negatives."),
        ("Discussion The method fails on long inputs.", "Discussion", "The method fails on long inputs."),
    ],
)
def test_a_heading_glued_to_its_first_sentence_is_split_off(glued, heading, rest):
    assert split_heading(glued) == (heading, rest)
    assert split_sentences(glued) == [heading, rest]
    assert sentence_kind(heading) == "heading"
    assert is_answer_eligible(rest)


@pytest.mark.parametrize(
    "sentence",
    ["2 models were trained on the corpus.", "The model has 12 layers and 768 hidden units.",
     "In Section 3 we describe the data."],
)
def test_ordinary_sentences_are_not_taken_for_headings(sentence):
    assert split_heading(sentence) is None
    assert is_answer_eligible(sentence)


def test_a_caption_starts_a_sentence_of_its_own_after_the_figure_legend():
    text = "model-a model-b (no context) Figure 7: Recall drops as the context grows."
    assert split_sentences(text) == ["model-a model-b (no context)", "Figure 7: Recall drops as the context grows."]
    assert not is_answer_eligible("model-a model-b (no context)")
    # The caption is a sentence of its own, labelled as such: shown with its chunk, never quoted as an answer.
    assert sentence_kind("Figure 7: Recall drops as the context grows.") == "caption"


def test_spans_are_exact_offsets_into_the_text():
    text = "  First one here.  Second one follows.\n\n3 Method\n\nThird is last. "
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["First one here.", "Second one follows.", "3 Method", "Third is last."]


@pytest.mark.parametrize(
    "sentence, kind",
    [
        ("1st 3rd 5th 7th 9th Rank of the Gold Passage 40 50 60 70Recall", "figure"),
        ("Share of queries 10 20 30 40 answered", "figure"),
        ("101 102 103 104 105 the model is trained", "line_numbers"),
        ("Model-X 71.2 68.4 80.1 Model-Y 70.9", "figure"),
        ("BM25 41.2 39.0 DPR 45.5 44.1", "table"),
        ("p(y | x) = softmax(W h + b)", "equation"),
        ("Jane Roe, Ann Poe. 2019. Sparse tricks. In Proceedings of the Toy Workshop, pages 1-9.", "reference"),
        ("Ann Poe ann.poe@example.org", "front_matter"),
        ("Introduction", "heading"),
        ("3.1 Training Details", "heading"),
        ("Fig. 4.", "fragment"),
        ("Results on Small Corpora", "heading"),
        ("\u03b1 and \u03b3 are 0.1, \u03b4 = \u03bb (\u03bc \u2212 \u03bd) \u2225 \u03c3 where \u03c6 is \u03c8", "equation"),
        ("The \u03b1 parameter is set to 0.5 in all runs.", "prose"),
        ("We fine-tune the reader for two epochs with a batch size of 32.", "prose"),
        ("Recall improves by 4.1 points over the baseline (Table 2).", "prose"),
    ],
)
def test_sentence_kinds(sentence, kind):
    assert sentence_kind(sentence) == kind
    assert is_answer_eligible(sentence) == (kind == "prose")


def test_normalise_folds_ligatures_and_drops_invisible_characters_but_keeps_lines():
    assert normalise("The \ufb01rst\u00ad \ufb02ow\u200b\r\nnext\tline\x00") == "The first flow\nnext line"


def test_match_key_ignores_case_spacing_and_line_break_hyphens():
    assert match_key("Perfor-\nmance, Closed  Book") == match_key("performance closed book")
