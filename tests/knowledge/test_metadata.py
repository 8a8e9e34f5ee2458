"""knowledge.metadata: what ingestion infers, and what an editor's values must be (no database)."""

from __future__ import annotations

import pytest

from knowledge.metadata import (
    MetadataError,
    clean_tags,
    clean_year,
    infer_metadata,
    merge_inferred,
    parse_year_range,
)

STAMP = "Document Expansion by Query Prediction\narXiv:1904.08375v2  [cs.IR]  25 Sep 2019\nRodrigo Nogueira"


def test_it_reads_the_arxiv_stamp_and_dates_the_paper_by_its_first_version():
    # The stamp's date is the latest version's; the identifier's YYMM is the paper's year.
    found = infer_metadata("arXiv:2309.15217v2 [cs.CL] 28 Apr 2025", "ragas.pdf")
    assert found == {"arxiv_id": "2309.15217", "arxiv_category": "cs.CL", "year": 2023}
    assert infer_metadata(STAMP, "upload.pdf")["year"] == 2019


def test_it_falls_back_to_an_identifier_in_the_file_name():
    assert infer_metadata("No stamp on this page.", "2104.08663_beir_neurips2021.pdf") == {
        "arxiv_id": "2104.08663", "year": 2021,
    }


@pytest.mark.parametrize("text, name", [
    ("Published in 2019, cites Smith 2017.", "paper.pdf"),  # years on a page are not the paper's
    ("", "results-1234.5678.pdf"),  # month 34: not an arXiv identifier
    ("", "0612.1234.pdf"),  # before the scheme began (April 2007)
    ("", "v1.2345.67890x.pdf"),
])
def test_it_infers_nothing_it_cannot_read_reliably(text, name):
    assert infer_metadata(text, name) == {}


def test_re_ingesting_keeps_what_an_editor_set():
    current = {"year": 2018, "tags": ["ir"], "edited": ["year", "tags"], "arxiv_id": "1904.08375"}
    merged = merge_inferred(current, {"year": 2019, "arxiv_id": "1904.08375", "arxiv_category": "cs.IR"})
    assert merged == {**current, "arxiv_category": "cs.IR"}
    assert merge_inferred({}, {"year": 2019}) == {"year": 2019}


def test_it_cleans_an_editors_year_or_says_what_is_wrong():
    assert clean_year(" 2021 ") == 2021
    assert clean_year("") is None
    with pytest.raises(MetadataError, match="whole number such as 2021"):
        clean_year("last year")
    with pytest.raises(MetadataError, match="out of range"):
        clean_year(21)


def test_it_cleans_tags_from_a_list_or_a_comma_separated_string():
    assert clean_tags(" dense  retrieval, survey,Survey ,, ") == ["dense retrieval", "survey"]
    assert clean_tags(["ir"]) == ["ir"]
    assert clean_tags(None) == []
    with pytest.raises(MetadataError, match="at most 50 characters"):
        clean_tags(["x" * 51])
    with pytest.raises(MetadataError, match="at most 20 tags"):
        clean_tags([f"t{i}" for i in range(21)])
    with pytest.raises(MetadataError, match="must be text"):
        clean_tags([3])


def test_it_parses_a_year_filter_as_a_person_types_it():
    assert parse_year_range("2021") == (2021, 2021)
    assert parse_year_range(" 2019-2021 ") == (2019, 2021)
    for bad in ("2021-2019", "nineteen", "2019-", "-2019"):
        with pytest.raises(MetadataError):
            parse_year_range(bad)
