"""Line-break hyphens joined where a reader sees a quote, and the one quote locator
(knowledge.text.hyphens). Sentences written for these tests."""

from __future__ import annotations

from knowledge.text import Vocabulary, join_line_breaks, quote_span

SHOP = Vocabulary.of([
    "The LampNet ranker reads every shelf-tested lamp. LampNet counts the glow-cart twice on ShelfQA-Y/N.",
    "A shelf-tested lamp is kept; a shelftested one is not. Rankings are based on counts.",
])


def test_it_writes_a_cut_name_as_the_texts_write_it():
    assert join_line_breaks("The Lamp- Net ranker is small.", [SHOP]) == "The LampNet ranker is small."
    assert join_line_breaks("Every glow- cart is counted.", [SHOP]) == "Every glow-cart is counted."
    assert join_line_breaks("Scores on ShelfQA- Y/N rose.", [SHOP]) == "Scores on ShelfQA-Y/N rose."


def test_the_cited_document_is_asked_before_the_other_texts():
    elsewhere = Vocabulary.of(["Our shelftested lamps, shelftested again and shelftested once more."])
    assert join_line_breaks("A shelf- tested lamp.", [SHOP, elsewhere]) == "A shelf-tested lamp."
    assert join_line_breaks("A shelf- tested lamp.", [elsewhere, SHOP]) == "A shelftested lamp."


def test_a_tie_keeps_the_hyphen_the_document_writes():
    both = Vocabulary.of(["The glow-cart and the glowcart."])
    assert join_line_breaks("A glow- cart.", [both]) == "A glow-cart."


def test_without_evidence_a_syllable_break_is_joined_and_a_name_left_as_stored():
    nothing = Vocabulary()
    assert join_line_breaks("The inven- tory of lamps grew.", [nothing]) == "The inventory of lamps grew."
    assert join_line_breaks("The Glow- Cart counts lamps.", [nothing]) == "The Glow- Cart counts lamps."
    # A compound broken at one of its own hyphens, and a name before a word the texts write.
    assert join_line_breaks("An end- to-end count.", [nothing]) == "An end-to-end count."
    assert join_line_breaks("A QX9- based count.", [SHOP]) == "A QX9-based count."


def test_a_suspended_hyphen_and_a_range_are_kept():
    text = "Short- and long-term counts of shelves 10- 12 differ; pre- and/or post-counts too."
    assert join_line_breaks(text, [SHOP]) == text


def test_a_joined_quote_finds_the_stored_words():
    stored = "Shelf clerks trust the Lamp- Net ranker with shelf- tested lamps. The LampNet ranker is small."
    for quote in ("the LampNet ranker with shelf-tested lamps", "the lamp-net ranker with shelftested lamps"):
        start, end = quote_span(quote, stored)
        assert stored[start:end] == "the Lamp- Net ranker with shelf- tested lamps"
    # The recorded offset picks the occurrence that was audited, cut or whole: "LampNet" is
    # stored twice, and a stale offset falls back to the first whole occurrence.
    cut, whole = stored.index("Lamp- Net"), stored.index("LampNet")
    assert quote_span("LampNet ranker", stored, cut) == (cut, cut + len("Lamp- Net ranker"))
    assert quote_span("LampNet ranker", stored, whole) == (whole, whole + len("LampNet ranker"))
    assert quote_span("LampNet ranker", stored, 3) == (whole, whole + len("LampNet ranker"))
    assert quote_span("the GlowCart ranker", stored) is None


def test_a_joined_word_keeps_the_case_it_is_printed_in():
    # The paper writes the name "ShelfCOUNT"; one line sets it in capitals and cuts it there.
    paper = Vocabulary.of(["We release ShelfCOUNT, a lamp counter. ShelfCOUNT reads every till."])
    assert join_line_breaks("Scores on SHELF- COUNT rose.", [paper]) == "Scores on SHELFCOUNT rose."
    assert join_line_breaks("Scores on Shelf- COUNT rose.", [paper]) == "Scores on ShelfCOUNT rose."
    # The joined quote still finds the printed words.
    stored = "Tills report scores on SHELF- COUNT and on lamps."
    start, end = quote_span("scores on SHELFCOUNT and", stored)
    assert stored[start:end] == "scores on SHELF- COUNT and"
