"""The premise's own retrieval (RunConfig.premise_sentences, agent.local.premise_check.
premise_statement, agent.loop.AgentLoop._premise_search), on passages and questions written for
these tests: the premise as stated (names and values kept) is searched sentence by sentence in
the paper it names; the chunk of the closest sentence is read by the premise check, which may
correct the premise from it by another value in the premise's place, and is never offered as
an answer."""

from __future__ import annotations

from agent.configs import RunConfig, build_roles
from agent.local.premise_check import premise_statement
from agent.loop import AgentLoop
from agent.types import Outcome, Verdict
from tests.agent.local.conftest import make_source

LARCH = "Larch: Rewriting Questions before Retrieval"
OTHER = "Quillwort: Dense Passage Indexes"

# The question's own search finds the rewriter's chunks (its topic), not the one naming the engine.
TOPIC = [
    make_source(31, "Larch rewrites each question into a search query with a small trainable rewriter. "
                    "The rewriter is trained with reinforcement learning from the reader's feedback.",
                title=LARCH, document_id=1),
    make_source(32, "Larch's reader is a frozen language model that answers from the fetched snippets; "
                    "only the rewriter is updated during training.", title=LARCH, document_id=1),
    make_source(33, "Quillwort encodes every passage once and stores the vectors in a flat index.",
                title=OTHER, document_id=2),
]
# Only a search close to the premise's own statement finds this one.
ENGINE = make_source(34, "For every rewritten query, Larch uses the Brave search engine as its retriever and "
                         "keeps the top snippets.", title=LARCH, document_id=1)
SETUP = make_source(35, "The rewriter is a T5-large model fine-tuned for 2 epochs.", title=LARCH, document_id=1)


class _Retriever:
    """The question's searches get TOPIC; the premise-search chunk search finds nothing (the
    engine's sentence ranks low within its paper); the sentence search within documents gets
    `closest`, and is recorded."""

    def __init__(self, closest=()):
        self.closest = list(closest)
        self.asked: list[tuple[str, int, list[int] | None]] = []

    def retrieve(self, query, *, k):
        return [s.model_copy(update={"query": query}) for s in TOPIC[:k]]

    def retrieve_within(self, query, *, k, document_ids):
        return []

    def retrieve_sentences_within(self, query, *, k, document_ids):
        self.asked.append((query, k, document_ids))
        return [s.model_copy(update={"query": query}) for s in self.closest
                if document_ids is None or s.document_id in document_ids][:k]


def _run(question, retriever, embed, *, sentences=3):
    cfg = RunConfig("t", plan=True, audit=True, top_k=3, premise_search=True, premise_sentences=sentences)
    return AgentLoop(cfg, build_roles(cfg, embed=embed), retriever, concurrent=False).run(question)


def test_the_statement_keeps_names_and_values_and_reads_the_named_paper():
    statement, documents = premise_statement("Larch uses the Yandex search engine with 4 snippets", TOPIC)
    assert statement == "Larch uses the Yandex search engine with 4 snippets" and documents == [1]
    # Cited authors are no part of what the paper says.
    statement, _ = premise_statement("Larch uses the Yandex engine, according to Okonjo et al.", TOPIC)
    assert "Okonjo" not in statement and "al" not in statement.split()


def test_a_premise_naming_no_retrieved_paper_searches_the_collection():
    assert premise_statement("the rewriter is trained for 9 epochs", TOPIC) == \
        ("the rewriter is trained for 9 epochs", None)


def test_another_engine_in_the_closest_sentence_corrects_the_premise(embed):
    question = "Why does Larch use the Yandex search engine as its retriever?"
    retriever = _Retriever(closest=[ENGINE, SETUP])
    result = _run(question, retriever, embed)
    assert retriever.asked and retriever.asked[0][1:] == (3, [1])
    assert result.audit.verdict == Verdict.FALSE_PREMISE
    assert result.answer.citations[0].chunk_id == 34 and "Brave" in result.answer.citations[0].quote
    # Without the premise's own retrieval no sentence read names the engine.
    plain = _run(question, _Retriever(closest=[ENGINE, SETUP]), embed, sentences=0)
    assert plain.answer.outcome != Outcome.FALSE_PREMISE


def test_the_same_sentence_does_not_correct_a_true_premise_nor_answer_it(embed):
    question = "Why does Larch use the Brave search engine as its retriever?"
    result = _run(question, _Retriever(closest=[ENGINE]), embed)
    assert result.answer.outcome != Outcome.FALSE_PREMISE
    found = {s.chunk_id: s for s in result.sources}
    assert found[34].premise_search and found[34].pool
    assert 34 not in {s.chunk_id for f in result.audit.facts for s in f.sentences}


def test_a_retriever_without_a_sentence_search_within_documents_runs_as_before(embed):
    class Plain(_Retriever):
        retrieve_sentences_within = None

    result = _run("Why does Larch use the Yandex search engine as its retriever?", Plain(), embed)
    assert {s.chunk_id for s in result.sources} == {31, 32, 33}


# The relevance gate of a value given in the premise's place (AuditorParams.premise_value_min):
# a formula glued to the sentence lowers its relevance, not the value it gives.
TESSEL = "Tessel: Sentence Vectors from Frozen Encoders"
MARGIN = [
    make_source(41, "Tessel is trained with a triplet objective over anchor, positive and negative sentences, "
                    "with a margin between the two distances.", title=TESSEL),
    make_source(42, "L(a, p, n) = max(0, \u2016va \u2212 vp\u2016 \u2212 \u2016va \u2212 vn\u2016 + m) (4) Here m is set to "
                    "0.5 by default in all of our runs.", title=TESSEL),
]


def _audit(question, embed, **params):
    from dataclasses import replace

    from agent.local.auditor import AuditorParams, LocalAuditor
    from agent.local.planner import RulePlanner

    auditor = LocalAuditor(embed=embed, params=replace(AuditorParams(), **params))
    return auditor.audit(question, RulePlanner().plan(question), MARGIN, can_retry=False)


def test_another_number_behind_a_formula_corrects_under_the_value_gate(embed):
    question = "Why is the margin m of Tessel's triplet loss set to 0.3 by default?"
    audit = _audit(question, embed, premise_value_min=0.35)
    assert audit.verdict == Verdict.FALSE_PREMISE and "0.5" in audit.premise.quote
    # The sentence is under the gate of a negation or the classifier: only a lower value gate
    # lets it correct, and the shipped one is that gate (AuditorParams.premise_value_min).
    assert _audit(question, embed).verdict != Verdict.FALSE_PREMISE


def test_the_same_number_behind_a_formula_corrects_nothing(embed):
    audit = _audit("Why is the margin m of Tessel's triplet loss set to 0.5 by default?", embed)
    assert audit.verdict != Verdict.FALSE_PREMISE
