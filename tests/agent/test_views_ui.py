"""The web UI of runs: run page, polling endpoint, citation panel, outcomes, retry, history, ask."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from agent.models import OUTCOME_CHOICES, Run, RunStep
from agent.presentation import answer_html, highlighted_html, stage_view
from agent.steps import AuditStep, PlanStep, RetrieveStep, SourceBrief
from agent.types import FactAudit, Outcome, PremiseCheck, SupportLabel, Verdict
from tests.factories import make_chunk, make_citation, make_document, make_run, make_step

pytestmark = pytest.mark.django_db

CHUNK_TEXT = (
    "BM25 ranks documents by term frequency. It saturates repeated terms with k1 = 1.5 "
    "and normalises by document length with b = 0.75."
)
QUOTE = "saturates repeated terms with k1 = 1.5"


def _retrieve(query: str, *chunk_ids: int) -> RetrieveStep:
    return RetrieveStep(queries=[query], k=5, per_query={query: [SourceBrief(chunk_id=i) for i in chunk_ids]})


@pytest.fixture
def answered(collection, alice):
    document = make_document(collection=collection, title="Okapi at TREC", media_type="application/pdf")
    chunk = make_chunk(document=document, text=CHUNK_TEXT, section_title="2 Method", page_start=4, page_end=4)
    run = make_run(
        collection=collection, user=alice, answer="BM25 saturates term frequency [1]. Unknown [7].",
        latency_ms=1234, cost_usd="0.001200", llm_calls=3,
    )
    make_step(run=run, step=PlanStep(question=run.question, sub_queries=["bm25 term saturation"]))
    make_step(run=run, step=_retrieve("bm25 term saturation", chunk.pk), duration_ms=40)
    make_step(run=run, step=AuditStep(sources=[chunk.pk], can_retry=True, verdict=Verdict.SUFFICIENT))
    make_citation(run=run, chunk=chunk, marker=1, quote=QUOTE)
    return run


def _login(client, user, password):
    assert client.login(username=user.username, password=password)
    return client


def test_it_shows_the_answer_with_marker_buttons_and_sources(client, answered, alice, password):
    body = _login(client, alice, password).get(reverse("agent:run_detail", args=[answered.pk])).content.decode()
    panel_url = reverse("agent:citation_panel", args=[answered.pk, 1])
    assert f'class="cite" data-panel-url="{panel_url}"' in body
    # [7] has no Citation row (the verifier dropped it), so it is not a button.
    assert "Unknown [7]." in body
    assert "Sources" in body and "Okapi at TREC, p. 4" in body
    assert "1234 ms" in body and "$0.0012" in body
    assert "bm25 term saturation" in body and "1 chunk found" in body and "SUFFICIENT" in body
    assert 'data-final="1"' in body


def test_a_viewer_of_the_collection_can_read_a_run(client, answered, bob, password):
    assert _login(client, bob, password).get(reverse("agent:run_detail", args=[answered.pk])).status_code == 200


@pytest.mark.parametrize(
    "name, method, extra",
    [
        ("agent:run_detail", "get", []),
        ("agent:run_status", "get", []),
        ("agent:citation_panel", "get", [1]),
        ("agent:run_retry", "post", []),
    ],
)
def test_charlie_gets_404_for_a_run_of_a_collection_he_is_not_in(
    client, answered, charlie, password, name, method, extra
):
    _login(client, charlie, password)
    response = getattr(client, method)(reverse(name, args=[answered.pk, *extra]))
    assert response.status_code == 404


def test_charlie_gets_404_for_history_and_ask_of_a_collection_he_is_not_in(client, collection, charlie, password):
    _login(client, charlie, password)
    assert client.get(reverse("agent:run_history", args=[collection.slug])).status_code == 404
    assert client.post(reverse("agent:collection_ask", args=[collection.slug]), {"question": "x?"}).status_code == 404
    response = client.post(reverse("agent:ask"), {"collection": collection.slug, "question": "What is BM25?"})
    assert response.status_code == 404
    assert not Run.objects.exists()


def test_charlie_gets_404_for_the_pdf_of_a_collection_he_is_not_in(client, answered, charlie, password):
    url = reverse("knowledge:document_file", kwargs={"pk": answered.citations.get().chunk.document_id})
    assert _login(client, charlie, password).get(url).status_code == 404


def test_anonymous_is_sent_to_login(client, answered):
    response = client.get(reverse("agent:run_detail", args=[answered.pk]))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def test_the_citation_panel_highlights_the_quoted_span(client, answered, alice, password):
    _login(client, alice, password)
    response = client.get(reverse("agent:citation_panel", args=[answered.pk, 1]), {"fragment": "1"})
    body = response.content.decode()
    assert f"<mark>{QUOTE}</mark>" in body
    assert "Okapi at TREC" in body and "Section: 2 Method" in body and "Page 4" in body
    assert "<html" not in body  # a fragment for the side panel
    pdf = reverse("knowledge:document_file", kwargs={"pk": answered.citations.get().chunk.document_id})
    assert f'href="{pdf}#page=4"' in body
    # Without JavaScript the same panel is a full page.
    full = client.get(reverse("agent:citation_panel", args=[answered.pk, 1])).content.decode()
    assert "<html" in full and f"<mark>{QUOTE}</mark>" in full


def test_a_citation_of_a_deleted_document_still_shows_its_text(client, answered, alice, password):
    answered.citations.get().chunk.document.delete()
    body = _login(client, alice, password).get(
        reverse("agent:citation_panel", args=[answered.pk, 1]), {"fragment": "1"}
    ).content.decode()
    assert f"<mark>{QUOTE}</mark>" in body and "has been removed" in body


def test_an_unknown_marker_is_404(client, answered, alice, password):
    _login(client, alice, password)
    assert client.get(reverse("agent:citation_panel", args=[answered.pk, 9])).status_code == 404


def test_a_stage_of_two_words_reads_as_words(client, collection, alice, password):
    run = make_run(collection=collection, user=alice, status=Run.Status.RUNNING, outcome="", stage="SEARCHING_WEB")
    _login(client, alice, password)
    summary = client.get(reverse("agent:run_status", args=[run.pk])).json()["fragments"]["summary"]
    assert "Searching web…" in summary and "_" not in summary.split("Now")[1].split("</dd>")[0]


def test_the_status_endpoint_sends_fragments_only_when_something_changed(client, collection, alice, password):
    run = make_run(collection=collection, user=alice, status=Run.Status.RUNNING, outcome="")
    _login(client, alice, password)
    url = reverse("agent:run_status", args=[run.pk])
    first = client.get(url).json()
    assert first["final"] is False and set(first["fragments"]) == {"summary", "stages", "answer"}
    assert client.get(url, {"since": first["updated"]}).json()["fragments"] == {}
    make_step(run=run, step=PlanStep(question=run.question, sub_queries=["what is k1", "what is b"]))
    Run.objects.filter(pk=run.pk).update(stage="RETRIEVING", progress_current=1, progress_max=6)
    second = client.get(url, {"since": first["updated"]}).json()
    assert second["updated"] != first["updated"]
    assert "what is k1" in second["fragments"]["stages"] and "what is b" in second["fragments"]["stages"]
    assert "Retrieving…" in second["fragments"]["summary"] and 'value="1"' in second["fragments"]["summary"]
    Run.objects.filter(pk=run.pk).update(status=Run.Status.DONE, outcome=Outcome.ANSWER, answer="Done.")
    run.refresh_from_db()
    run.save()  # bumps updated_at as the loop does when it finishes
    last = client.get(url, {"since": second["updated"]}).json()
    assert last["final"] is True and "Done." in last["fragments"]["answer"]


def test_a_partial_answer_shows_the_missing_evidence_box(client, collection, alice, password):
    run = make_run(collection=collection, user=alice, outcome=Outcome.PARTIAL, answer="Half of it.",
                   missing_evidence="Nothing says which value of b was used on TREC-3.")
    body = _login(client, alice, password).get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    assert 'class="outcome-box partial"' in body and "Missing evidence" in body
    assert "Nothing says which value of b was used on TREC-3." in body


def test_a_false_premise_answer_shows_the_correction_first(client, collection, alice, password):
    run = make_run(collection=collection, user=alice, outcome=Outcome.FALSE_PREMISE,
                   answer="BM25 was not introduced in 2015; it dates from TREC-3.")
    body = _login(client, alice, password).get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    assert body.index("Correction") < body.index("BM25 was not introduced in 2015") < body.index("How it was answered")


def test_a_refusal_says_what_was_searched_and_the_closest_passages(client, collection, alice, password):
    document = make_document(collection=collection, title="Dense retrieval")
    chunk = make_chunk(document=document, text="Dense retrievers embed queries and passages.", page_start=2)
    run = make_run(collection=collection, user=alice, outcome=Outcome.REFUSAL, answer="",
                   missing_evidence="No document mentions the price of tea.", context_chunk_ids=[chunk.pk])
    make_step(run=run, step=_retrieve("price of tea in 1850"))
    make_step(run=run, step=AuditStep(sources=[], can_retry=False, verdict=Verdict.INSUFFICIENT_REFUSE,
                                      missing=["the price of tea"]))
    body = _login(client, alice, password).get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    assert "Not answered" in body and "What was searched" in body and "price of tea in 1850" in body
    assert "Closest passages found" in body and "Dense retrievers embed queries" in body
    assert "No document mentions the price of tea." in body


def test_a_failed_run_shows_the_reason_and_a_retry_button(client, collection, alice, password):
    run = make_run(collection=collection, user=alice, status=Run.Status.FAILED, outcome="",
                   error="The language model did not answer within 60 s.")
    body = _login(client, alice, password).get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    assert "The language model did not answer within 60 s." in body
    assert f'action="{reverse("agent:run_retry", args=[run.pk])}"' in body


def test_only_a_failed_run_can_be_retried(client, answered, alice, password):
    _login(client, alice, password)
    assert client.post(reverse("agent:run_retry", args=[answered.pk])).status_code == 404


def test_history_lists_my_questions_filtered_by_outcome(client, collection, alice, bob, password):
    make_run(collection=collection, user=alice, question="Alice answered?", latency_ms=2500, cost_usd="0.0100")
    make_run(collection=collection, user=alice, question="Alice refused?", outcome=Outcome.REFUSAL)
    make_run(collection=collection, user=alice, question="Alice failed?", status=Run.Status.FAILED, outcome="")
    make_run(collection=collection, user=bob, question="Bob asked?")
    _login(client, alice, password)
    url = reverse("agent:run_history", args=[collection.slug])
    body = client.get(url).content.decode()
    assert "Alice answered?" in body and "Alice refused?" in body and "Bob asked?" not in body
    assert "2500 ms" in body and "$0.0100" in body
    refused = client.get(url, {"outcome": "REFUSAL"}).content.decode()
    assert "Alice refused?" in refused and "Alice answered?" not in refused
    failed = client.get(url, {"outcome": "FAILED"}).content.decode()
    assert "Alice failed?" in failed and "Alice refused?" not in failed


def test_history_search_keeps_my_questions_with_every_word_and_the_outcome_filter(
    client, collection, alice, bob, charlie, password
):
    make_run(collection=collection, user=alice, question="How does BM25 saturate term frequency?")
    make_run(collection=collection, user=alice, question="Which encoder does DPR use?")
    make_run(collection=collection, user=alice, question="Is bm25 better than TF-IDF?", outcome=Outcome.REFUSAL)
    make_run(collection=collection, user=bob, question="Bob asks about BM25 too?")
    url = reverse("agent:run_history", args=[collection.slug])
    _login(client, alice, password)
    body = client.get(url, {"q": "bm25"}).content.decode()
    assert "saturate term frequency" in body and "better than TF-IDF" in body
    assert "DPR" not in body and "Bob asks" not in body
    assert 'name="q" value="bm25"' in body and "?outcome=REFUSAL&amp;q=bm25" in body
    both = client.get(url, {"q": "frequency  BM25"}).content.decode()
    assert "saturate term frequency" in both and "better than TF-IDF" not in both
    refused = client.get(url, {"q": "bm25", "outcome": "REFUSAL"}).content.decode()
    assert "better than TF-IDF" in refused and "saturate term frequency" not in refused
    assert "No questions match" in client.get(url, {"q": "tea"}).content.decode()
    _login(client, charlie, password)
    assert client.get(url, {"q": "bm25"}).status_code == 404


def test_the_steps_fold_once_the_run_is_done(client, collection, alice, password):
    done = make_run(collection=collection, user=alice, answer="Done.")
    running = make_run(collection=collection, user=alice, status=Run.Status.RUNNING, outcome="", answer="")
    _login(client, alice, password)
    folded = client.get(reverse("agent:run_detail", args=[done.pk])).content.decode()
    assert "<details class=\"card stages-card\" data-fold-when-final>" in folded
    live = client.get(reverse("agent:run_detail", args=[running.pk])).content.decode()
    assert "<details class=\"card stages-card\" data-fold-when-final open>" in live


def test_the_global_ask_page_offers_only_my_collections(client, collection, charlie, password):
    from knowledge import services

    services.collection_create(name="Charlie's notes", user=charlie)
    body = _login(client, charlie, password).get(reverse("agent:ask")).content.decode()
    assert "Charlie&#x27;s notes" in body and collection.name not in body
    # Two plain choices, the checked answer first and chosen; no internal configuration name.
    assert '<input type="radio" name="config" value="agentic" checked> Checked answer (default)' in body
    assert '<input type="radio" name="config" value="hybrid"> Quick answer (no evidence check)' in body
    for internal in ("naive_dense", "agentic_no_audit", "bm25", "hybrid_rerank", "agentic_rerank"):
        assert internal not in body


def test_the_ask_form_offers_one_choice_when_the_default_is_the_quick_one(client, collection, alice, password,
                                                                         settings):
    settings.DEFAULT_RUN_CONFIG = "hybrid"
    body = _login(client, alice, password).get(reverse("knowledge:collection_detail", args=[collection.slug]))
    body = body.content.decode()
    assert '<input type="hidden" name="config" value="hybrid">' in body and 'type="radio"' not in body


# ---- pure presentation rules ----


def test_answer_markup_is_escaped_and_only_known_markers_become_buttons():
    html = answer_html("<script>x</script> A [1] B [2]", markers={1}, panel_url="/runs/5/citations/0/")
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert 'data-panel-url="/runs/5/citations/1/"' in html and "B [2]" in html


def test_the_highlight_marks_the_quote_where_the_verifier_found_it():
    text = "BM25 saturates Term\nFrequency with k1. Okapi BM25 saturates term frequency."
    assert highlighted_html(text, "bm25 saturates term frequency", 0) == (
        "<mark>BM25 saturates Term\nFrequency</mark> with k1. Okapi BM25 saturates term frequency."
    )
    assert "<mark>" not in highlighted_html(text, "dense retrieval", 0)


def test_stage_summary_reads_counts_and_missing_facts():
    audit = AuditStep(sources=[1], can_retry=True, verdict=Verdict.INSUFFICIENT_RETRY, missing=["the value of b"])
    view = stage_view("audit", audit)
    assert view.verdict == "INSUFFICIENT_RETRY" and view.missing == ["the value of b"]
    assert stage_view("retrieve", _retrieve("q", 1, 2, 3)).hits == 3


def test_a_step_no_model_reads_shows_its_title_and_timing_only(client, collection, alice, password):
    run = make_run(collection=collection, user=alice)
    RunStep.objects.create(run=run, ordinal=0, kind="audit", output={"verdict": "MAYBE"}, duration_ms=77)
    assert RunStep.objects.get(run=run).record() is None
    view = stage_view("audit", None, duration_ms=77)
    assert (view.title, view.duration_ms, view.verdict, view.notes) == ("Audit", 77, "", [])
    body = _login(client, alice, password).get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    assert 'data-stage="audit"' in body and "77 ms" in body and "MAYBE" not in body


def test_the_collection_page_has_the_ask_form_and_the_search_box(client, collection, bob, password):
    body = _login(client, bob, password).get(reverse("knowledge:collection_detail", args=[collection.slug])).content.decode()
    assert f'action="{reverse("agent:collection_ask", args=[collection.slug])}"' in body
    assert '<input type="radio" name="config" value="agentic" checked> Checked answer (default)' in body
    assert f'action="{reverse("knowledge:collection_search", args=[collection.slug])}"' in body


def test_charlie_gets_404_for_the_search_of_a_collection_he_is_not_in(client, collection, charlie, password):
    _login(client, charlie, password)
    response = client.get(reverse("knowledge:collection_search", args=[collection.slug]), {"q": "bm25"})
    assert response.status_code == 404


def test_quick_search_shows_the_fused_ranking_with_each_retriever_rank(client, collection, bob, password):
    from knowledge.indexing.build import index_rebuild

    document = make_document(collection=collection, title="Okapi at TREC", media_type="application/pdf")
    make_chunk(document=document, text=CHUNK_TEXT, section_title="2 Method", page_start=4)
    make_chunk(document=document, text="Dense passage retrieval encodes questions with a BERT encoder.")
    # More passages, so a word found in one chunk has a positive BM25 idf.
    for text in ("Sparse vectors are stored in compressed rows.", "Evaluation used nDCG at ten.",
                 "Annotators labelled relevance on a graded scale."):
        make_chunk(document=document, text=text)
    index_rebuild(collection=collection)
    _login(client, bob, password)
    url = reverse("knowledge:collection_search", args=[collection.slug])
    body = client.get(url, {"q": "BM25 k1 saturation", "fragment": "1"}).content.decode()
    assert "<html" not in body and "BM25 rank" in body and "Dense rank" in body
    rows = body.split("<tr>")[2:]
    assert "Okapi at TREC" in rows[0] and "2 Method" in rows[0]
    # A hit opens the PDF viewer at its passage.
    first = document.chunks.get(section_title="2 Method")
    assert f'href="{reverse("knowledge:document_viewer", args=[document.pk])}?chunk={first.pk}"' in rows[0]
    # The first passage is ranked 1st by BM25 (the only one with these words) and by dense.
    position, _score, bm25_rank, _dense_rank = re.findall(r'<td class="num">(.*?)</td>', rows[0])
    assert (position, bm25_rank) == ("1", "1")
    # Passages without any of the query's words have no BM25 rank, only a dense one.
    assert any(re.findall(r'<td class="num">(.*?)</td>', row)[2] == "\u2013" for row in rows[1:])
    full = client.get(url, {"q": "BM25 k1 saturation"}).content.decode()
    assert "<html" in full and "Okapi at TREC" in full


def test_asking_on_the_collection_page_creates_a_run_and_goes_to_it(client, collection, bob, password):
    _login(client, bob, password)
    response = client.post(
        reverse("agent:collection_ask", args=[collection.slug]),
        {"question": "  What is BM25?  ", "config": "hybrid"},
    )
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("agent:run_detail", args=[run.pk])
    assert (run.question, run.config_name, run.user, run.status) == ("What is BM25?", "hybrid", bob, "queued")


def test_the_global_ask_page_uses_the_picked_collection_and_the_default_config(
    client, collection, alice, password
):
    _login(client, alice, password)
    response = client.post(reverse("agent:ask"), {"collection": collection.slug, "question": "What is BM25?"})
    run = Run.objects.get()
    assert response.status_code == 302 and (run.collection, run.config_name) == (collection, "agentic")


def test_an_empty_question_is_refused_with_a_message(client, collection, alice, password):
    _login(client, alice, password)
    response = client.post(reverse("agent:ask"), {"collection": collection.slug, "question": "   "}, follow=True)
    assert "Type a question first." in response.content.decode() and not Run.objects.exists()
    response = client.post(reverse("agent:collection_ask", args=[collection.slug]),
                           {"question": "Is it?", "config": "no_such_config"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("knowledge:collection_detail", args=[collection.slug])
    assert "no_such_config" in response.content.decode() and not Run.objects.exists()


def test_retry_asks_the_same_question_with_the_same_config_as_a_new_run(client, collection, alice, password):
    failed = make_run(collection=collection, user=alice, status=Run.Status.FAILED, outcome="",
                      question="Why did it fail?", config_name="bm25", error="Worker lost.")
    _login(client, alice, password)
    response = client.post(reverse("agent:run_retry", args=[failed.pk]))
    new = Run.objects.exclude(pk=failed.pk).get()
    assert response["Location"] == reverse("agent:run_detail", args=[new.pk])
    assert (new.question, new.config_name, new.status) == ("Why did it fail?", "bm25", "queued")


def test_stage_summary_of_the_loop_records():
    retrieve = RetrieveStep(queries=["a", "b"], k=5, per_query={
        "a": [SourceBrief(chunk_id=1), SourceBrief(chunk_id=2)], "b": [SourceBrief(chunk_id=2)],
    })
    view = stage_view("retrieve", retrieve)
    assert view.per_query == [("a", 2), ("b", 1)] and view.hits == 2
    audit = AuditStep(
        sources=[1, 2], can_retry=False, verdict=Verdict.PARTIALLY_SUFFICIENT, missing=["b value"],
        facts=[FactAudit(fact="k1 value", label=SupportLabel.SUPPORTED)],
        premise=PremiseCheck(contradicted=True, reason="It was 1994."),
    )
    view = stage_view("audit", audit)
    assert [(n.fact, n.label, n.quotes) for n in view.needs] == [("k1 value", "supported", [])]
    assert view.missing == ["b value"]
    assert "Premise contradicted: It was 1994." in view.notes


def test_one_outcome_vocabulary_across_badge_filter_and_api_docs(client, collection, alice, password):
    """Each outcome reads the same on the run's badge, in the history filter and in the schema."""
    _login(client, alice, password)
    history = client.get(reverse("agent:run_history", args=[collection.slug])).content.decode()
    schema = client.get("/api/schema/?format=json").content.decode()
    for value, label in OUTCOME_CHOICES:
        run = make_run(collection=collection, user=alice, status=Run.Status.DONE, outcome=value)
        badge = client.get(reverse("agent:run_detail", args=[run.pk])).content.decode()
        assert re.search(rf'<span class="badge[^"]*">{re.escape(label)}</span>', badge), (value, label)
        assert f">{label}</a>" in history, (value, label)
        assert f"`{value}` - {label}" in schema, (value, label)
    assert "Not answered" in dict(OUTCOME_CHOICES).values()


def test_a_citation_of_a_text_source_is_labelled_by_its_type(client, collection, alice, password):
    document = make_document(collection=collection, title="Notes", media_type="text/markdown")
    chunk = make_chunk(document=document, text=CHUNK_TEXT, page_start=1, page_end=1)
    run = make_run(collection=collection, user=alice, answer="BM25 saturates terms [1].")
    make_citation(run=run, chunk=chunk, marker=1, quote=QUOTE)
    body = _login(client, alice, password).get(
        reverse("agent:citation_panel", args=[run.pk, 1]), {"fragment": "1"}
    ).content.decode()
    assert "PDF" not in body and "Page 1" not in body and "Markdown document" in body
    text_url = reverse("knowledge:document_text", args=[document.pk])
    assert f'href="{text_url}?chunk={chunk.pk}&amp;quote=' in body and "#passage" in body


def test_the_collection_page_links_to_asking_across_collections_with_it_ticked(client, collection, alice, password):
    from knowledge import services

    services.collection_create(name="Encoders", user=alice)
    _login(client, alice, password)
    page = client.get(reverse("knowledge:collection_detail", args=[collection.slug])).content.decode()
    link = f'{reverse("agent:ask")}?collection={collection.slug}'
    assert f'href="{link}">Ask across several collections' in page
    ask = client.get(link).content.decode()
    assert f'<input type="checkbox" name="collection" value="{collection.slug}" checked>' in ask
    assert '<input type="checkbox" name="collection" value="encoders">' in ask
    assert 'name="all_collections" value="1">' in ask


# A name a line break cut in one chunk that another chunk of the paper writes whole.
CUT_TEXT = "The Lumo- Sort index keeps every shelf label in one row. It never drops a label twice."
WHOLE_TEXT = "LumoSort is an index for shelf labels; LumoSort runs on a till."


def test_a_refusals_closest_passages_read_a_cut_name_as_the_paper_writes_it(client, collection, alice, password):
    document = make_document(collection=collection, title="Shelf labels")
    chunk = make_chunk(document=document, text=CUT_TEXT, page_start=3)
    make_chunk(document=document, text=WHOLE_TEXT, page_start=1)
    run = make_run(collection=collection, user=alice, outcome=Outcome.REFUSAL, answer="",
                   context_chunk_ids=[chunk.pk])
    body = _login(client, alice, password).get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    assert "The LumoSort index keeps every shelf label" in body and "Lumo- Sort" not in body


def test_the_citation_panel_shows_a_cut_name_whole_and_marks_the_quote(client, collection, alice, password):
    document = make_document(collection=collection, title="Shelf labels")
    chunk = make_chunk(document=document, text=CUT_TEXT, page_start=3)
    make_chunk(document=document, text=WHOLE_TEXT, page_start=1)
    run = make_run(collection=collection, user=alice, answer="The LumoSort index keeps every shelf label [1].")
    make_citation(run=run, chunk=chunk, marker=1, quote="The LumoSort index keeps every shelf label in one row.",
                  quote_start=0)
    body = _login(client, alice, password).get(reverse("agent:citation_panel", args=[run.pk, 1]),
                                               {"fragment": "1"}).content.decode()
    assert "<mark>The LumoSort index keeps every shelf label in one row.</mark> It never drops" in body


def test_the_audit_stage_shows_each_needs_chosen_sentences_with_their_source(client, collection, alice, password):
    from agent.types import SupportingSentence

    document = make_document(collection=collection, title="Shelf <labels>")
    chunk = make_chunk(document=document, text=CUT_TEXT, page_start=3)
    make_chunk(document=document, text=WHOLE_TEXT, page_start=1)
    run = make_run(collection=collection, user=alice, answer="The LumoSort index keeps every shelf label [1].")
    quote = "The Lumo- Sort index keeps every shelf label in one row."
    make_step(run=run, step=AuditStep(sources=[chunk.pk], can_retry=False, verdict=Verdict.PARTIALLY_SUFFICIENT, facts=[
        FactAudit(fact="where the index keeps labels", label=SupportLabel.SUPPORTED, sentences=[
            SupportingSentence(chunk_id=chunk.pk, quote=quote, label=SupportLabel.SUPPORTED, quote_start=0)]),
        FactAudit(fact="how often a label is <dropped>", label=SupportLabel.UNSUPPORTED, sentences=[
            SupportingSentence(chunk_id=chunk.pk, quote="It never drops a label twice.",
                               label=SupportLabel.UNSUPPORTED, quote_start=58)]),
        FactAudit(fact="the label colour", label=SupportLabel.UNSUPPORTED),
    ]))
    body = _login(client, alice, password).get(reverse("agent:run_detail", args=[run.pk])).content.decode()
    stage = body[body.index('data-stage="audit"'):]
    stage = stage[:stage.index("</ol>")]
    # The quote joined as the paper writes the name, escaped, cited by its document and page.
    assert ("<q>The LumoSort index keeps every shelf label in one row.</q> "
            "<cite class=\"muted\">Shelf &lt;labels&gt;, p. 3</cite>") in stage
    assert "Lumo- Sort" not in stage
    # An unsupported need's sentence is the closest evidence, and says so; a need without one shows none.
    assert '<span class="muted">closest:</span> <q>It never drops a label twice.</q>' in stage
    assert "how often a label is &lt;dropped&gt;" in stage
    assert stage.count("<q>") == 2
    # The polled fragment is the same.
    status = client.get(reverse("agent:run_status", args=[run.pk])).json()["fragments"]["stages"]
    assert "<q>The LumoSort index keeps every shelf label in one row.</q>" in status


def test_an_audit_quote_of_a_chunk_the_run_cannot_read_shows_without_a_source():
    from agent.presentation import Passage
    from agent.types import SupportingSentence

    audit = AuditStep(sources=[7], can_retry=False, verdict=Verdict.SUFFICIENT, facts=[
        FactAudit(fact="f", label=SupportLabel.SUPPORTED, sentences=[
            SupportingSentence(chunk_id=7, quote="A shelf- tested lamp is kept.", label=SupportLabel.SUPPORTED),
            SupportingSentence(chunk_id=8, quote="Lamps glow.", label=SupportLabel.SUPPORTED)])])
    quotes = stage_view("audit", audit, passages={8: Passage(document_id=1, title="Lamps", page=2)}).needs[0].quotes
    assert [(q.text, q.where) for q in quotes] == [("A shelftested lamp is kept.", ""), ("Lamps glow.", "Lamps, p. 2")]
