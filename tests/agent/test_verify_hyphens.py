"""An answer quoting a word that a line break cut in the stored text reads it whole, and its
citation still verifies and still lands on the stored words (knowledge.text.hyphens through
agent.verify). Sentences written for these tests."""

from __future__ import annotations

from agent.presentation import highlighted_html
from agent.types import Draft, DraftSentence, Outcome, Source
from agent.verify import CitationVerifier, quote_span
from knowledge.text import Vocabulary
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


# The cited chunk writes a name only cut; another chunk of the same paper, not retrieved, writes it whole.
CUT = ("Till clerks report that the Glow- Rank sorter lists every lamp once. The sorter keeps a shelf- "
       "ordered list of lamps.")
ELSEWHERE = "We release GlowRank, a sorter for shop tills; GlowRank needs no shelf-ordered map."
CUT_QUOTE = "Till clerks report that the Glow- Rank sorter lists every lamp once."


def _cut_answer(vocabulary=None):
    draft = Draft(outcome=Outcome.ANSWER,
                  sentences=[DraftSentence(text=CUT_QUOTE, citations=[1], quote=CUT_QUOTE)])
    sources = [Source(chunk_id=31, document_id=9, document_title="Till sorting", text=CUT)]
    return CitationVerifier().verify(draft, sources, question="What does the GlowRank sorter list?",
                                     vocabulary=vocabulary)


def test_the_whole_cited_paper_decides_a_name_its_retrieved_chunk_only_writes_cut():
    papers = {9: Vocabulary.of([CUT, ELSEWHERE])}
    answer = _cut_answer(papers.get)
    joined = "Till clerks report that the GlowRank sorter lists every lamp once."
    assert [s.text for s in answer.sentences] == [joined]
    assert answer.citations[0].quote == joined and answer.citations[0].quote_start == 0
    # Without the paper, the retrieved chunk is the only evidence: a name before a name stays as stored.
    assert _cut_answer().sentences[0].text == CUT_QUOTE
    # A document the vocabulary cannot read falls back to its retrieved chunks.
    assert _cut_answer({}.get).sentences[0].text == CUT_QUOTE


def test_a_cited_passage_is_shown_joined_with_its_quote_marked():
    vocabulary = Vocabulary.of([CUT, ELSEWHERE])
    html = highlighted_html(CUT, "Till clerks report that the GlowRank sorter lists every lamp once.", 0,
                            joined=True, vocabulary=vocabulary)
    assert html == ("<mark>Till clerks report that the GlowRank sorter lists every lamp once.</mark> "
                    "The sorter keeps a shelf-ordered list of lamps.")
    # Stored form unless asked.
    assert f"<mark>{CUT_QUOTE}</mark>" in highlighted_html(CUT, CUT_QUOTE, 0)


def test_a_name_cut_in_capitals_is_quoted_in_capitals_and_still_lands_on_the_stored_words():
    # The paper writes "GlowTALLY"; the cited line sets it in capitals and a line break cuts it.
    stored = "After the shelf audit, the tills we tested with GLOW- TALLY counted a third more lamps than before."
    papers = {9: Vocabulary.of([stored, "We release GlowTALLY, a lamp counter; GlowTALLY reads tills."])}
    draft = Draft(outcome=Outcome.ANSWER, sentences=[DraftSentence(text=stored, citations=[1], quote=stored)])
    sources = [Source(chunk_id=31, document_id=9, document_title="Tallies", text=stored)]
    answer = CitationVerifier().verify(draft, sources, question="How many more lamps did the tills count after the shelf audit?",
                                       vocabulary=papers.get)
    joined = "After the shelf audit, the tills we tested with GLOWTALLY counted a third more lamps than before."
    assert [s.text for s in answer.sentences] == [joined]
    citation = answer.citations[0]
    assert citation.quote == joined and citation.verified and citation.quote_start == 0
    assert viewer_span(stored, citation.quote, citation.quote_start) == (0, len(stored))
    assert highlighted_html(stored, citation.quote, 0) == f"<mark>{stored}</mark>"
