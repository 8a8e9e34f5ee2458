"""An answer quoting a word that a line break cut in the stored text reads it whole, and its
citation still verifies and still lands on the stored words (knowledge.text.hyphens through
agent.verify). Sentences written for these tests."""

from __future__ import annotations

from agent.presentation import highlighted_html
from agent.types import Draft, DraftSentence, Outcome, Source
from agent.verify import CitationVerifier, quote_span
from knowledge.views_documents import quote_span as viewer_span

STORED = ("The LampNet ranker is small and runs offline on a till. Shelf clerks found that the Lamp- Net "
          "ranker counts every lamp on a shelf- tested shelf twice.")
OTHER = "Our survey writes shelf-tested lamps; a shelf-tested row is counted once."
SOURCES = [Source(chunk_id=21, document_id=4, document_title="Shelf counts", text=STORED),
           Source(chunk_id=22, document_id=4, document_title="Shelf counts", text=OTHER)]
QUOTE = "Shelf clerks found that the Lamp- Net ranker counts every lamp on a shelf- tested shelf twice."
JOINED = "Shelf clerks found that the LampNet ranker counts every lamp on a shelf-tested shelf twice."


def _answer(quote: str):
    draft = Draft(outcome=Outcome.ANSWER, sentences=[DraftSentence(text=quote, citations=[1], quote=quote)])
    return CitationVerifier().verify(draft, SOURCES, question="What does the LampNet ranker count twice?")


def test_the_answer_reads_the_cut_words_whole_and_its_highlight_lands_on_the_stored_ones():
    answer = _answer(QUOTE)
    assert [s.text for s in answer.sentences] == [JOINED]
    citation = answer.citations[0]
    assert citation.quote == JOINED and citation.verified
    # The offset is into the stored text, and every locator finds the joined quote there.
    assert citation.quote_start == STORED.index("Shelf clerks")
    start, end = quote_span(citation.quote, STORED, citation.quote_start)
    assert STORED[start:end] == QUOTE
    assert viewer_span(STORED, citation.quote, citation.quote_start) == (start, end)
    assert f"<mark>{QUOTE}</mark>" in highlighted_html(STORED, citation.quote, citation.quote_start)


def test_an_answer_whose_quote_was_joined_verifies_again():
    answer = _answer(JOINED)
    assert [s.text for s in answer.sentences] == [JOINED] and answer.outcome == Outcome.ANSWER
    assert answer.citations[0].quote_start == STORED.index("Shelf clerks")


def test_text_without_a_cut_word_is_unchanged():
    quote = "The LampNet ranker is small and runs offline on a till."
    assert _answer(quote).sentences[0].text == quote
