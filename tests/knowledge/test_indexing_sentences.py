"""index_sentence_search: the collection's chunks ranked by their best stored sentence vector."""

from __future__ import annotations

import pytest

from knowledge.indexing.build import index_rebuild
from knowledge.indexing.search import index_sentence_search
from knowledge.models import Document
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db


def test_it_finds_the_chunk_of_the_one_answering_sentence_and_only_ready_documents(collection):
    paper = make_document(collection=collection, title="A paper on ranking")
    long = make_chunk(
        document=paper,
        text=(
            "Ranking functions have a long history in information retrieval research. Many systems combine several "
            "signals into one score. Evaluation campaigns compare them on shared collections. Domestic cats sleep "
            "for most of the day and hunt small rodents at night."
        ),
    )
    other = make_chunk(
        document=paper,
        text="Dense retrievers encode questions and passages into vectors and "
        "compare them by cosine similarity.",
    )
    draft = make_document(collection=collection, title="A draft about cats")
    make_chunk(
        document=draft, text="Domestic cats sleep for most of the day and hunt small rodents at night."
    )
    index_rebuild(collection=collection)
    Document.objects.filter(pk=draft.pk).update(status=Document.Status.PROCESSING)
    hits = index_sentence_search(collection=collection, query="How long do cats sleep?", k=2)
    assert [h.chunk_id for h in hits] == [long.pk, other.pk]
    assert hits[0].scores["sentence"] > hits[1].scores["sentence"]
    assert index_sentence_search(collection=collection, query="  ", k=2) == []
