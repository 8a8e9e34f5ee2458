"""A small collection built from real pages of ../shared/data/papers, shared by a test module.

Chunks are made from pypdf's text of chosen pages (about 120-word windows, page numbers
kept), then indexed with the real index (knowledge.indexing), so the loop runs on real text
and real retrieval. Built once per module and committed; each test links the index folder
into its own INDEX_ROOT.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

# stem -> (title, pages to take, 1-based)
PAPERS = {
    "1904.08375v2_doc2query": ("Document Expansion by Query Prediction", [2]),
    "1908.10084v1_sentence_bert": ("Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks", [3, 4]),
    "2003.06713v1_monot5_doc_ranking_seq2seq": ("Document Ranking with a Pretrained Sequence-to-Sequence Model", [1, 2]),
    "2405.20139v1_gnn_rag": ("GNN-RAG: Graph Neural Retrieval for Large Language Model Reasoning", [1]),
}


def page_windows(text: str, words: int = 150, stride: int = 120) -> list[str]:
    tokens = re.sub(r"\s+", " ", text).strip().split(" ")
    out = []
    for start in range(0, max(len(tokens) - (words - stride), 1), stride):
        out.append(" ".join(tokens[start : start + words]))
    return [t for t in out if t.strip()]


def build(collection, papers_dir: Path) -> dict[str, object]:
    from pypdf import PdfReader

    from knowledge.indexing.build import index_rebuild
    from tests.factories import make_chunk, make_document

    docs = {}
    for stem, (title, pages) in PAPERS.items():
        reader = PdfReader(str(papers_dir / f"{stem}.pdf"))
        doc = make_document(collection=collection, title=title, original_name=f"{stem}.pdf",
                            media_type="application/pdf", pages=len(reader.pages))
        for page in pages:
            for text in page_windows(reader.pages[page - 1].extract_text() or ""):
                make_chunk(document=doc, text=text, page_start=page, page_end=page)
        docs[stem] = doc
    index_rebuild(collection=collection)
    return docs


def link_index(collection, source_root: Path, target_root: Path) -> None:
    dest = Path(target_root) / str(collection.pk)
    if not dest.exists():
        shutil.copytree(Path(source_root) / str(collection.pk), dest, symlinks=True)


def pages_collection(django_db_blocker, name: str, docs: list[tuple[str, str, list[int]]], index_root: Path, *,
                     words: int = 150, stride: int = 120):
    """For a module fixture to `yield from`: a committed collection of the chosen pages of real
    papers (docs: stem, title, 1-based pages) as word windows, indexed under `index_root`;
    yields (collection, user, index_root), deleted afterwards. Skips without ../shared/data."""
    with django_db_blocker.unblock():
        collection, user = _build_pages(name, docs, index_root, words, stride)
    yield collection, user, index_root
    with django_db_blocker.unblock():
        collection.delete()
        user.delete()


def _build_pages(name: str, docs: list[tuple[str, str, list[int]]], index_root: Path, words: int, stride: int):
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from pypdf import PdfReader

    from knowledge import services as knowledge
    from knowledge.indexing.build import index_rebuild
    from tests.conftest import paper
    from tests.factories import make_chunk, make_document

    old_root = settings.INDEX_ROOT
    settings.INDEX_ROOT = index_root
    try:
        user = get_user_model().objects.create_user(f"{name.lower()}-owner")
        collection = knowledge.collection_create(name=name, user=user)
        for stem, title, pages in docs:
            reader = PdfReader(str(paper(stem)))
            doc = make_document(collection=collection, title=title, original_name=f"{stem}.pdf",
                                media_type="application/pdf", pages=len(reader.pages))
            for page in pages:
                for text in page_windows(reader.pages[page - 1].extract_text() or "", words, stride):
                    make_chunk(document=doc, text=text, page_start=page, page_end=page)
        index_rebuild(collection=collection)
    finally:
        settings.INDEX_ROOT = old_root
    return collection, user


def on_fake_model(corpus, settings, fake_openai, model: str = "qwen2.5-coder-1.5b-instruct"):
    """(collection, user) of a `pages_collection` corpus, its index linked into this test's
    INDEX_ROOT, with the portal on the `openai` backend pointed at the fake server."""
    collection, user, index_root = corpus
    link_index(collection, index_root, settings.INDEX_ROOT)
    collection.refresh_from_db()
    settings.LLM_BACKEND = "openai"
    settings.LLM_MODEL = model
    settings.OPENAI_BASE_URL = fake_openai.base_url
    settings.OPENAI_API_KEY = ""
    settings.LLM_TIMEOUT_SECONDS = 5.0
    settings.LLM_MAX_RETRIES = 1
    settings.LLM_BUDGET_SECONDS = 20.0
    return collection, user


def fake_model_fixtures(name: str, docs: list[tuple[str, str, list[int]]], *, words: int = 150, stride: int = 120):
    """The module's `corpus` (a `pages_collection`, built once) and `collection` (its
    (collection, user) on the fake model) fixtures: `corpus, collection = fake_model_fixtures(...)`."""
    import pytest

    @pytest.fixture(scope="module")
    def corpus(django_db_setup, django_db_blocker, tmp_path_factory):
        yield from pages_collection(django_db_blocker, name, docs, tmp_path_factory.mktemp(f"{name.lower()}-index"),
                                    words=words, stride=stride)

    @pytest.fixture
    def collection(corpus, settings, fake_openai):
        return on_fake_model(corpus, settings, fake_openai)

    return corpus, collection
