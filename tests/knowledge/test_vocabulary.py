"""A document's whole vocabulary (knowledge.vocabulary): the evidence for line-break hyphens.
Sentences written for these tests."""

from __future__ import annotations

import pytest

from knowledge.vocabulary import document_vocabulary
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db


def test_it_counts_the_words_of_every_chunk_but_the_references(collection):
    document = make_document(collection=collection)
    make_chunk(document=document, text="The TillNet counter reads every TillNet label.")
    make_chunk(document=document, text="Lamp- Net counts lamps on a shelf-tested shelf.")
    make_chunk(document=document, text="[1] A. Writer. LampNet for shops. 2020.", is_reference=True)
    vocabulary = document_vocabulary(document.pk)
    assert vocabulary["tillnet"] == 2 and vocabulary["shelf-tested"] == 1
    assert "lampnet" not in vocabulary
    # Read once: a later chunk of the same file is not seen until the process reads it again.
    assert document_vocabulary(document.pk) is vocabulary


def test_a_document_that_is_gone_has_none():
    assert document_vocabulary(987654) is None


def test_the_whole_document_decides_the_join_and_the_printed_halves_keep_their_case(collection):
    from knowledge.text import join_line_breaks

    document = make_document(collection=collection)
    make_chunk(document=document, text="We count lamps with GlowTALLY. GlowTALLY needs no shelf map.")
    cut = make_chunk(document=document, text="Results on GLOW- TALLY are in the appendix.")
    vocabulary = document_vocabulary(document.pk)
    # Counted case-folded: "GlowTALLY" is evidence for "GLOW- TALLY", whose printed case stays.
    assert vocabulary["glowtally"] == 2
    assert join_line_breaks(cut.text, [vocabulary]) == "Results on GLOWTALLY are in the appendix."
