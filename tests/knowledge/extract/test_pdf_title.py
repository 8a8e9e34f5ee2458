"""Document titles come from the file (the PDF's first page, a Markdown heading), not its name."""

from __future__ import annotations

import pytest

from knowledge import services
from knowledge.extract import FirstPageRuns, extract_pdf, extract_text, plausible_title
from knowledge.ingest import job_run
from tests.conftest import ingest_markdown, paper

# The printed titles of a few of the shared papers, as a reader sees them on page 1. Their
# files are named "1706.03762v5_attention_is_all_you_need.pdf" and so on.
PRINTED = {
    "1706.03762v5_attention_is_all_you_need": "Attention Is All You Need",
    "2307.03172v3_lost_in_the_middle": "Lost in the Middle: How Language Models Use Long Contexts",
    "2310.03025v2_retrieval_meets_long_context": "RETRIEVAL MEETS LONG CONTEXT LARGE LANGUAGE MODELS",
    "2302.00083v3_in_context_ralm": "In-Context Retrieval-Augmented Language Models",
    "2405.20139v1_gnn_rag": "GNN-RAG: Graph Neural Retrieval for Large Language Model Reasoning",
}


@pytest.mark.parametrize("stem, title", PRINTED.items())
def test_a_pdf_title_is_the_largest_text_at_the_top_of_page_one(stem, title):
    # Two of these have a figure on page 1 whose labels are set larger than the title, and
    # one sets its title in small capitals (each capital a run of its own).
    assert extract_pdf(paper(stem), max_pages=60).metadata["title"] == title


def test_the_title_stops_at_the_smaller_author_line():
    runs = FirstPageRuns(height=800, bottom=0)
    for size, y, text in [(9, 780, "Preprint."), (17, 740, "A Study of "), (17, 740, "Things"),
                          (17, 720, "at Scale"), (11, 700, "Ann Poe, Bo Li"), (17, 300, "60 70 80 Accuracy")]:
        runs.runs.append((size, y, text))
    assert runs.title() == "A Study of Things at Scale"


@pytest.mark.parametrize("junk", ["Microsoft Word - draft7.docx", "untitled", "12 34 56 78", ""])
def test_a_junk_title_is_not_used(junk):
    assert plausible_title(junk) == ""


def test_markdown_takes_its_first_top_level_heading_as_title():
    assert extract_text("intro line\n\n# Sparse Tricks\n\ntext\n\n# Other", media_type="text/markdown"
                        ).metadata == {"title": "Sparse Tricks"}


@pytest.mark.django_db
def test_ingestion_sets_the_title_from_the_file_and_keeps_an_editors_title(collection, alice):
    document = ingest_markdown(collection, alice, "notes_v2.md", "# Dense Retrieval Notes\n\nVectors rank passages.\n")
    assert (document.title, document.original_name) == ("Dense Retrieval Notes", "notes_v2.md")
    services.document_update(document=document, title="My notes")
    job_run(job_id=services.document_reingest(document=document, user=alice).pk)
    document.refresh_from_db()
    assert document.title == "My notes"
