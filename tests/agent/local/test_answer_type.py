"""agent.local.answer_type.points_elsewhere: a sentence that says where the paper treats
something is told from one that states it."""

from __future__ import annotations

import pytest

from agent.local.answer_type import asking_clause, need_of, offers, points_elsewhere, polarity


@pytest.mark.parametrize(
    "sentence",
    [
        "In Section 5, we describe the experiments on the new collection.",
        "Details of the training setup are given in Appendix B.",
        "The next section describes our retrieval model.",
        "Section 3 presents the results of the user study.",
        "We discuss limitations in Sec. 7 and conclude in Sec. 8.",
        "The encoder uses attention in three different ways:",
    ],
)
def test_a_sentence_about_where_something_is_said_points_elsewhere(sentence):
    assert points_elsewhere(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "We train for 3 epochs, as described in Section 4.",
        "In Section 4, we show that the reranker beats the baseline by 5 points.",
        "We compare sparse and dense retrievers on eighteen datasets.",
        "The architecture is presented in Figure 2.",
    ],
)
def test_a_sentence_that_states_something_does_not(sentence):
    assert not points_elsewhere(sentence)


# need_of: the asked kind and focus, also when a lead-in clause comes first.
@pytest.mark.parametrize(
    ("question", "kind", "focus"),
    [
        ("In the Quillfeather paper, what fraction of the words is dropped during training?", "number", ["word"]),
        ("What is the number of layers in Quillfeather?", "number", ["layer"]),
        ("According to the survey, how does Quillfeather decide when to stop reading?", "method", []),
        ("When tuning the reader, did the authors freeze the encoder?", "yesno", []),
        ("For short queries, which tokenizer gave the best recall?", "name", ["token"]),
        ("Which dataset contains the most questions?", "name", ["dataset"]),
        ("What is the learning rate of the Quillfeather reader?", "number", ["learn", "rate"]),
        ("What retrieval stride and query length does Quillfeather recommend?", "number",
         ["retriev", "stride", "queri", "length"]),
        ("What is the exact wording of the prompt that Quillfeather uses?", "definition", []),
        ("Quillfeather reads lazily. Which encoder does it rely on?", "name", ["encod"]),
    ],
)
def test_need_of_reads_the_asking_clause(question, kind, focus):
    need = need_of(question)
    assert (need.kind, need.focus) == (kind, focus)


def test_a_number_the_question_already_spells_is_not_an_answer():
    question = "How large are the two benchmarks Quillfeather is evaluated on?"
    need = need_of(question)
    assert need.kind == "number"
    assert offers(need, question, "Quillfeather is evaluated on two widely used benchmarks.") == 0.0
    assert offers(need, question, "The first benchmark holds 4,120 questions and the second eight hundred.") == 1.0


def test_a_yes_no_question_after_a_lead_in_is_decided_on_its_asking_clause():
    question = "According to the Quillfeather paper, does Quillfeather drop 20% of the words?"
    assert asking_clause(question) == "does Quillfeather drop 20% of the words?"
    assert polarity(question, "Quillfeather drops 20% of the words at random during training.") == "yes"
    assert polarity(question, "Quillfeather never drops words; it masks 20% of them instead.") in ("no", "")


@pytest.mark.parametrize("question, focus", [
    ("Which MRR@10 value does the distilled ranker reach on the dev set?", "mrr@10"),
    ("Which Recall@100 score did Quill get on the receipts?", "recall@100"),
])
def test_a_metric_at_a_cutoff_is_a_number_need_focused_on_the_metric(question, focus):
    # "@" belongs to the metric's name; the need was read as "which hole ..." (a name).
    need = need_of(question)
    assert need.kind == "number" and focus in need.focus


def test_how_much_before_an_auxiliary_asks_an_amount_with_no_noun():
    # "How much were the raters paid": "were" starts the clause, "raters" is its subject.
    assert need_of("How much were the Quill raters paid for each batch?") == need_of("How much does it cost?")
    assert need_of("How much were the Quill raters paid for each batch?").focus == []
    assert need_of("How many layers does the Quill encoder have?").focus == ["layer"]


def test_a_noun_that_only_names_the_form_of_a_number_is_no_focus():
    need = need_of("Of the tokens Quill predicts, what share are copied from the input?")
    assert need.kind == "number" and need.focus == []
    # The answer gives the share as a number without the word "share".
    assert offers(need, "what share are copied from the input?", "We found that 62% are copied.") == 1.0
    assert need_of("What fraction of the receipts is rejected?").focus == ["receipt"]


def test_a_count_of_one_in_words_is_a_weak_answer_not_ruled_out():
    need = need_of("How many epochs is Quill fine-tuned for?")
    fact = "How many epochs is Quill fine-tuned for?"
    assert 0 < offers(need, fact, "We fine-tune Quill for one epoch on the receipts.") < 1
    assert offers(need, fact, "Quill is fine-tuned for twenty epochs.") == 1.0
    assert offers(need, fact, "Quill is fine-tuned with a small learning rate.") == 0.0


def test_a_list_of_things_answers_which_things_without_capitals():
    fact = "Which stages make up the Quill pipeline?"
    need = need_of(fact)
    listed = offers(need, fact, "The Quill pipeline has three stages: parsing, tagging, and filing.")
    plain = offers(need, fact, "The Quill pipeline has three stages that run in turn.")
    assert listed == 1.0 and plain < listed


def test_a_citation_year_a_link_or_a_footnote_mark_is_no_count():
    fact = "How many languages does the Quill dataset cover?"
    need = need_of(fact)
    assert offers(need, fact, "We release a datasheet (Okafor et al., 2018) for the Quill dataset.") == 0.0
    assert offers(need, fact, "The Quill dataset is documented online.4 4https://quill.example.org/v2") == 0.0
    assert offers(need, fact, "The Quill dataset [Okafor, 2018] covers 7 languages.") == 1.0


def test_a_count_question_is_not_answered_by_a_share():
    question = "How many raters labelled each pair?"
    need = need_of(question)
    assert offers(need, question, "About 30% of the pairs were labelled by raters.") == 0.0
    assert offers(need, question, "Each pair was labelled by 5 raters.") == 1.0
    assert offers(need, question, "Three raters labelled each pair.") == 1.0


@pytest.mark.parametrize("question", [
    "How many of the generated words are new?",
    "How many queries, as a percentage of the pool, were judged relevant?",
])
def test_a_share_may_answer_how_many_of_a_whole(question):
    assert offers(need_of(question), question, "31% of the generated words are new and 12% of queries relevant.") > 0
