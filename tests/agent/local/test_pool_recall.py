"""The candidate pool's two wider reads (agent.loop, RunConfig.heads / RunConfig.neighbours):
each retriever's own best chunks, and the chunks next to each query's best one, join the
auditor's choice of sentence as pool chunks; the premise check and an auditor that reads no
pool never see them."""

from __future__ import annotations

from agent.configs import RunConfig, build_roles
from agent.loop import AgentLoop, names_of
from agent.types import Outcome
from tests.agent.local.conftest import make_source
from tests.agent.local.test_selection import CHUNKS, _NoPool

QUESTION = "How many attention heads are in each Brindle layer?"


class _WideRetriever:
    """The fused top k are CHUNKS[:k] (chunk 3, the answer, is not among the top 2); the
    retriever's own lists and the neighbours of a chunk are given; what was asked is recorded."""

    def __init__(self, heads=(), near=()):
        self.asked = []
        self.heads, self.near = list(heads), list(near)

    def retrieve(self, query, *, k):
        return [s.model_copy(update={"query": query}) for s in CHUNKS[:k]]

    def retrieve_heads(self, query, *, k):
        self.asked.append(("heads", query, k))
        return self.heads[:k]

    def neighbours(self, sources):
        self.asked.append(("neighbours", [s.chunk_id for s in sources]))
        return [s.model_copy(update={"query": sources[0].query}) for s in self.near]


def _run(cfg, retriever, embed, roles=None):
    return AgentLoop(cfg, roles or build_roles(cfg, embed=embed), retriever, concurrent=False).run(QUESTION)


def test_each_retrievers_own_best_chunk_joins_the_pool(embed):
    cfg = RunConfig("t", plan=True, audit=True, top_k=2, heads=1)
    retriever = _WideRetriever(heads=[CHUNKS[2], CHUNKS[0]])
    result = _run(cfg, retriever, embed)
    assert ("heads", QUESTION, 1) in retriever.asked
    assert [(s.chunk_id, s.pool) for s in result.sources] == [(1, False), (2, False), (3, True)]
    assert result.answer.outcome == Outcome.ANSWER and "12 attention heads" in result.answer.sentences[0].text
    # Only from a paper the top k found: another paper's chunk stays out.
    other = CHUNKS[2].model_copy(update={"chunk_id": 9, "document_id": 2})
    result = _run(cfg, _WideRetriever(heads=[other]), embed)
    assert 9 not in {s.chunk_id for s in result.sources}
    # Without it the top 2 chunks do not hold the number.
    plain = RunConfig("t", plan=True, audit=True, top_k=2)
    retriever = _WideRetriever(heads=[CHUNKS[2]])
    result = _run(plain, retriever, embed)
    assert not retriever.asked and "12 attention heads" not in result.answer.text


def test_the_chunk_next_to_a_querys_best_joins_the_pool(embed):
    cfg = RunConfig("t", plan=True, audit=True, top_k=2, neighbours=1)
    retriever = _WideRetriever(near=[CHUNKS[2]])
    result = _run(cfg, retriever, embed)
    # Only the query's best chunk is asked about (the question is its one query).
    assert result.queries == [QUESTION] and retriever.asked == [("neighbours", [1])]
    assert (3, True) in [(s.chunk_id, s.pool) for s in result.sources]
    assert result.answer.outcome == Outcome.ANSWER and "12 attention heads" in result.answer.sentences[0].text


def test_an_auditor_that_reads_no_pool_gets_neither(embed):
    cfg = RunConfig("t", plan=True, audit=True, top_k=2, heads=3, neighbours=1)
    roles = build_roles(cfg, embed=embed)
    roles.auditor = _NoPool(roles.auditor)
    retriever = _WideRetriever(heads=[CHUNKS[2]], near=[CHUNKS[3]])
    result = _run(cfg, retriever, embed, roles)
    assert not retriever.asked
    assert {s.chunk_id for s in result.sources} == {1, 2}


# A paper the fused top k is made of: on the topic, never naming Brindle.
LATTICE = "Lattice: Attention over Tables"
LATTICE_CHUNKS = [
    make_source(11, "Attention heads in Lattice attend to the rows and the columns of a table jointly. "
                    "Each layer reads the whole table at once.", title=LATTICE, document_id=2),
    make_source(12, "Lattice layers share their attention heads across tables of one schema, "
                    "which keeps the encoder small.", title=LATTICE, document_id=2),
]
# The dense search's own best chunk, from a third paper that does not name Brindle either.
SPARROW_HEAD = make_source(21, "Sparrow prunes the attention heads of each layer that attend only to "
                               "punctuation, keeping 9 of them.", title="Sparrow: Pruned Heads", document_id=3)


class _OutsideRetriever(_WideRetriever):
    """RRF's top k are Lattice's chunks; BM25's own best chunk is Brindle's answering chunk
    (from a paper outside the fused top k), the dense search's a Sparrow chunk."""

    def retrieve(self, query, *, k):
        return [s.model_copy(update={"query": query}) for s in LATTICE_CHUNKS[:k]]

    def retrieve_heads(self, query, *, k):
        self.asked.append(("heads", query, k))
        # BM25's first, then the dense search's (CollectionRetriever.retrieve_heads).
        return [CHUNKS[2], SPARROW_HEAD]


def test_a_retrievers_best_chunk_naming_the_querys_names_joins_from_any_paper(embed):
    cfg = RunConfig("t", plan=True, audit=True, top_k=2, heads=1, head_names=1.0)
    result = _run(cfg, _OutsideRetriever(), embed)
    assert [(s.chunk_id, s.pool) for s in result.sources] == [(11, False), (12, False), (3, True)]
    assert result.answer.outcome == Outcome.ANSWER and "12 attention heads" in result.answer.sentences[0].text
    # Without the rule (the papers of the top k only), the answering chunk is never read.
    only_top = RunConfig("t", plan=True, audit=True, top_k=2, heads=1)
    result = _run(only_top, _OutsideRetriever(), embed)
    assert {s.chunk_id for s in result.sources} == {11, 12}
    assert "12 attention heads" not in result.answer.text and "9 of them" not in result.answer.text


def test_a_chunk_names_the_querys_names_with_its_title_and_not_without_any():
    query = "How many attention heads are in each Brindle layer?"
    assert names_of(query, CHUNKS[2], 1.0)
    # The paper's title names it when the chunk says "we".
    assert names_of(query, CHUNKS[2].model_copy(update={"text": "We use 12 attention heads."}), 1.0)
    assert not names_of(query, SPARROW_HEAD, 1.0) and not names_of(query, CHUNKS[2], 0.0)
    # A query that names nothing admits nothing from another paper.
    assert not names_of("How many attention heads are in each layer?", CHUNKS[2], 1.0)
    # Cited authors are no names a paper repeats ("Gao et al."): only "Brindle" counts.
    assert names_of("In Gao et al., how many heads has Brindle?", CHUNKS[2], 1.0)
