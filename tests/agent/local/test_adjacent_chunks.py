"""A chunk's first sentence that refers back ("It halves ...", "However, ...") has its sentence
before in the chunk before (Source.before): that sentence is its context and makes it a
candidate; every other sentence is read as before."""

from __future__ import annotations

import pytest

from agent.local.candidates import candidates, opening, opens_back, refers_back, sentence_before
from agent.types import Outcome
from tests.agent.local.conftest import make_source

BEFORE = "Tallow parses invoices in one pass. Tallow adds a spelling pass over the vendor names."


def test_what_opens_back():
    assert refers_back("It halves the number of mismatched vendors.")
    assert refers_back("For each of these we keep two copies.")
    assert opens_back("However, the second pass is slower.")
    assert opens_back("As a result, fewer invoices are flagged.")
    assert not opens_back("This paper describes Tallow.")
    assert not opens_back("Tallow fetches its vendor list nightly.")
    assert not opens_back("Vendor names are matched exactly.")


def test_the_opening_sentence_and_the_piece_of_a_cut_sentence_before_it():
    assert opening("It halves the number of mismatched vendors. Tallow runs nightly.") == (
        "", "It halves the number of mismatched vendors.")
    assert opening("Tallow runs nightly. It halves the error count.") is None
    # The chunk was cut inside a sentence: its first piece continues the chunk before.
    assert opening("5 percent. This lowers recall slightly, but raises precision.") == (
        "5 percent.", "This lowers recall slightly, but raises precision.")
    assert sentence_before("Tallow parses invoices. The spelling pass drops rare names below 0.", "5 percent.") \
        == "The spelling pass drops rare names below 0. 5 percent."


def test_a_first_sentence_that_refers_back_reads_the_chunk_before():
    fact = "What does the spelling pass of Tallow change?"
    text = "It halves the number of mismatched vendors. Totals are checked against the ledger."
    with_before = make_source(2, text, title="Invoices at Scale").model_copy(update={"before": BEFORE})
    found = {c.quote: c for c in candidates([fact], "", [with_before])}
    first = found["It halves the number of mismatched vendors."]
    assert first.across and first.previous == "Tallow adds a spelling pass over the vendor names."
    assert "spelling" in first.context
    # Without the chunk before, the sentence shares no term with the need: no candidate.
    plain = make_source(2, text, title="Invoices at Scale")
    assert "It halves the number of mismatched vendors." not in {c.quote for c in candidates([fact], "", [plain])}


def test_other_sentences_do_not_read_the_chunk_before():
    fact = "How are Tallow totals checked?"
    text = "Totals are checked against the ledger. It flags every difference above one cent."
    source = make_source(3, text, title="Tallow").model_copy(update={"before": BEFORE})
    plain = make_source(3, text, title="Tallow")
    assert candidates([fact], "", [source]) == candidates([fact], "", [plain])
    assert not any(c.across for c in candidates([fact], "", [source]))


def test_the_answer_is_not_refused_for_a_subject_named_in_the_chunk_before(pipeline):
    question = "How much does Tallow's spelling pass reduce mismatched vendors?"
    text = ("It halved the number of mismatched vendors, from 212 to 104. "
            "Totals are then checked against the ledger of the month.")
    source = make_source(5, text, title="Tallow: Invoice Parsing")
    _, refused = pipeline(question, [source])
    assert refused.outcome == Outcome.REFUSAL
    _, answer = pipeline(question, [source.model_copy(update={"before": BEFORE})])
    # Answered (PARTIAL: no sentence states that Tallow's pass reduces anything, the premise).
    assert answer.outcome in (Outcome.ANSWER, Outcome.PARTIAL)
    assert "It halved the number of mismatched vendors, from 212 to 104." in answer.text


@pytest.mark.django_db
def test_the_retriever_fills_the_chunk_before_only_for_a_first_sentence_that_refers_back(collection):
    from agent.retrieval import _Hit, _sources
    from tests.factories import make_chunk, make_document

    doc = make_document(collection=collection)
    make_chunk(document=doc, text=BEFORE)
    # The chunker's overlap: this chunk repeats the last sentence of the one before.
    overlapping = make_chunk(document=doc, text="Tallow adds a spelling pass over the vendor names. It halves "
                                                "the number of mismatched vendors.")
    leaning = make_chunk(document=doc, text="They are matched against the ledger. Totals are checked monthly.")
    plain = make_chunk(document=doc, text="Totals are checked against the ledger every month.")
    found = {s.chunk_id: s.before for s in _sources([_Hit(c.pk) for c in (overlapping, leaning, plain)], "q")}
    # The first sentence of `overlapping` does not refer back: nothing is read for it.
    assert found == {overlapping.pk: "", leaning.pk: overlapping.text, plain.pk: ""}


def test_the_chunk_before_less_what_the_chunk_repeats():
    from agent.retrieval import _unrepeated

    assert _unrepeated(BEFORE, "Tallow adds a spelling pass over the vendor names. It halves it.") == (
        "Tallow parses invoices in one pass. ")
    assert _unrepeated(BEFORE, "It halves the number of mismatched vendors.") == BEFORE


def test_an_equation_before_is_no_sentence_to_lean_on():
    fact = "How does Tallow's vendor score differ from a plain edit distance?"
    text = "This score is similar to an edit distance, except that vowels cost half. Tallow runs nightly."
    source = make_source(6, text, title="Tallow").model_copy(
        update={"before": "names, the score of a vendor name x is given by: "
                        "s = m\u22121X j=0 Max(Top3(x · Vg ))j · Edit(x)."})
    first = next(c for c in candidates([fact], "", [source]) if c.quote.startswith("This score"))
    assert not first.across and first.previous == ""


def test_the_sentence_before_is_quoted_from_the_chunk_before_when_it_was_retrieved(pipeline):
    question = "How much does Tallow's spelling pass reduce mismatched vendors?"
    earlier = make_source(7, BEFORE, title="Tallow: Invoice Parsing")
    source = make_source(8, "It halved the number of mismatched vendors, from 212 to 104. Totals are then checked "
                            "against the ledger of the month.", title="Tallow: Invoice Parsing").model_copy(
        update={"before": BEFORE})
    _, answer = pipeline(question, [source, earlier])
    texts = [s.text for s in answer.sentences]
    lead = "Tallow adds a spelling pass over the vendor names."
    assert lead in texts and texts.index(lead) + 1 == texts.index(
        "It halved the number of mismatched vendors, from 212 to 104.")
    # Each cites its own chunk: the sentence before the chunk before, the answer its own.
    cited = {s.text: s.citations for s in answer.sentences}
    assert cited[lead] != cited["It halved the number of mismatched vendors, from 212 to 104."]
