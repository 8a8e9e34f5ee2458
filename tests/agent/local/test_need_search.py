"""The search for a need inside the paper it is about (agent.local.need_search,
agent.loop.AgentLoop._need_search, RunConfig.need_search), on passages and questions written
for these tests: which paper a need is about, and that the chunks the search finds are
offered as answers (pool chunks) and read by no premise check."""

from __future__ import annotations

from agent.configs import RunConfig, build_roles
from agent.local.need_search import need_documents, need_searches
from agent.loop import AgentLoop
from agent.types import Outcome
from tests.agent.local.conftest import make_source

LUMEN = "Lumen: Caching Web Pages for Retrieval Agents"
KESTREL = "Kestrel: A Survey of Retrieval Agents"

# What the question's own search finds: Lumen's chunks on its cache, a survey citing Lumen once.
TOPIC = [
    make_source(21, "Lumen keeps a cache of the web pages a retrieval agent has read, keyed by their address.",
                title=LUMEN, document_id=1),
    make_source(22, "The Lumen cache is checked before every fetch, so a page read twice is fetched once.",
                title=LUMEN, document_id=1),
    make_source(23, "Several agents cache pages, among them Lumen, and most of them evict by age.",
                title=KESTREL, document_id=2),
]
# The sentence that answers, in other words than the question's: only a search inside Lumen's
# paper for the need reaches it.
ANSWER = make_source(24, "Entries older than six hours are dropped, and at most 4,000 of them are held in memory.",
                     title=LUMEN, document_id=1)


def test_a_need_naming_a_paper_is_about_the_paper_that_names_it_most_often():
    # Both papers name Lumen; Lumen's own names it in two chunks, the survey in one.
    assert need_documents("How many pages does the Lumen cache hold?", TOPIC) == [1]


def test_a_need_naming_nothing_is_about_the_paper_holding_most_of_the_top_chunks():
    assert need_documents("How many pages does the cache hold?", TOPIC) == [1]
    # Spread over papers with none holding half: no paper.
    spread = [TOPIC[0], TOPIC[2], make_source(25, "A cache of pages.", title="Third", document_id=3),
              make_source(26, "Pages cached by address.", title="Fourth", document_id=4)]
    assert need_documents("How many pages does the cache hold?", spread) == []


def test_a_need_whose_names_no_retrieved_paper_holds_searches_nothing():
    assert need_documents("How many pages does the Osprey crawler keep?", TOPIC) == []


def test_pool_and_premise_search_chunks_choose_no_paper():
    # Only a query's top chunks say what the question is about.
    deep = [s.model_copy(update={"pool": True}) for s in TOPIC]
    assert need_documents("How many pages does the cache hold?", deep) == []


def test_needs_with_the_same_query_and_paper_are_searched_once():
    need = "How many pages does the Lumen cache hold?"
    assert need_searches([need, need, "How old may a Lumen page get?"], TOPIC) == [
        (need, [1]), ("How old may a Lumen page get?", [1])]


class _Retriever:
    """The question's searches get TOPIC; a sentence search within documents gets `within`
    (recorded)."""

    def __init__(self, within=()):
        self.within = list(within)
        self.asked: list[tuple[str, list[int] | None]] = []

    def retrieve(self, query, *, k):
        return [s.model_copy(update={"query": query}) for s in TOPIC[:k]]

    def retrieve_sentences_within(self, query, *, k, document_ids):
        self.asked.append((query, document_ids))
        return [s.model_copy(update={"query": query}) for s in self.within
                if document_ids is None or s.document_id in document_ids][:k]


def _run(question, retriever, embed, *, search=2):
    cfg = RunConfig("t", plan=True, audit=True, top_k=3, need_search=search)
    return AgentLoop(cfg, build_roles(cfg, embed=embed), retriever, concurrent=False).run(question)


def test_the_need_search_reads_the_named_paper_and_its_chunk_may_answer(embed):
    question = "How many entries does the Lumen cache hold in memory?"
    retriever = _Retriever(within=[ANSWER])
    result = _run(question, retriever, embed)
    assert retriever.asked and all(documents == [1] for _, documents in retriever.asked)
    found = {s.chunk_id: s for s in result.sources}
    # A pool chunk: the answer's choice reads it, the premise check does not.
    assert found[24].pool and not found[24].premise_search
    assert result.answer.outcome == Outcome.ANSWER
    assert any(c.chunk_id == 24 and "4,000" in c.quote for c in result.answer.citations)
    # Without the search the run never read it.
    plain = _run(question, _Retriever(within=[ANSWER]), embed, search=0)
    assert 24 not in {s.chunk_id for s in plain.sources}
    assert not any("4,000" in c.quote for c in plain.answer.citations)


def test_a_retriever_without_a_sentence_search_within_documents_is_searched_as_before(embed):
    class Plain:
        def retrieve(self, query, *, k):
            return [s.model_copy(update={"query": query}) for s in TOPIC[:k]]

    result = _run("How many entries does the Lumen cache hold in memory?", Plain(), embed)
    assert {s.chunk_id for s in result.sources} == {21, 22, 23}
