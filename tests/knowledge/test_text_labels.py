"""Labels are not evidence: a run-in heading that ends in a colon, a list mark, a footnote or
table-note mark, and a short noun phrase without a verb (the rest of a caption, a label).

Only eligibility and the quoted form change, never the chunk text: a cut quote is still a
verbatim slice of its sentence, so the verifier finds it. Sentences are written for these tests."""

from __future__ import annotations

import pytest

from agent.local.eligibility import eligible
from agent.verify import eligibility
from knowledge.text import label_heading, quotable, sentence_kind
from knowledge.text.classify import PARTICIPLE, has_verb


@pytest.mark.parametrize(
    "sentence, rest",
    [
        ("Lamp Inventory: Initially, the shop counted every lamp by hand.",
         "Initially, the shop counted every lamp by hand."),
        ("Shelf-level Search: Until now, we searched receipts one shelf at a time.",
         "Until now, we searched receipts one shelf at a time."),
        ("(ii) Diverse stores: Receipt parsers should be tested on many kinds of shops.",
         "Receipt parsers should be tested on many kinds of shops."),
        ("Sparse Lamps: (a) LampRank scores each receipt by its lamps.", "LampRank scores each receipt by its lamps."),
        ("(iii) The parser drops every third receipt.", "The parser drops every third receipt."),
        ("ii) Longer receipts take the parser more time.", "Longer receipts take the parser more time."),
        ("Toy Results First, the parser reads each receipt twice.", "First, the parser reads each receipt twice."),
        ("Receipt\u2212level Search: Until now, we searched receipts one shelf at a time.",
         "Until now, we searched receipts one shelf at a time."),
    ],
)
def test_a_label_or_list_mark_in_front_is_cut_and_the_rest_is_a_verbatim_slice(sentence, rest):
    assert quotable(sentence) == rest
    assert eligible(sentence) == rest
    assert rest in sentence
    chunk = f"The shop sells lamps. {sentence} The clerk keeps the receipts."
    # The verifier accepts the quote without its label, and with it.
    assert eligibility(rest, chunk) == ""
    assert eligibility(sentence, chunk) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        # A label that names a method is the subject of a rest that opens in lower case.
        "LampNet: receipts are read twice by the encoder.",
        # A definition needs its term; it has no verb of its own.
        "Lamp count: Number of lamps printed on one receipt.",
        # A connective before a colon is no heading.
        "However: (a) the lamp is dim and (b) the receipt is long.",
        # A clause before a colon is a lead-in, not a heading.
        "Our aim is simple: We count the lamps on every receipt.",
    ],
)
def test_a_colon_that_is_not_after_a_topic_label_keeps_the_sentence_whole(sentence):
    assert label_heading(sentence) is None or not quotable(sentence).startswith(label_heading(sentence)[1])
    assert quotable(sentence) == sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "\u2020Work done while visiting the lamp museum.",
        "\u2021 marks the receipts printed in the store.",
        "\u2217: counted again with the second scanner.",
    ],
)
def test_a_sentence_opened_by_a_footnote_or_table_note_mark_is_a_footnote(sentence):
    assert sentence_kind(sentence) == "footnote"
    assert quotable(sentence) == ""


def test_a_section_sign_is_a_reference_not_a_note_mark():
    assert quotable("\u00a74 describes the lamp parser in detail.") != ""


@pytest.mark.parametrize(
    "sentence",
    [
        "Overview of the receipt parser.",
        "Lamp counts per store and month.",
        "A sample receipt from the toy corpus.",
        "Process of lamp counting using the sliding shelf window.",
        "(3) A larger receipt batch.",
        "Stores \u2192 Lamp inventory;",
    ],
)
def test_a_short_noun_phrase_without_a_verb_is_a_label_not_a_statement(sentence):
    assert quotable(sentence) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        "The parser ignores blank receipts.",
        "Both stores still rely on paper receipts.",
        "Shorter receipts parse faster than long ones.",
        "LampTune fine-tunes the parser on receipts.",
        "With one scanner, averaging hides this.",
        "The clerks tweak only the header of each receipt.",
        "Among them, LampNet [12]counted the lamps twice.",
        "\u03bb serves as a weight balancing lamps and receipts.",
        "The shop was closed in May.",
    ],
)
def test_a_short_sentence_with_a_verb_stays_evidence(sentence):
    assert has_verb(sentence.split())
    assert quotable(sentence) == sentence


def test_a_url_is_not_taken_for_a_verb():
    assert not has_verb(["Lamp", "data", "at", "https://example.org/lamps/receipts."])


@pytest.mark.parametrize(
    "sentence, rest",
    [
        ("Model Design LampNet\u2019s encoder reads every receipt twice.", "LampNet\u2019s encoder reads every receipt twice."),
        ("Shelf Models Although LampRank is small, it counts every lamp.",
         "Although LampRank is small, it counts every lamp."),
        ("Shelf Tasks Currently, our parser reads only printed receipts.",
         "Currently, our parser reads only printed receipts."),
    ],
)
def test_a_title_case_heading_before_a_named_subject_or_a_clause_opener_is_cut(sentence, rest):
    assert quotable(sentence) == rest


@pytest.mark.parametrize(
    "sentence",
    [
        "In Section B we count the lamps again.",
        "The Lamp Museum keeps every receipt.",
        "For Lamp Counting we use LampNet\u2019s encoder.",
    ],
)
def test_a_sentence_that_opens_with_capitalised_words_keeps_them(sentence):
    assert quotable(sentence) == sentence


def test_a_definition_with_a_hyphenated_adjective_keeps_its_term():
    sentence = "(ii) Lamp-then-count: The standard lamp-augmented method."
    assert quotable(sentence) == "Lamp-then-count: The standard lamp-augmented method."


def test_a_long_title_case_appendix_heading_is_cut_but_a_long_sentence_start_is_not():
    assert quotable("C Counting Lamps Again in Multi-Shelf Shops Our parser reads each shelf.") == (
        "Our parser reads each shelf.")
    sentence = "According to the derivation in the Lamp Appendix A, it is known that lamps glow."
    assert quotable(sentence) == sentence


def test_a_heading_with_a_slash_is_a_title():
    assert quotable("Receipt/Lamp Formats To keep receipts short, the parser drops blank lines.") == (
        "To keep receipts short, the parser drops blank lines.")


@pytest.mark.parametrize(
    "sentence, evidence",
    [
        ("Toy Corpus ablations in the lamp shop.", False),  # a compound noun after a capitalised word
        ("One likely reason lies in the size of the receipts.", True),
        ("This alleviates the need for a second scanner.", True),
        ("Clerks need to count the lamps twice.", True),
        ("a widely used lamp counter (Roe, 2020).", False),  # starts inside a sentence
    ],
)
def test_verbs_before_a_preposition_and_after_a_pronoun(sentence, evidence):
    assert bool(quotable(sentence)) is evidence


@pytest.mark.parametrize(
    "sentence",
    [
        "(Left) LampNet counts every lamp on the receipt twice.",
        "(right) The receipt parser keeps one line per lamp.",
        "(Middle) Shelf counting reads the shelves in order, one at a time.",
        "(top left) Each store prints its own receipts.",
        "(Bottom-Right) The lamp count falls as receipts grow longer.",
    ],
)
def test_a_caption_of_a_figure_part_is_not_evidence_even_when_it_reads_as_a_statement(sentence):
    assert sentence_kind(sentence) == "caption"
    assert quotable(sentence) == ""
    assert eligible(sentence) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        "Results in Figure 3 (Left) show that LampNet counts every lamp.",
        "Figure 5 (right) shows that the lamp count falls as receipts grow.",
        "(a) Counting the lamps twice does not slow the parser down.",
        "(Lamps) are counted once per receipt by the clerk.",
    ],
)
def test_a_figure_part_named_after_its_figure_or_a_list_mark_keeps_the_sentence(sentence):
    assert quotable(sentence) != ""


@pytest.mark.parametrize(
    "sentence, rest",
    [
        ("Counting lamps by hand Shelf clerks tally every lamp once a week.",
         "Shelf clerks tally every lamp once a week."),
        ("Tradeoff between cost and receipt sizes Faster, cheaper and larger scanners have the lowest counts.",
         "Faster, cheaper and larger scanners have the lowest counts."),
        ("Adding LED receipts Similar to LampNet [4], we print one receipt per lamp.",
         "Similar to LampNet [4], we print one receipt per lamp."),
    ],
)
def test_a_heading_in_sentence_case_before_a_capitalised_statement_is_cut(sentence, rest):
    assert quotable(sentence) == rest
    chunk = f"The shop sells lamps. {sentence} The clerk keeps the receipts."
    assert eligibility(rest, chunk) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        "Only for LED Lamps we count the receipts twice.",  # an opener, then a name
        "Clerks thanked Ada Lovelace for the receipt parser.",  # a verb before the name
        "Results on the Lamp corpus show that counts are stable.",  # an article before the name
        "For both Shelf Parser and LampNet, we count the lamps.",
        "Models trained on Shelf receipts count lamps well.",  # a verb form before the name
        "Ada Lovelace and Grace Hopper are thanked for the parser.",
    ],
)
def test_a_name_inside_a_sentence_is_not_taken_for_the_start_after_a_heading(sentence):
    assert quotable(sentence) == sentence


@pytest.mark.parametrize(
    "sentence, rest",
    [
        ("LampNet + Shelf: We first count the lamps on every shelf.", "We first count the lamps on every shelf."),
        ("Receipt Counting Network (RCN): Clerks often miscount lamps on long receipts.",
         "Clerks often miscount lamps on long receipts."),
        ("ShelfScan: (Roe et al., 2021) measure the lamps of each shelf with a camera.",
         "(Roe et al., 2021) measure the lamps of each shelf with a camera."),
        ("Lamp Counting by Weight: (Roe, 2020a) propose weighing every box of lamps.",
         "(Roe, 2020a) propose weighing every box of lamps."),
        ("LC-2: The LC-2 corpus [12] consists of 4,000 receipts from corner shops.",
         "The LC-2 corpus [12] consists of 4,000 receipts from corner shops."),
    ],
)
def test_a_label_that_names_a_method_is_cut_before_a_statement_of_its_own(sentence, rest):
    assert quotable(sentence) == rest
    chunk = f"The shop sells lamps. {sentence} The clerk keeps the receipts."
    assert eligibility(rest, chunk) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        "LC: Lamp counts of the corner shops and their reviews (Roe, 2020).",  # a definition with its source
        "LNC & No Shelf: A lamp counter which is trained on receipts only.",  # only a relative clause's verb
        "Step 2: Gx \u2282 Gy and the clerk cannot count the lamps.",  # the rest opens with a symbol
        "Specifically counting the lamps: At a high level, the clerk weighs every box.",  # a connective
    ],
)
def test_a_definition_or_a_numbered_step_keeps_its_label(sentence):
    assert not quotable(sentence) or quotable(sentence) == sentence


@pytest.mark.parametrize(
    "sentence, rest",
    [
        ("Shelf Counting Manual shelf counting methods are slow in large stores.",
         "Manual shelf counting methods are slow in large stores."),
        ("Lamp Sizes Larger lamp models take the top shelf in every store.",
         "Larger lamp models take the top shelf in every store."),
        ("Results on Lamp Stores In Table 2, we count the lamps of each store.",
         "In Table 2, we count the lamps of each store."),
        ("Methods In Section 3.1, we weigh the lamps instead.", "In Section 3.1, we weigh the lamps instead."),
        ("Lamp Shelf Counting Lamp Shelf Counting (LSC) is the task of counting lamps per shelf.",
         "Lamp Shelf Counting (LSC) is the task of counting lamps per shelf."),
    ],
)
def test_a_heading_in_title_case_is_cut_before_its_first_sentence(sentence, rest):
    assert quotable(sentence) == rest


@pytest.mark.parametrize(
    "sentence",
    [
        "Quora Lamp Receipts dataset lists every lamp sold in 2020.",  # a name, its noun, then the verb
        "Large Lamp Models, such as LampNet, count lamps well.",
        "Using the Shelf-scan Counting method [3], the clerk counts every shelf once.",
        "Dense Lamp Counter counts the dense shelves quickly.",  # the verb right after the name
        "Ada Roe and Bo Lin Counting lamps was their first job.",
        "For Table 2 we count the lamps twice.",
    ],
)
def test_a_name_in_title_case_keeps_its_sentence_whole(sentence):
    assert quotable(sentence) == sentence


@pytest.mark.parametrize(
    "sentence",
    [
        "The dashed lines are the lamp counts of the corner shops.",
        "The solid curves show receipts (red) and lamps (blue) per week.",
        "Each dotted rectangle represents one shelf of the store.",
        "Red and green denote fewer and more lamps than last year.",
    ],
)
def test_a_legend_of_a_figure_is_not_evidence(sentence):
    assert quotable(sentence) == ""


@pytest.mark.parametrize(
    "sentence",
    [
        "LampNet counts more lamps than ShelfScan (green) in four shops.",
        "The red lamps sell best in winter.",
        "Black box counters such as LampNet miss dim lamps.",
        "Grey areas remain in how clerks count broken lamps.",
    ],
)
def test_a_colour_in_a_statement_keeps_it(sentence):
    assert quotable(sentence) == sentence


@pytest.mark.parametrize(
    "phrase, verb",
    [
        # A piece of a question: only an auxiliary or a participle makes it a clause.
        ("in the paper that was published", True),
        ("for the lamps counted twice", True),
        ("in the Lamp paper", False),
        # The order cues of a sentence would read these as "X results", "X work".
        ("for the LampNet results", False),
        ("in the follow-up work", False),
        ("in the receipt passages setting", False),
    ],
)
def test_a_phrase_has_a_verb_only_by_an_auxiliary_or_a_participle(phrase, verb):
    assert has_verb(phrase.split(), phrase=True) is verb


def test_the_planner_asks_the_one_verb_detector():
    from agent.local import planner

    assert planner._PARTICIPLE is PARTICIPLE
    assert not planner._has_verb("for the LampNet results") and planner._has_verb("in the paper that was published")
