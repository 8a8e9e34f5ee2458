"""The verifier checks support, not presence: eligible quotes, the sentence's numbers and names
in its quotes, and a support score for sentences not copied from their quotes."""

from __future__ import annotations

import pytest

from agent.types import Draft, DraftSentence, Outcome, QuoteRef, Source
from agent.verify import (
    CitationVerifier,
    clean_quote,
    eligibility,
    missing_names,
    missing_numbers,
    support,
)

WARMUP = "We increased the learning rate linearly for the first 4,000 training steps and kept it constant after."
DROPOUT = "During fine-tuning we used a dropout rate of 0.10 on every attention layer of the encoder."
SOURCES = [
    Source(chunk_id=1, document_title="Training Small Encoders", section="4 Training",
           text=f"4 Training\nWe trained on eight GPUs for two days. {WARMUP} {DROPOUT}"),
    Source(chunk_id=2, document_title="Training Small Encoders", section="5 Results",
           text="5 Results\nTable 2: Accuracy\nOur encoder reaches 81.3% accuracy on the held-out split of the benchmark."),
]


@pytest.mark.parametrize("quote", [
    "5.4 Regularization", "6.2 Model Variations", "Table 3:", "Figure 2: Accuracy", "the held-out split",
    "Results on the test set", "Encoder depth.", "in the second", "Training Data and Batching.",
    "big 6 1024 4096 16 0.3 300K 4.33 26.4 213", "What is the learning rate of the small encoder model?",
])
def test_headings_labels_fragments_table_rows_and_questions_are_not_evidence(quote):
    assert eligibility(quote)


def test_a_sentence_of_prose_is_evidence():
    assert eligibility(WARMUP) == ""
    # A short sentence is evidence when it is a complete one.
    assert eligibility("We used warmup_steps = 4000.") == ""
    assert eligibility("The default pooling is MEAN.") == ""
    assert eligibility("3.1 Encoder and Decoder Stacks Encoder: The encoder is composed of a stack of N = 6 "
                       "identical layers.") == ""


def test_numbers_match_across_formatting_and_a_percent_conversion():
    assert missing_numbers("The warmup lasts 4000 steps.", WARMUP) == []
    assert missing_numbers("The dropout rate is 0.1.", DROPOUT) == []
    assert missing_numbers("Dropout is 10%.", DROPOUT) == []
    assert missing_numbers("They trained on 8 GPUs.", "We trained on eight GPUs.") == []
    assert missing_numbers("The warmup lasts 8000 steps.", WARMUP) == ["8000"]
    assert missing_numbers("Accuracy is 81.4%.", "accuracy of 81.3%") == ["81.4%"]


def test_names_must_be_in_the_quote_the_title_or_both_question_and_chunk():
    assert missing_names("BERT-large uses dropout.", DROPOUT) == ["BERT-large"]
    # "Encoders" is in the quote by its stem ("encoder"); the other two are not.
    assert missing_names("The Training Small Encoders model uses dropout.", DROPOUT) == ["Training", "Small"]
    assert missing_names("The Training Small Encoders model uses dropout.",
                         f"{DROPOUT} Training Small Encoders") == []
    # A name the question asks about, mentioned by the cited chunk, is the subject of "we".
    assert missing_names("TinyEnc uses a dropout of 0.10.", DROPOUT, question="What dropout does TinyEnc use?",
                         chunk="TinyEnc is our model. " + DROPOUT) == []
    assert missing_names("TinyEnc uses a dropout of 0.10.", DROPOUT, question="What dropout does TinyEnc use?",
                         chunk=DROPOUT) == ["TinyEnc"]


def test_a_copied_sentence_passes_without_a_score():
    result = support(WARMUP, [WARMUP], embed=_no_embedding)
    assert result.ok and result.score is None


def _no_embedding(texts):
    raise AssertionError("a copied sentence needs no embedding")


def test_a_sentence_with_a_number_its_quote_lacks_is_dropped_before_any_score():
    result = support("The learning rate warmup lasted 8,000 steps.", [WARMUP], embed=_no_embedding)
    assert not result.ok and "8,000" in result.reason


def test_a_paraphrase_passes_and_an_unrelated_claim_does_not():
    assert support("The learning rate was increased linearly during the first 4,000 training steps.",
                   [WARMUP]).ok
    unrelated = support("The encoder was pretrained on a web corpus of news articles.", [WARMUP])
    assert not unrelated.ok and unrelated.score is not None


def test_the_verifier_drops_unsupported_sentences_and_keeps_the_supported_one():
    draft = Draft(outcome=Outcome.ANSWER, sentences=[
        DraftSentence(text="The learning rate warmup lasted 4,000 training steps.", citations=[1], quote=WARMUP),
        DraftSentence(text="The encoder reaches 91.3% accuracy.", citations=[2],
                      quote="Our encoder reaches 81.3% accuracy on the held-out split of the benchmark."),
        DraftSentence(text="Training used a dropout of 0.3.", citations=[1], quote="5 Results"),
    ])

    answer = CitationVerifier().verify(draft, SOURCES)

    assert [s.text for s in answer.sentences] == ["The learning rate warmup lasted 4,000 training steps."]
    assert any("91.3%" in d for d in answer.dropped)
    assert any("not in the chunk" in d or "heading" in d or "fragment" in d for d in answer.dropped)


def test_a_sentence_resting_on_two_sentences_needs_both_and_cites_each():
    sentence = "Warmup took the first 4,000 steps and the dropout rate was 0.10."
    both = Draft(outcome=Outcome.ANSWER, sentences=[DraftSentence(
        text=sentence, citations=[1], evidence=[QuoteRef(source=1, text=WARMUP), QuoteRef(source=1, text=DROPOUT)])])
    one = Draft(outcome=Outcome.ANSWER, sentences=[DraftSentence(text=sentence, citations=[1], quote=WARMUP)])

    kept = CitationVerifier().verify(both, SOURCES)
    dropped = CitationVerifier().verify(one, SOURCES)

    assert kept.outcome == Outcome.ANSWER and [c.quote for c in kept.citations] == [WARMUP, DROPOUT]
    assert kept.sentences[0].citations == [1, 2]
    assert dropped.outcome == Outcome.REFUSAL and any("0.10" in d for d in dropped.dropped)


def test_a_premise_correction_may_restate_the_questions_numbers():
    question = "Why did the encoder need 9,000 warmup steps?"
    draft = Draft(outcome=Outcome.FALSE_PREMISE, sentences=[DraftSentence(
        text=f'The question assumes that the encoder needed 9,000 warmup steps, but the paper says: "{WARMUP}"',
        citations=[1], quote=WARMUP)])

    answer = CitationVerifier().verify(draft, SOURCES, question=question)

    assert answer.outcome == Outcome.FALSE_PREMISE, answer.dropped


_SHORT = "The default sampler is nucleus sampling."


def _short_correction(text: str, question: str) -> Outcome:
    """The verified outcome of a one-sentence premise correction quoting _SHORT."""
    sources = [Source(chunk_id=1, document_title="Decoding for Receipt Parsers", section="3 Decoding",
                      text=f"3 Decoding\nWe compare greedy, beam and nucleus sampling for the parser. {_SHORT}")]
    draft = Draft(outcome=Outcome.FALSE_PREMISE, sentences=[DraftSentence(text=text, citations=[1], quote=_SHORT)])
    answer = CitationVerifier().verify(draft, sources, question=question)
    return answer.outcome


def test_a_premise_correction_quoting_a_short_sentence_is_kept():
    # The quote is short and the restated premise long: scored against the quote alone, the
    # correction looked unsupported, though every word of it is the question's or the quote's.
    question = "Why is beam search with four beams the default sampler of the receipt parser's decoding stage?"
    text = ('The premise does not hold ("beam search with four beams the default sampler of the receipt '
            f'parser\'s decoding stage"): the source says "{_SHORT}"')

    assert _short_correction(text, question) == Outcome.FALSE_PREMISE


def test_a_premise_correction_still_needs_its_quote_to_hold_what_it_adds():
    # Only the question's words are vouched for: a correction naming a value that neither the
    # question nor its quote holds is still dropped.
    question = "Why is beam search the default sampler of the receipt parser?"
    text = f'The premise does not hold: the parser uses Mirostat with a temperature of 0.7, and "{_SHORT}"'

    assert _short_correction(text, question) == Outcome.REFUSAL


def test_a_refusals_closest_evidence_is_shown_only_if_it_is_eligible():
    draft = Draft(outcome=Outcome.REFUSAL, sentences=[
        DraftSentence(text="The collection does not hold enough evidence."),
        DraftSentence(text='The closest evidence found: "5 Results"', citations=[2], quote="5 Results"),
    ])

    answer = CitationVerifier().verify(draft, SOURCES)

    assert answer.outcome == Outcome.REFUSAL and not answer.citations


def test_model_markup_is_cleaned_from_quotes():
    assert clean_quote('<document id="3" title="T" pages="2">We trained it.</document>') == "We trained it."
    assert clean_quote('"We trained it."') == "We trained it."


LUMEN = ("1 Introduction\n\nLumen learns one weight for every vocabulary term. The main contributions of this "
         "paper are as follows: an encoder that runs on one CPU core, and an index that fits in memory. We "
         "consider the following:\n\nFigure 2: Recall of Lumen grows with the number of learned terms per passage.")


@pytest.mark.parametrize(("quote", "reason"), [
    # A span of a sentence of prose that only introduces what follows it.
    ("The main contributions of this paper are as follows:", "lead-in"),
    # A sentence of its own that does.
    ("We consider the following:", "lead-in"),
    # A span of a caption is caption text, however much it reads like prose.
    ("Recall of Lumen grows with the number of learned terms per passage", "caption"),
    ("1 Introduction", "section heading"),
])
def test_a_quote_is_judged_by_the_sentence_it_lies_in(quote, reason):
    assert reason in eligibility(quote, LUMEN)


def test_a_span_of_an_eligible_sentence_is_evidence_and_a_glued_heading_may_come_along():
    assert eligibility("an encoder that runs on one CPU core, and an index that fits in memory", LUMEN) == ""
    assert eligibility("1 Introduction Lumen learns one weight for every vocabulary term.", LUMEN) == ""


def test_the_verifier_and_the_index_share_one_definition_of_evidence():
    from knowledge.text import quotable, split_sentences

    text = f"{LUMEN}\n\n{SOURCES[0].text}\n\n{SOURCES[1].text}"
    for sentence in split_sentences(text):
        # What the verifier accepts as a whole sentence, the index and the auditor quote.
        if not eligibility(sentence, text):
            assert quotable(sentence), sentence


def test_a_lead_in_quote_never_supports_a_copied_sentence():
    source = Source(chunk_id=3, document_title="Lumen", section="1 Introduction", text=LUMEN)
    draft = Draft(outcome=Outcome.ANSWER, sentences=[
        DraftSentence(text="The main contributions of this paper are as follows:", citations=[1],
                      quote="The main contributions of this paper are as follows:")])

    answer = CitationVerifier(embed=_no_embedding).verify(draft, [source])

    assert answer.outcome == Outcome.REFUSAL and not answer.citations
