"""Extraction, cleaning and chunking: synthetic pages and real papers from ../shared/data/papers."""

from __future__ import annotations

import itertools

import pytest

from knowledge.chunking import ChunkParams, chunk_pages, chunk_text_from_pages
from knowledge.embeddings import count_tokens
from knowledge.extract import CleanPage, SectionStart, clean_pages, extract_pdf, extract_text
from tests.conftest import paper


def _words(texts):
    return [len(t.split()) for t in texts]


@pytest.fixture(scope="module")
def bert():
    return extract_pdf(paper("1810.04805v2_bert"))


def test_it_joins_words_hyphenated_across_lines_but_keeps_real_compounds():
    pages = clean_pages([
        "A new language representa-\ntion model is pre-trained here.\nWe pre-\ntrain it for long.",
        "More text on the second page.",
    ])
    assert "language representation model" in pages[0].text
    assert "We pre-train it" in pages[0].text


def test_it_drops_running_headers_and_page_numbers():
    bodies = ["Cats purr when content.", "Dogs bark at strangers.", "Owls hunt at night.",
              "Bees make honey in summer.", "Fish swim in schools."]
    raw = [f"Published as a conference paper at ICLR 2024\n{body}\n{n}" for n, body in enumerate(bodies, 1)]
    pages = clean_pages(raw)
    assert [p.text for p in pages] == bodies


def test_it_normalises_ligatures_and_odd_whitespace():
    (page,) = clean_pages(["The ﬁrst ﬂow\u00a0is\u200b ﬁne."])
    assert page.text == "The first flow is fine."


def test_it_detects_headings_and_marks_references():
    pages = clean_pages([
        "Abstract\nWe study things.\n1 Introduction\nText here.\n3.1 Problem Formalization\nMore text.",
        "References\nA. Author. 2020. A paper. In Proc.\nA Appendix Details\nExtra.",
    ])
    titles = [(s.title, s.is_reference) for p in pages for s in p.sections]
    assert titles == [
        ("Abstract", False), ("1 Introduction", False), ("3.1 Problem Formalization", False),
        ("References", True), ("A Appendix Details", False),
    ]
    for page in pages:
        for s in page.sections:
            assert page.text[s.offset:].startswith(s.title)


def test_markdown_and_html_become_one_page_with_sections():
    md = extract_text("# Guide\n\nIntro text.\n\n## Upload\n\nDrag files here.\n", media_type="text/markdown")
    assert [s.title for s in md.pages[0].sections] == ["Guide", "Upload"]
    assert "Drag files here." in md.pages[0].text
    page = extract_text(
        "<html><head><title>x</title><script>var a=1;</script></head><body><h1>FAQ</h1><p>Is it &amp; ok?</p></body></html>",
        media_type="text/html",
    ).pages[0]
    assert page.text == "FAQ\n\nIs it & ok?"
    assert page.sections[0].title == "FAQ"


def test_it_keeps_every_chunk_within_budget_and_offsets_exact_on_synthetic_text():
    para = " ".join(f"Sentence number {i} says something about retrieval." for i in range(40))
    pages = [CleanPage(1, f"1 Intro\n\n{para}\n\n{para}", [SectionStart("1 Intro", 0)]), CleanPage(2, para, [])]
    params = ChunkParams(max_tokens=60, overlap_tokens=12)
    chunks = chunk_pages(pages, params=params, count_tokens=_words)
    assert len(chunks) > 10
    for c in chunks:
        assert c.token_count <= 60
        assert chunk_text_from_pages(pages, page_start=c.page_start, page_end=c.page_end,
                                     char_start=c.char_start, char_end=c.char_end) == c.text
        assert c.section_title == "1 Intro"
    # Consecutive chunks inside one paragraph overlap by a sentence (the sentence-window fallback).
    assert any(a.text.endswith(b.text.split(". ")[0] + ".") for a, b in itertools.pairwise(chunks))


def test_a_sentence_cut_by_a_page_break_is_one_unit_of_its_chunk():
    first = "We tried many settings. The encoder we describe here uses a stack of"
    pages = [CleanPage(1, first, []), CleanPage(2, "six identical layers with residual links. Then we stop.", [])]
    chunks = chunk_pages(pages, params=ChunkParams(max_tokens=16, overlap_tokens=0), count_tokens=_words)
    whole = "The encoder we describe here uses a stack of\n\nsix identical layers with residual links."
    holder = [c for c in chunks if whole in c.text]
    assert len(holder) == 1 and (holder[0].page_start, holder[0].page_end) == (1, 2)
    for c in chunks:
        assert chunk_text_from_pages(pages, page_start=c.page_start, page_end=c.page_end,
                                     char_start=c.char_start, char_end=c.char_end) == c.text


def test_it_cuts_a_sentence_longer_than_the_window_into_word_windows():
    long_text = " ".join(["token"] * 500)
    chunks = chunk_pages([CleanPage(1, long_text, [])], params=ChunkParams(max_tokens=100), count_tokens=_words)
    assert [c.token_count for c in chunks] == [100] * 5
    assert " ".join(c.text for c in chunks) == long_text


def test_it_finds_a_known_sentence_on_its_page(bert):
    by_number = {p.number: p.text for p in bert.pages}
    assert "We introduce a new language representation model called BERT" in by_number[1]
    assert "BERTBASE was chosen to have the same model size as OpenAI GPT for comparison purposes." in by_number[3]
    assert "BERTBASE was chosen" not in by_number[2] + by_number[4]
    assert bert.page_count == 16


def test_it_leaves_no_hyphenation_break_in_known_words(bert):
    text = "\n".join(p.text for p in bert.pages)
    for broken in ("representa- tion", "representa-tion", "lan- guage", "lan-guage", "unidirec-tional"):
        assert broken not in text
    assert "language representation model" in text
    assert "pre-train deep bidirectional representations" in text


def test_it_detects_sections_and_references_in_bert(bert):
    titles = [s.title for p in bert.pages for s in p.sections]
    for expected in ("Abstract", "1 Introduction", "3.1 Pre-training BERT", "4.1 GLUE", "References"):
        assert expected in titles
    refs = [s for p in bert.pages for s in p.sections if s.title == "References"]
    assert refs[0].is_reference


def test_it_removes_running_headers_and_page_numbers_from_real_papers():
    iclr = extract_pdf(paper("2310.03025v2_retrieval_meets_long_context"))
    assert all("Published as a conference paper" not in p.text for p in iclr.pages)
    acm = extract_pdf(paper("2403.00784v1_bert_for_ir_survey"))
    assert all("Manuscript submitted to ACM" not in p.text for p in acm.pages)
    assert all("J. Wang, J. X. Huang, X. Tu" not in p.text[:200] for p in acm.pages[1:])
    attention = extract_pdf(paper("1706.03762v5_attention_is_all_you_need"))
    for page in attention.pages[1:9]:
        assert not page.text.rstrip().endswith(f"\n\n{page.number}")


def test_real_chunks_fit_the_model_window_and_map_back_to_the_page_text(bert):
    chunks = chunk_pages(bert.pages)
    real = count_tokens([c.text for c in chunks])
    assert max(real) <= ChunkParams().max_tokens
    assert [c.token_count for c in chunks] == real
    for c in chunks:
        assert chunk_text_from_pages(bert.pages, page_start=c.page_start, page_end=c.page_end,
                                     char_start=c.char_start, char_end=c.char_end) == c.text
    single = [c for c in chunks if c.page_start == c.page_end]
    page_text = {p.number: p.text for p in bert.pages}
    assert all(page_text[c.page_start][c.char_start:c.char_end] == c.text for c in single)
    assert any(c.is_reference for c in chunks) and not chunks[1].is_reference
    # Near the window: most chunks use most of it, so few embedding calls are wasted.
    assert sorted(c.token_count for c in chunks)[len(chunks) // 2] >= 150


def test_a_word_without_spaces_is_hard_split_to_the_chunk_character_cap():
    # The tokenizer counts a 60,000-character "word" as one [UNK] piece, so only a character
    # cap keeps it from becoming one giant chunk.
    blob = "Intro sentence here. " + "QUJD" * 15_000 + " Closing words."
    params = ChunkParams()
    specs = chunk_pages([CleanPage(1, blob)], params=params, count_tokens=count_tokens)
    assert max(len(s.text) for s in specs) <= params.max_chars
    assert "".join(s.text for s in specs).replace(" ", "") == blob.replace(" ", "")


def test_a_text_file_with_a_nul_byte_anywhere_fails_with_a_reason():
    from knowledge.extract import ExtractError

    with pytest.raises(ExtractError) as caught:
        extract_text("plain words " * 2000 + "\x00 hidden binary", media_type="text/plain")
    assert caught.value.code == "binary" and "NUL" in caught.value.message
