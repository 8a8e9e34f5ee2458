"""Whole-paper summaries and comparisons with an LLM backend, map-reduce (agent.llm.whole),
through the real worker code and the real `openai` client against the fake server.

The two papers are written for these tests (made-up systems, so no model or test data knows
them): each has an abstract, an introduction, a method, results, a conclusion and a
references chunk, as ingestion would section them."""

from __future__ import annotations

import re

import pytest

from agent import services
from agent.llm.whole import (
    CHARS_PER_TOKEN,
    MAX_PAPERS,
    PROMPT_TOKENS,
    PaperRef,
    SourcesLibrary,
    WholePapers,
    select_papers,
)
from agent.models import Run
from agent.types import Outcome, Plan, Source, Verdict
from tests.agent.test_llm_runs import ListRetriever
from tests.fake_openai import Reply, numbered_sentences

pytestmark = pytest.mark.django_db

LUMEN = ("Lumen: Learned Pruning of Dense Retrieval Indexes", "lumen.pdf", [
    ("Abstract", "We present Lumen, a dense retriever that prunes its passage index with a learned gate. "
                 "Lumen keeps an MRR@10 of 38.2 on MS MARCO while searching 4 times fewer vectors."),
    ("1 Introduction", "Dense retrievers store one vector per passage, which makes their indexes large. "
                       "We propose a learned gate that decides which passage vectors to keep in the index."),
    ("3 Method", "Lumen encodes queries and passages with a shared BERT-base encoder. "
                 "The gate is trained with a margin ranking loss on MS MARCO triples."),
    ("5 Results", "On MS MARCO, Lumen reaches an MRR@10 of 38.2, against 37.1 for the unpruned index. "
                  "Building the pruned index takes 3 hours instead of 11 hours."),
    ("6 Conclusion", "We showed that a learned gate can prune a dense retrieval index without losing accuracy."),
    ("References", "Karpukhin, V. and others. Dense passage retrieval for open-domain question answering. "
                   "In Proceedings of EMNLP, 2020."),
])
QUILL = ("Quill: Sparse Retrieval with Predicted Expansion Terms", "quill.pdf", [
    ("Abstract", "We present Quill, a sparse retriever that expands each document with predicted terms "
                 "before indexing. Quill improves BM25 by 5.4 points of nDCG@10 on BEIR."),
    ("1 Introduction", "Sparse retrieval misses documents that use other words than the query. "
                       "We introduce Quill, which adds the terms a query would likely use to each document."),
    ("3 Method", "A T5-base model predicts 20 expansion terms for every document. "
                 "The expanded documents are indexed with BM25 as usual."),
    ("4 Experiments", "On BEIR, Quill reaches an nDCG@10 of 0.471, against 0.417 for BM25. "
                      "Expansion adds 30 percent to the size of the index."),
    ("5 Conclusion", "Document expansion makes a sparse index competitive with dense retrievers at a "
                     "fraction of their cost."),
    ("References", "Nogueira, R. and others. Document expansion by query prediction. arXiv, 2019."),
])


@pytest.fixture
def papers(collection):
    from tests.factories import make_chunk, make_document

    docs = {}
    for title, name, sections in (LUMEN, QUILL):
        doc = make_document(collection=collection, title=title, original_name=name, pages=len(sections))
        for page, (section, text) in enumerate(sections, start=1):
            make_chunk(document=doc, text=text, section_title=section, page_start=page, page_end=page,
                       is_reference=section == "References")
        docs[name.split(".")[0]] = doc
    return docs


def _chunks(collection):
    from knowledge.models import Chunk

    return list(Chunk.objects.filter(document__collection=collection).select_related("document").order_by("pk"))


def _task(body: dict) -> str:
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return user.split("\n", 2)[1]


def _title(text: str) -> str:
    m = re.search(r'<document title="([^"]+)"', text)
    return m.group(1) if m else ""


def summarising_model(*, invent: str = "", out_of_range: bool = False):
    """A cooperative model for the whole-paper schemas. Map: copies the paper's first sentence and
    restates its first result, each citing its number. Reduce: contrasts the two papers' first
    summary sentences. `invent`: for the paper whose title holds it, only a sentence with a
    number the paper does not state. `out_of_range`: a third sentence citing [99]."""

    def reply(body: dict) -> Reply:
        name = (body.get("response_format") or {}).get("json_schema", {}).get("name", "")
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        if name != "SummaryOut":
            return Reply(content={})
        shown = numbered_sentences(text)
        task = _task(body)
        if task.startswith("Summarise the paper"):
            title = _title(text)
            result = next(n for n, s in shown.items() if re.search(r"\d+\.\d", s))
            if invent and invent in title:
                return Reply(content={"answer": [
                    {"text": f"{title.split(':')[0]} reaches an nDCG@10 of 0.512 on BEIR.", "sentences": [result]}]})
            claims = [{"text": shown[1], "sentences": [1]},
                      {"text": shown[result], "sentences": [result]}]
            if out_of_range:
                claims.append({"text": "It is the fastest retriever ever built.", "sentences": [99]})
            return Reply(content={"answer": claims})
        # Reduce: the first summary sentence of each paper.
        blocks = re.findall(r'<document title="[^"]+">\n(.*?)\n</document>', text, re.S)
        firsts = [int(re.match(r"\[(\d+)\]", b).group(1)) for b in blocks]
        return Reply(content={"answer": [
            {"text": "Lumen is a dense retriever that prunes its index, while Quill is a sparse retriever "
                     "that expands each document with predicted terms.", "sentences": firsts}]})

    return reply


def _run(collection, alice, question: str) -> Run:
    run = services.run_create(collection=collection, user=alice, question=question, config_name="agentic",
                              enqueue=False)
    return services.run_execute(run_id=run.pk, retriever=ListRetriever(_chunks(collection)))


def _dropped(run: Run) -> list[str]:
    return run.steps.get(kind="verify").output.get("dropped", [])


def _answered(fake_openai, collection, alice, question: str) -> tuple[Run, dict[str, int]]:
    """The run of `question` with the cooperative model, which answers; and its calls per step kind."""
    fake_openai.responder = summarising_model()
    run = _run(collection, alice, question)
    assert run.status == Run.Status.DONE, run.error
    assert run.outcome == Outcome.ANSWER, (run.answer, run.missing_evidence, _dropped(run))
    return run, {s.kind: s.llm_calls for s in run.steps.all()}


def test_a_summary_request_is_one_bounded_call_over_the_papers_sections(openai_settings, fake_openai, collection,
                                                                        alice, papers):
    run, calls = _answered(fake_openai, collection, alice, "Summarize the paper Lumen.")

    # One map call; no plan call (the request is read paper by paper), no reduce for one paper.
    assert run.llm_calls == 1
    assert (calls["plan"], calls["audit"], calls["generate"]) == (0, 1, 0)
    assert run.steps.get(kind="audit").prompt_tokens == run.prompt_tokens > 0
    request = fake_openai.chat_requests[0]
    assert request.body["response_format"]["json_schema"]["name"] == "SummaryOut"
    # Sections in the prompt, the references never; within the prompt budget.
    for label in ("Abstract", "Introduction (contributions)", "Method", "Results", "Conclusion"):
        assert f'<section name="{label}">' in request.text
    assert "Karpukhin" not in request.text and "Quill" not in request.text
    assert len(request.text) / CHARS_PER_TOKEN <= PROMPT_TOKENS
    # The answer: the model's two sentences, each cited with the paper's own sentence, verified.
    assert "We present Lumen" in run.answer and "38.2" in run.answer
    citations = list(run.citations.all())
    assert citations and all(c.verified for c in citations)
    assert {c.chunk.document_id for c in citations} == {papers["lumen"].pk}
    assert all(c.quote in c.chunk_text for c in citations)


def test_two_named_papers_are_compared_with_citations_carried_to_their_sentences(openai_settings, fake_openai,
                                                                                 collection, alice, papers):
    run, calls = _answered(fake_openai, collection, alice, "Compare the papers Quill and Lumen.")

    # Two map calls (in the order the papers are named) and one reduce.
    assert run.llm_calls == 3
    assert (calls["audit"], calls["generate"]) == (2, 1)
    maps = [_title(r.text) for r in fake_openai.chat_requests[:2]]
    assert maps == [QUILL[0], LUMEN[0]]
    reduce_prompt = fake_openai.chat_requests[2].text
    # The reduce reads the verified summary sentences only, not the papers again.
    assert "Compare the papers" in reduce_prompt and "T5-base" in fake_openai.chat_requests[0].text
    assert "T5-base" not in reduce_prompt and "We present Quill" in reduce_prompt
    # The comparison comes first; its citations are the two papers' own sentences.
    assert run.answer.startswith("Lumen is a dense retriever that prunes its index, while Quill")
    first = run.answer.split(". ", 1)[0]
    markers = [int(n) for n in re.findall(r"\[(\d+)\]", run.answer.split("predicted terms.", 1)[1][:12])]
    cited = {c.marker: c for c in run.citations.all()}
    assert {cited[m].chunk.document_id for m in markers} == {papers["lumen"].pk, papers["quill"].pk}, first
    assert all(cited[m].quote in cited[m].chunk_text for m in markers)
    # Then each paper's summary.
    assert "We present Quill" in run.answer and "We present Lumen" in run.answer


def test_a_sentence_citing_a_number_that_was_not_shown_is_dropped(openai_settings, fake_openai, collection, alice,
                                                                  papers):
    fake_openai.responder = summarising_model(out_of_range=True)

    run = _run(collection, alice, "Summarise the paper Lumen.")

    assert run.outcome == Outcome.ANSWER, (run.answer, _dropped(run))
    assert "fastest retriever" not in run.answer
    assert any("cites no sentence it was shown: It is the fastest" in d for d in _dropped(run))
    assert "We present Lumen" in run.answer


def test_an_invented_number_is_dropped_by_the_verifier_and_its_paper_named_in_the_note(openai_settings,
                                                                                       fake_openai, collection,
                                                                                       alice, papers):
    fake_openai.responder = summarising_model(invent="Quill")

    run = _run(collection, alice, "Compare the papers Lumen and Quill.")

    assert run.status == Run.Status.DONE, run.error
    assert run.outcome == Outcome.PARTIAL, (run.answer, _dropped(run))
    assert "0.512" not in run.answer
    assert any("0.512" in d and "unsupported" in d for d in _dropped(run)), _dropped(run)
    assert f'No summary of "{QUILL[0]}"' in run.missing_evidence
    # Lumen's summary stands; with one paper summarised there is nothing to compare: no reduce call.
    assert "We present Lumen" in run.answer
    assert run.llm_calls == 2


def test_a_spent_budget_ends_the_run_partial_without_starting_another_call(openai_settings, fake_openai,
                                                                           collection, alice, papers):
    openai_settings.LLM_TIMEOUT_SECONDS = 5.0
    openai_settings.LLM_BUDGET_SECONDS = 1.0
    model = summarising_model()

    def slow_model(body: dict) -> Reply:
        reply = model(body)
        reply.delay = 0.6
        return reply

    fake_openai.responder = slow_model

    run = _run(collection, alice, "Compare the papers Lumen and Quill.")

    # Two map calls of 0.6 s each spend the 1 s budget: the comparison is never asked for.
    assert run.status == Run.Status.DONE, run.error
    assert run.outcome == Outcome.PARTIAL, run.answer
    assert run.llm_calls == 2 and len(fake_openai.chat_requests) == 2
    assert "The comparison was not written: the run's LLM time budget was spent." in run.missing_evidence
    assert "We present Lumen" in run.answer and "We present Quill" in run.answer


def test_a_model_that_never_answers_in_time_fails_the_run_with_the_reason(openai_settings, fake_openai,
                                                                          collection, alice, papers):
    openai_settings.LLM_TIMEOUT_SECONDS = 5.0
    openai_settings.LLM_BUDGET_SECONDS = 0.5
    fake_openai.responder = lambda body: Reply(content={"answer": []}, delay=3.0)

    from agent.tasks import answer_run
    from knowledge.indexing.build import index_rebuild

    index_rebuild(collection=collection)
    run = services.run_create(collection=collection, user=alice, question="Compare the papers Lumen and Quill.",
                              config_name="agentic", enqueue=False)
    answer_run(run.pk)
    run.refresh_from_db()

    # The first map call spends the budget; the second paper is never tried.
    assert run.status == Run.Status.FAILED
    assert "budget" in run.error
    assert len(fake_openai.chat_requests) == 1


def test_a_quoted_title_the_collection_lacks_is_refused_without_a_call(openai_settings, fake_openai, collection,
                                                                       alice, papers):
    fake_openai.responder = summarising_model()

    run = _run(collection, alice, "Summarise the paper 'Dense Passage Retrieval'.")

    assert run.outcome == Outcome.REFUSAL
    assert run.llm_calls == 0 and not fake_openai.chat_requests
    assert "no paper titled" in run.steps.get(kind="audit").output["reason"]


# -- choosing the papers (no model, no database) -------------------------------------------------


def _paper(n: int, title: str, file_name: str = "") -> PaperRef:
    return PaperRef(n, title, file_name)


CATALOGUE = [_paper(1, "BERT: Pre-training of Deep Bidirectional Transformers"),
             _paper(2, "Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks"),
             _paper(3, "1904.08375v2 doc2query", "1904.08375v2_doc2query.pdf"),
             _paper(4, "Attention Is All You Need"),
             _paper(5, "GNN-RAG: Graph Neural Retrieval")]


def _source(doc: int, chunk: int) -> Source:
    return Source(chunk_id=chunk, document_id=doc, document_title=CATALOGUE[doc - 1].title, text="x")


def test_a_longer_name_is_not_read_as_the_shorter_title_inside_it():
    sel = select_papers("Compare Sentence-BERT and doc2query", [], CATALOGUE)
    assert [p.document_id for p in sel.papers] == [2, 3]
    sel = select_papers("How do BERT and Sentence-BERT differ as papers?", [], CATALOGUE)
    assert [p.document_id for p in sel.papers] == [1, 2]
    # Two versions of one paper share its name: both are named.
    versions = [_paper(7, "BEIR: A Heterogeneous Benchmark"), _paper(8, "BEIR: A Heterogenous Benchmark")]
    assert [p.document_id for p in select_papers("Summarise the two BEIR papers", [], versions).papers] == [7, 8]


def test_without_a_title_the_papers_retrieval_ranked_first_are_read():
    sources = [_source(4, 10), _source(4, 11), _source(5, 12), _source(1, 13)]
    assert [p.document_id for p in select_papers("Summarise the paper", sources, CATALOGUE).papers] == [4]
    assert [p.document_id for p in select_papers("Compare the two papers", sources, CATALOGUE).papers] == [4, 5]


def test_more_papers_than_one_request_reads_are_named_in_a_note():
    question = ("Summarise Attention Is All You Need, BERT, Sentence-BERT, doc2query and GNN-RAG.")
    sel = select_papers(question, [], CATALOGUE)
    assert len(sel.papers) == MAX_PAPERS
    assert "3 of the 5 papers named were read" in sel.notes[0] and "GNN-RAG" in sel.notes[0]
    sel = select_papers("Summarise all papers", [_source(4, 1), _source(1, 2)], CATALOGUE)
    assert "of the 5 papers asked for" in sel.notes[0]


def test_more_papers_asked_than_read_ends_partial_with_the_note():
    # Three named papers, a limit of two: both read and compared, the third named in the note.
    sources = [Source(chunk_id=i + 1, document_id=doc, document_title=title, section="Abstract",
                      text=f"We present {name}, a system that {what}.")
               for i, (doc, title, name, what) in enumerate([
                   (1, "Alpha: A", "Alpha", "ranks passages with a dense encoder"),
                   (2, "Beta: B", "Beta", "ranks passages with a sparse index"),
                   (3, "Gamma: C", "Gamma", "ranks passages with a graph")])]

    class Client:
        config = None
        calls = 0

        def structured(self, messages, schema, **kw):
            from agent.types import Usage

            Client.calls += 1
            shown = numbered_sentences(messages[-1]["content"])
            return schema.model_validate({"answer": [{"text": shown[1], "sentences": [1]}]}), Usage(calls=1)

    whole = WholePapers(Client(), library=SourcesLibrary(), max_papers=2)
    question = "Compare the papers Alpha, Beta and Gamma."
    evidence = list(sources)
    audit = whole.audit(question, Plan(sub_queries=[question], clarify="whole_document"), evidence)
    assert audit.verdict == Verdict.PARTIALLY_SUFFICIENT
    draft = whole.generate(question, evidence, audit)
    assert draft is not None and draft.outcome == Outcome.PARTIAL
    assert '(not read: "Gamma: C")' in draft.missing_note
    assert Client.calls == 3
    # A map is handed only to the generator of the evidence it extended: asked again over fresh
    # evidence, the papers are read again, and other evidence gets no whole-paper draft.
    again = list(sources)
    whole.audit(question, Plan(sub_queries=[question], clarify="whole_document"), again)
    assert Client.calls == 5
    assert whole.generate(question, sources[:2], audit) is None
    assert whole.generate(question, again, audit) is not None


def test_the_verifier_does_not_ask_a_summary_sentence_to_be_about_a_narrower_question():
    from agent.types import Draft, DraftSentence, QuoteRef
    from agent.verify import CitationVerifier

    quote = "Building the pruned index takes 3 hours instead of 11 hours."
    source = Source(chunk_id=1, document_id=1, document_title=LUMEN[0], section="5 Results",
                    text=f"On MS MARCO, Lumen reaches an MRR@10 of 38.2. {quote}")
    draft = Draft(outcome=Outcome.ANSWER, sentences=[
        DraftSentence(text=quote, citations=[1], quote=quote, evidence=[QuoteRef(source=1, text=quote)])])

    summary = CitationVerifier().verify(draft, [source], question="Summarize the paper Lumen.")
    narrow = CitationVerifier().verify(draft, [source], question="What loss function is Lumen trained with?")

    # A whole-paper request names nothing narrower than the paper its sentences cite.
    assert summary.outcome == Outcome.ANSWER and summary.sentences[0].text == quote
    assert narrow.outcome == Outcome.REFUSAL and "off the question" in narrow.dropped[0]


def test_a_sentence_cut_at_the_replys_bound_is_dropped_not_shown_half():
    source = Source(chunk_id=1, document_id=1, document_title="Alpha: A", section="Abstract",
                    text="We present Alpha, a system that ranks passages with a dense encoder.")
    cut = ("Alpha ranks passages with a dense encoder that reads each passage once and stores one vector for "
           "it, so that a query is answered by one matrix product over the stored vectors, and the best "
           "passages of the collection are then returned in the order of their cosine similarity")[:240]
    assert len(cut) == 240 and cut.endswith("returned in the")

    class Client:
        config = None

        def structured(self, messages, schema, **kw):
            from agent.types import Usage

            return schema.model_validate({"answer": [{"text": cut, "sentences": [1]},
                                                     {"text": source.text, "sentences": [1]}]}), Usage(calls=1)

    whole = WholePapers(Client(), library=SourcesLibrary())
    question = "Summarise the paper Alpha."
    evidence = [source]
    audit = whole.audit(question, Plan(sub_queries=[question], clarify="whole_document"), evidence)
    draft = whole.generate(question, evidence, audit)
    assert draft is not None and [s.text for s in draft.sentences] == [source.text]
    assert any(n.startswith("cut off at the reply's 240-character bound") for n in draft.notes)


def test_a_run_limited_to_one_paper_summarises_no_other(openai_settings, fake_openai, collection, alice, papers):
    # A rephrasing asked of its own paper (Run.documents): the whole-paper path reads that paper only.
    fake_openai.responder = summarising_model()
    run = services.run_create(collection=collection, user=alice, question="Summarize the papers.",
                              config_name="agentic", enqueue=False, documents=[papers["lumen"].pk])
    run = services.run_execute(run_id=run.pk, retriever=ListRetriever(_chunks(collection)))

    assert run.status == Run.Status.DONE, run.error
    assert fake_openai.chat_requests
    assert all("Quill" not in request.text for request in fake_openai.chat_requests)
    assert {c.chunk.document_id for c in run.citations.all()} <= {papers["lumen"].pk}
