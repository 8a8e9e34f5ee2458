"""Clarify from evidence (agent.local.clarify): a question about "they" or "the model" is asked
back only when the papers whose sentences answer it say different things."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent.local.clarify import (
    ClarifyParams,
    answering_papers,
    clarify_from_evidence,
    paper_name,
    rephrase,
    resolving_paper,
    short_name,
    unresolved_referent,
)
from agent.types import Outcome, Source
from tests.agent.local.conftest import make_source


def _source(doc: int, title: str, n: int = 0) -> Source:
    return Source(chunk_id=doc * 100 + n, document_id=doc, document_title=title, text="")


LUMEN = _source(1, "Lumen: Parsing Scanned Receipts")
QUILL = _source(2, "Quill: Reading Handwritten Forms")
# Two versions of one preprint.
HARROW_V1 = _source(3, "The Harrow Benchmark for Receipt Parsing")
HARROW_V2 = _source(4, "The Harrow Benchmark for Receipt Parsing (extended)")


@pytest.mark.parametrize(("question", "referent"), [
    ("Which tokenizer did they train?", "they"),
    ("How deep is the model?", "the model"),
    ("What do the authors give as the reason?", "the authors"),
    ("Is it faster than the baseline?", "it"),
    ("What is their recall?", "their"),
    # The parts every study has its own of, and what the study itself made.
    ("Which learning rate do the baselines use?", "the baselines"),
    ("How many receipts are in the test split?", "the test split"),
    ("Who checked the translated forms?", "the translated forms"),
    ("What were the main results?", "the main results"),
    # A name says what it is about.
    ("Which tokenizer did Quill train?", ""),
    ("How deep is the Lumen model?", ""),
    # An earlier clause is what the pronoun refers to.
    ("What is receipt parsing, and why is it hard?", ""),
    ("For the handwriting reader: which tokenizer does it use?", ""),
    # No referent at all, and the empty "it" of "is it true that".
    ("Which tokenizers are common?", ""),
    ("Is it true that tokenizers matter?", ""),
    # A participle tied to what follows is no noun of its own.
    ("Are the scores used by everyone?", ""),
])
def test_it_finds_an_unresolved_referent(question, referent):
    assert unresolved_referent(question) == referent


def test_a_rephrasing_puts_the_paper_in_place_of_the_referent():
    assert rephrase("Which tokenizer did they train?", "they", "Quill") == "Which tokenizer did the authors of Quill train?"
    assert rephrase("How deep is the model?", "the model", "Quill") == "How deep is the model in Quill?"
    assert rephrase("Is it faster than the baseline?", "it", "Quill") == "Is Quill faster than the baseline?"
    assert rephrase("What is their recall?", "their", "Quill") == "What is Quill's recall?"
    # A quoted title takes no possessive: the question is put in its scope instead.
    assert rephrase("What is their recall?", "their", '"Reading Forms"') == 'In "Reading Forms", what is their recall?'


def test_a_paper_is_named_by_its_short_name_or_its_title():
    assert paper_name(LUMEN) == "Lumen"
    assert paper_name(HARROW_V1) == '"The Harrow Benchmark for Receipt Parsing"'
    assert paper_name(_source(5, "2101.00001v2 quill forms")) == '"quill forms"'
    # The short name the paper's text gives what it presents comes first.
    named = Source(chunk_id=600, document_id=6, document_title="Text Embeddings by Contrastive Pre-training",
                   document_name="E5", text="")
    assert paper_name(named) == "E5"


ABSTRACT = ("This paper presents E5 1, a family of text embeddings. E5 can be used for retrieval. "
            "For zero-shot settings, E5 is the first model that beats BM25.")


@pytest.mark.parametrize(("title", "text", "name"), [
    ("Text Embeddings by Contrastive Pre-training", ABSTRACT, "E5"),
    ("In-Context Retrieval-Augmented Language Models",
     "We dub In-Context RALM a simple method. In-Context RALM prepends documents. In-Context RALM helps.",
     "In-Context RALM"),
    ("Benchmarking Parsers for Medicine",
     "We propose the Medical Parsing Evaluation (MIPE), a benchmark. MIPE has five sets. On MIPE, ...", "MIPE"),
    # Said once only: not the name the text uses; a plain word is no name.
    ("Text Embeddings by Contrastive Pre-training", "This paper presents E5, a family of embeddings.", ""),
    ("Attention Is All You Need", "We propose a new simple network architecture, the Transformer. The Transformer "
     "is fast. The Transformer wins.", ""),
    # A title that starts with its short name needs none.
    ("Lumen: Parsing Scanned Receipts", "We present Lumen2 here. Lumen2 is. Lumen2 does.", ""),
])
def test_a_short_name_is_the_name_the_text_gives_what_it_presents(title, text, name):
    assert short_name(title, text) == name


def test_papers_that_answer_differently_are_asked_about():
    ranked = [(0.40, LUMEN, "Lumen uses a byte-level tokenizer with 512 merges."),
              (0.35, QUILL, "Quill trains a WordPiece tokenizer on 2M forms."),
              (0.10, HARROW_V1, "Harrow counts tokens per receipt.")]
    asks = clarify_from_evidence("Which tokenizer did they train?", ranked)
    # Each with the document it is to be asked of.
    assert asks == {"Which tokenizer did the authors of Lumen train?": [1],
                    "Which tokenizer did the authors of Quill train?": [2]}


def test_one_paper_or_one_answer_is_answered():
    one = [(0.40, LUMEN, "Lumen uses a byte-level tokenizer with 512 merges."),
           (0.38, _source(1, LUMEN.document_title, 1), "The tokenizer of Lumen is byte-level.")]
    assert clarify_from_evidence("Which tokenizer did they train?", one) == {}
    # A much weaker second paper is no rival answer.
    weak = [*one, (0.1, QUILL, "Quill trains a WordPiece tokenizer on 2M forms.")]
    assert clarify_from_evidence("Which tokenizer did they train?", weak) == {}
    # Two versions of one preprint saying the same thing are one paper.
    same = [(0.40, HARROW_V1, "Harrow trains a WordPiece tokenizer on 2M receipts."),
            (0.39, HARROW_V2, "Harrow trains a WordPiece tokenizer on 2M receipts.")]
    assert len(answering_papers(same)) == 1
    assert clarify_from_evidence("Which tokenizer did they train?", same) == {}
    # A question that names its paper is answered whatever the evidence.
    assert clarify_from_evidence("Which tokenizer did Quill train?", answering_ranked()) == {}


def test_an_answer_that_would_quote_two_papers_is_asked_about():
    # The second sentence is under half the first's P(answers), yet close enough that the
    # answer states it too: it would put two papers' tokenizers under one "they".
    ranked = [(0.40, LUMEN, "Lumen uses a byte-level tokenizer with 512 merges."),
              (0.15, QUILL, "Quill trains a WordPiece tokenizer on 2M forms.")]
    assert clarify_from_evidence("Which tokenizer did they train?", ranked) == {}
    assert list(clarify_from_evidence("Which tokenizer did they train?", ranked, answered=True)) == [
        "Which tokenizer did the authors of Lumen train?", "Which tokenizer did the authors of Quill train?"]
    # One too weak to be stated leaves an answer from one paper.
    weak = [ranked[0], (0.05, QUILL, "Quill trains a WordPiece tokenizer on 2M forms.")]
    assert clarify_from_evidence("Which tokenizer did they train?", weak, answered=True) == {}
    # Quoted from one paper, it is answered.
    one = [ranked[0], (0.30, _source(1, LUMEN.document_title, 1), "Its merges are learnt on receipts."), ranked[1]]
    assert clarify_from_evidence("Which tokenizer did they train?", one, answered=True) == {}


def answering_ranked():
    return [(0.40, LUMEN, "Lumen uses a byte-level tokenizer."), (0.35, QUILL, "Quill trains a WordPiece tokenizer.")]


def test_with_no_answer_the_most_relevant_papers_are_asked_about():
    relevant = [(0.60, QUILL, "Quill's main weakness is slanted handwriting."),
                (0.55, LUMEN, "Lumen struggles with faded thermal paper."),
                (0.20, HARROW_V1, "Harrow has five splits.")]
    asks = clarify_from_evidence("What weakness do they report?", [], relevant=relevant)
    assert list(asks) == ["What weakness do the authors of Quill report?",
                          "What weakness do the authors of Lumen report?"]
    # Without it (the question is answered, or one paper is in scope) nothing is asked back.
    assert clarify_from_evidence("What weakness do they report?", []) == {}
    assert clarify_from_evidence("What weakness do they report?", [], relevant=relevant[:1]) == {}


# --- one paper in mind: answered from the paper the evidence points to --------------------

def _top(*docs: Source, pool: tuple[Source, ...] = ()) -> list[Source]:
    """The queries' top chunks, one per listed paper, then the deeper pool's."""
    top = [s.model_copy(update={"chunk_id": s.document_id * 100 + n}) for n, s in enumerate(docs)]
    return top + [s.model_copy(update={"chunk_id": 9000 + n, "pool": True}) for n, s in enumerate(pool)]


# The resolution is off by default (ClarifyParams.lead_share above 1); these test it at a majority.
ON = ClarifyParams(lead_share=0.5)


def test_a_paper_holding_most_top_chunks_and_the_best_answer_resolves_the_referent():
    ranked = [(0.40, LUMEN, "Lumen uses a byte-level tokenizer with 512 merges."),
              (0.35, QUILL, "Quill trains a WordPiece tokenizer on 2M forms.")]
    # Asked of the collection, both papers answer: without a lead it is asked back.
    assert clarify_from_evidence("Which tokenizer did they train?", ranked)
    assert resolving_paper(ranked, _top(LUMEN, LUMEN, LUMEN, QUILL), ON) == LUMEN
    # Half the top chunks and a tie are no majority; the deeper pool does not count.
    assert resolving_paper(ranked, _top(LUMEN, LUMEN, QUILL, QUILL), ON) is None
    assert resolving_paper(ranked, _top(LUMEN, QUILL, HARROW_V1, pool=(LUMEN, LUMEN, LUMEN)), ON) is None
    # Off by default (above 1).
    assert resolving_paper(ranked, _top(LUMEN, LUMEN, LUMEN)) is None


def test_a_majority_paper_whose_sentence_does_not_lead_still_competes():
    # Retrieval favours Quill, the best answer is Lumen's: two readings, asked back.
    ranked = [(0.40, LUMEN, "Lumen uses a byte-level tokenizer with 512 merges."),
              (0.35, QUILL, "Quill trains a WordPiece tokenizer on 2M forms.")]
    assert resolving_paper(ranked, _top(QUILL, QUILL, QUILL, LUMEN), ON) is None
    # Nothing answers: the most relevant sentence leads instead.
    relevant = [(0.52, QUILL, "Quill's forms were checked by hand."), (0.50, LUMEN, "Lumen reads receipts.")]
    assert resolving_paper(ranked, _top(QUILL, QUILL, QUILL, LUMEN), ON, relevant=relevant) == QUILL
    assert resolving_paper([], _top(QUILL, QUILL, QUILL), ON) is None


TIDEWRIGHT = "Tidewright: Reading Printed Tide Tables"
TWO_PAPERS = [
    make_source(1, "Tidewright reads each printed tide table as rows of times and heights. We train the row reader "
                   "with a learning rate of 0.002 for 40 epochs.", title=TIDEWRIGHT, document_id=1),
    make_source(2, "Tidewright aligns every row with the harbour named in the table heading and keeps the printed "
                   "units.", title=TIDEWRIGHT, document_id=1),
    make_source(3, "On tables from twelve harbours, Tidewright recovers 91.3% of the rows without error.",
                title=TIDEWRIGHT, document_id=1),
    make_source(4, "Ferrule segments hand-drawn harbour charts. Its segmenter is trained with a learning rate of 0.01.",
                title="Ferrule: Segmenting Hand-Drawn Harbour Charts", document_id=2),
]


@pytest.mark.parametrize(("lead_share", "outcome"), [(1.01, Outcome.CLARIFY), (0.5, Outcome.ANSWER)])
def test_a_question_about_they_is_answered_from_the_paper_most_of_the_evidence_is_from(embed, lead_share, outcome):
    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.local.generator import ExtractiveGenerator
    from agent.local.planner import RulePlanner
    from agent.verify import CitationVerifier

    question = "Which learning rate did they train with?"
    params = replace(AuditorParams(), clarify=replace(ClarifyParams(), lead_share=lead_share))
    audit = LocalAuditor(embed=embed, params=params).audit(question, RulePlanner().plan(question), TWO_PAPERS,
                                                            can_retry=False)
    answer = CitationVerifier().verify(ExtractiveGenerator(embed=embed).generate(question, TWO_PAPERS, audit),
                                       TWO_PAPERS, question=question)
    assert answer.outcome == outcome
    if outcome == Outcome.ANSWER:
        # From that paper only, saying which.
        assert answer.text.startswith("In Tidewright: ") and "0.002" in answer.text and "0.01" not in answer.text
    else:
        assert answer.suggestions[0] == "Which learning rate did the authors of Tidewright train with?"


def test_what_an_answer_would_quote_is_the_generators_own_setting():
    from agent.local.clarify import ClarifyParams
    from agent.local.compose import ComposeParams

    # One source: the clarify rule reads what the answer would quote from the generator's params.
    assert (ClarifyParams().shown, ClarifyParams().quoted_margin) == (ComposeParams().per_fact, ComposeParams().margin)
    assert (ClarifyParams().shown, ClarifyParams().quoted_margin) == (2, 0.3)
