"""Text a paper prints but does not state (stop 31): a name printed as a heading before the
sentence that spells it out, a table's typography legend, dialogue and prompts printed in a
figure, events dated to the day from an example document, text a compressor garbled, code,
panel captions run together, and a caption whose noun follows a number.

Only eligibility and the quoted form change, never the chunk text: a cut quote is still a
verbatim slice of its sentence. Sentences are written for these tests."""

from __future__ import annotations

import pytest

from agent.local.eligibility import eligible
from knowledge.text import quotable, sentence_kind
from knowledge.text.classify import has_verb


@pytest.mark.parametrize(
    "sentence, rest",
    [
        ("LSR Lamp Shelf Receipts is a corpus of receipts printed by lamp shops (Roe et al., 2020).",
         "Lamp Shelf Receipts is a corpus of receipts printed by lamp shops (Roe et al., 2020)."),
        ("RCB The Receipt Count Benchmark is a set of shops whose lamps were counted by hand.",
         "The Receipt Count Benchmark is a set of shops whose lamps were counted by hand."),
        ("ShLC Shelf-Level Lamp Counting consists of receipts from forty shops.",
         "Shelf-Level Lamp Counting consists of receipts from forty shops."),
    ],
)
def test_a_name_printed_before_the_sentence_that_spells_it_out_is_cut(sentence, rest):
    assert quotable(sentence) == rest
    assert eligible(sentence) == rest
    assert rest in sentence


@pytest.mark.parametrize(
    "sentence",
    [
        # A name followed by its verb, by another name, or by its spelled-out form in parentheses.
        "LSR counts the lamps on every receipt of the shop.",
        "LampNet and ShelfRank were trained on receipts of lamp shops.",
        "LSR (Lamp Shelf Receipts) is a corpus of receipts printed by lamp shops.",
        # The capitals after it do not spell it.
        "LSR Daily Counts are reported for every shop in the corpus.",
    ],
)
def test_a_name_before_its_verb_or_another_name_keeps_the_sentence_whole(sentence):
    assert quotable(sentence) == sentence


@pytest.mark.parametrize(
    "sentence, kind",
    [
        ("The best lamp count on each shelf is marked in bold, and the second best is underlined.", "caption"),
        ("The receipt that lists the lamp is bolded within the input here for clarity.", "caption"),
        ("The shade reflects the relative change in lamp counts.", "caption"),
        ("Customer I have a lamp with a broken switch and I need a new receipt.", "example"),
        ("Only give me the lamp count and do not output any other words.", "example"),
        ("If no lamp is listed on the receipt, please leave the field blank.", "instruction"),
        ("The shop opened its third lamp branch on 8 March 2011.", "example"),
        ("On January 1, 2021, the shop released a new lamp catalogue with forty lamps.", "example"),
        ("The assistant gives short and polite answers to the clerk's questions about lamps.", "example"),
        ('The from shelves, with lamp present Kar,y returned to Shop", with Ada joining the clerks.', "fragment"),
        ('("",.getLamp add ifget() >0 Node end(" end.', "fragment"),
        ("Counting every lamp, ignoring the shelf (b) Prior work: Shelf counting.", "figure"),
        ("Comparison between the three receipts of LampNet.", "caption"),
        ("[12] A. Roe and B. Lin, \u201cCounting lamps on receipts,\u201d https://lamps.example.", "reference"),
        ("[1] Lampville is a town on the coast known for its lamp shops.", "reference"),
        ("\u201cLC\u201d denotes the lamp counter trained on shelf receipts.", "caption"),
        ("LC and SR denote Lamp Counter and Shelf Reader respectively.", "caption"),
        ("Hit means the counter found the lamp, while Correct is for the clerk's total.", "caption"),
        ("The following are given receipts.", "fragment"),
        ("Below is the proof of this lamp count.", "fragment"),
    ],
)
def test_text_printed_in_a_figure_or_table_is_not_evidence(sentence, kind):
    assert sentence_kind(sentence) == kind
    assert quotable(sentence) == ""
    assert eligible(sentence) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        # A finding in a caption, not only how the table marks it.
        "Counts in bold are significantly higher than LampNet's, by a paired t-test.",
        "The parser finds the total most easily when it is printed in bold on the receipt.",
        # Quoted words and an example given by the paper are not its own voice.
        "With the input \u201cI love this lamp\u201d, the label text is \u201ca great lamp review\u201d.",
        "The parser keeps a phrase printed on the receipt, e.g., my lamp is dim, as it is.",
        # A pointer for the reader is the paper's.
        "For more details on the parser, please refer to Appendix B.",
        # A range of dates, and a method's date.
        "We collected receipts from January 23 to February 8, 2011, from four lamp shops.",
        "The receipts were downloaded on 3 May 2023 from the archive of the shop.",
        # The assistant as an object, a hyphenated word after an article, list marks in prose.
        "We train on conversations between the clerk and the assistant of the shop.",
        "The shop adds an in-store lamp count to every receipt it prints.",
        "We count (a) the lamps and (b) the receipts of every shop in the corpus.",
        # One variable defined in prose, a quoted name as a subject, a legend that says what was done.
        "A denotes the lamp count of a shelf, which the clerk writes on the receipt.",
        "\u201cRerank\u201d suffers from low counts when several receipts list the same lamp.",
        "\u201cLC\u201d denotes the best lamp counter and here we used the top five receipts.",
        "Roe et al. [3] propose to count the lamps on every receipt of the shop.",
    ],
)
def test_the_papers_own_statements_stay_evidence(sentence):
    assert quotable(sentence) == sentence


@pytest.mark.parametrize(
    "sentence, verb",
    [
        ("Comparison between the three receipts of LampNet.", False),
        ("Figure 2 shows the lamp counts per shop.", True),
        ("(Roe et al., 2021) counts the lamps.", True),
        ("Three clerks count the lamps.", True),
    ],
)
def test_a_number_word_before_an_s_word_makes_it_a_noun_but_a_figure_number_does_not(sentence, verb):
    assert has_verb(sentence.split()) is verb
