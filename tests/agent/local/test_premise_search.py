"""The search for what a premise presupposes (agent.local.premise_check.premise_search,
agent.loop.AgentLoop._premise_search, RunConfig.premise_search), on passages and questions
written for these tests: the sentence that states the real value is searched without the
premise's value, in the paper the premise names, and a correction cites it; the chunks that
search finds are read by the premise check only, never offered as answers."""

from __future__ import annotations

import pytest

from agent.configs import RunConfig, build_roles
from agent.local.premise_check import premise_search
from agent.loop import AgentLoop
from agent.types import Outcome, Verdict
from tests.agent.local.conftest import make_source

TESSEL = "Tessel: Sentence Vectors from Frozen Encoders"
OTHER = "Quarry: Passage Retrieval with Sparse Codes"

# The question's own search finds these: the topic (pooling, Tessel), not the default.
TOPIC = [
    make_source(11, "Tessel turns a frozen encoder into a sentence encoder by pooling its token vectors. "
                    "We compare three pooling strategies in our experiments: MEAN, MAX and the first token.",
                title=TESSEL, document_id=1),
    make_source(12, "Pooling is cheap: Tessel adds no parameters to the encoder, and the pooled vector is "
                    "normalised before the cosine is taken.", title=TESSEL, document_id=1),
    make_source(13, "Quarry builds sparse codes for passages and ranks them by overlap with the query codes. "
                    "The Quarry codes are pooled with MAX over the passage tokens.", title=OTHER, document_id=2),
]
# Only a search for the default itself finds this one.
DEFAULT = make_source(14, "Unless stated otherwise, Tessel uses MEAN pooling, which was the most reliable setting "
                          "across the evaluation tasks.", title=TESSEL, document_id=1)
SETUP = make_source(15, "Tessel is trained for 3 epochs on 8 A100 GPUs with a batch size of 64.",
                    title=TESSEL, document_id=1)


class _Retriever:
    """The question's searches get TOPIC; a search within documents gets `within` and is recorded."""

    def __init__(self, within=()):
        self.within = list(within)
        self.asked: list[tuple[str, list[int] | None]] = []

    def retrieve(self, query, *, k):
        return [s.model_copy(update={"query": query}) for s in TOPIC[:k]]

    def retrieve_within(self, query, *, k, document_ids):
        self.asked.append((query, document_ids))
        return [s.model_copy(update={"query": query}) for s in self.within
                if document_ids is None or s.document_id in document_ids][:k]


def _run(question, retriever, embed, *, search=True):
    cfg = RunConfig("t", plan=True, audit=True, top_k=3, premise_search=search)
    return AgentLoop(cfg, build_roles(cfg, embed=embed), retriever, concurrent=False).run(question)


def test_the_query_leaves_out_the_value_and_the_names_and_reads_the_named_paper():
    query, documents = premise_search("MAX pooling is Tessel's default", TOPIC)
    # MAX (the value the premise may get wrong) and Tessel (the paper, searched anyway) are out.
    assert query == "pooling is default" and documents == [1]


def test_numbers_and_spelled_counts_are_left_out():
    query, documents = premise_search("Tessel trains on sixteen GPUs for 5 epochs", TOPIC)
    assert "16" not in query and "5" not in query and "sixteen" not in query
    assert "trains" in query and documents == [1]


def test_a_premise_naming_no_retrieved_paper_searches_the_collection_without_its_numbers():
    query, documents = premise_search("the encoder was trained for 12 epochs", TOPIC)
    assert (query, documents) == ("the encoder was trained for epochs", None)
    # Nothing to leave out and no paper named: the question's own searches already ran it.
    assert premise_search("the encoder was trained with care", TOPIC) == ("", None)


def test_the_premise_search_finds_the_sentence_that_corrects_the_premise(embed):
    question = "Why is MAX pooling Tessel's default?"
    retriever = _Retriever(within=[DEFAULT, SETUP])
    result = _run(question, retriever, embed)
    assert retriever.asked == [("pooling default", [1])]
    assert result.audit.verdict == Verdict.FALSE_PREMISE
    assert result.answer.outcome == Outcome.FALSE_PREMISE
    assert result.answer.citations[0].chunk_id == 14 and "MEAN pooling" in result.answer.citations[0].quote
    # Without it the question's own search never read that sentence.
    plain = _run(question, _Retriever(within=[DEFAULT, SETUP]), embed, search=False)
    assert plain.answer.outcome != Outcome.FALSE_PREMISE


def test_the_chunks_it_finds_are_never_offered_as_answers(embed):
    # A true premise: the chunk the premise search finds confirms it, but the answer is
    # chosen from the question's own chunks as if that search had not run.
    question = "Why is MEAN pooling Tessel's default?"
    result = _run(question, _Retriever(within=[DEFAULT]), embed)
    found = {s.chunk_id: s for s in result.sources}
    assert found[14].premise_search and found[14].pool
    assert result.answer.outcome != Outcome.FALSE_PREMISE
    chosen = {s.chunk_id for f in result.audit.facts for s in f.sentences}
    assert 14 not in chosen
    plain = _run(question, _Retriever(within=[DEFAULT]), embed, search=False)
    assert [f.sentences for f in plain.audit.facts] == [f.sentences for f in result.audit.facts]


def test_a_retriever_without_a_search_within_documents_is_searched_as_before(embed):
    class Plain:
        def retrieve(self, query, *, k):
            return [s.model_copy(update={"query": query}) for s in TOPIC[:k]]

    result = _run("Why is MAX pooling Tessel's default?", Plain(), embed)
    assert {s.chunk_id for s in result.sources} == {11, 12, 13}


@pytest.mark.xfail(strict=True, reason=(
    "a paper the question calls by a name it never uses itself (a nickname, 'Tess' for Tessel) is searched "
    "(the unknown name is left out like a wrong value, and the papers holding MAX are read), but the premise "
    "check takes a sentence to be about the premise only in a document holding the premise's names, so the "
    "sentence giving the default is read as about another subject"))
def test_a_paper_called_by_a_name_it_never_uses_is_not_corrected(embed):
    retriever = _Retriever(within=[DEFAULT])
    result = _run("Why is MAX pooling Tess's default?", retriever, embed)
    assert retriever.asked == [("pooling default", [1, 2])]
    assert result.answer.outcome == Outcome.FALSE_PREMISE


def test_a_name_no_retrieved_passage_holds_is_left_out_like_a_wrong_value():
    # "Bing" is in none of the retrieved passages: it names no paper, and may be what the
    # premise gets wrong; Quarry names the paper searched.
    query, documents = premise_search("Quarry ranks the passage codes with the Bing API", TOPIC)
    assert "Bing" not in query and "Quarry" not in query and documents == [2]


DENIAL = make_source(16, "Tessel does not compare the pooling strategies on the retrieval tasks, only on "
                         "sentence similarity.", title=TESSEL, document_id=1)


def test_a_denial_only_the_premise_search_found_corrects_nothing(embed):
    # The premise search looks for the premise's relation with another value in its place; a
    # negation it happens to find ("does not compare ... on the retrieval tasks") denies a
    # narrower claim, and is no correction.
    question = "Why does Tessel compare the pooling strategies?"
    result = _run(question, _Retriever(within=[DENIAL]), embed)
    assert result.audit.verdict != Verdict.FALSE_PREMISE
    # Among the question's own chunks the negation cue still reads it as a denial (its
    # scope, "on the retrieval tasks", is not weighed): the search adds no such reading.
    own = [*TOPIC[:2], DENIAL]

    class Own(_Retriever):
        def retrieve(self, query, *, k):
            return [s.model_copy(update={"query": query}) for s in own[:k]]

    before = _run(question, Own(), embed, search=False)
    assert before.audit.verdict == Verdict.FALSE_PREMISE and before.audit.premise.chunk_id == 16


# A survey citing the Tessel authors: their names are in its text, not in Tessel's own chunks.
CITING = make_source(17, "Okafor et al. pooled frozen encoder vectors before Tessel; we follow Okafor and Lin (2021).",
                     title=OTHER, document_id=2)


def test_cited_authors_and_et_al_stay_out_of_the_query_and_do_not_choose_the_paper():
    from agent.local.planner import RulePlanner

    premise = RulePlanner().plan("What effect did MEAN pooling have on Tessel, according to Okafor et al.?").premises[0]
    query, documents = premise_search(premise, [*TOPIC[:2], CITING])
    assert not {"okafor", "et", "al", "al.", "according", "to"} & set(query.lower().split())
    # Tessel's own paper is searched, not the survey that cites its authors.
    assert documents == [1]


def test_the_query_reads_as_the_premises_words_without_the_left_out_names_prepositions():
    # "on the Tessel" goes whole: "has an effect on the" reads as no phrase.
    query, documents = premise_search("the pooling strategy has an effect on the Tessel, according to "
                                      "Okafor et al.", TOPIC)
    assert query == "the pooling strategy has an effect" and documents == [1]


def test_citations_leave_a_text_with_its_words_in_order():
    from agent.local.candidates import without_citations

    assert without_citations("Why did Okafor et al. pool the vectors?") == "Why did pool the vectors?"
    assert without_citations("Which corpus did Okafor et al.'s tagger use, according to Okafor and Lin, 2021?") \
        == "Which corpus did tagger use?"
    # Model names joined by "and" are no citation.
    assert without_citations("Do Tessel and Quarry pool?") == "Do Tessel and Quarry pool?"


@pytest.mark.parametrize(
    "text, kept",
    [
        # A source that is no author list goes with its "according to", leaving no lone "according".
        ("Which encoder does Tessel pool, according to the paper?", "Which encoder does Tessel pool?"),
        ("Tessel pools with MAX by default, according to Table 4", "Tessel pools with MAX by default"),
        ("According to Fig. 2, Quarry codes are sparse.", "Quarry codes are sparse."),
        ("Which encoder does Quarry pool according to the original authors?", "Which encoder does Quarry pool?"),
        # The paper's own name stays, once: it says which paper is meant.
        ("Which encoder is pooled, according to the Tessel authors?", "Which encoder is pooled in Tessel?"),
        ("Which encoder does Tessel pool, according to the Tessel paper?", "Which encoder does Tessel pool?"),
        # A source that is a measure or a judge is content: kept.
        ("Which pooling wins according to human raters?", "Which pooling wins according to human raters?"),
    ],
)
def test_an_according_to_the_paper_or_a_table_leaves_the_text(text, kept):
    from agent.local.candidates import without_citations

    assert without_citations(text) == kept


def test_the_query_keeps_no_according_whose_object_went():
    query, documents = premise_search("the pooling strategy has some effect on the Tessel, according to Table 2",
                                      TOPIC)
    assert query == "the pooling strategy has some effect" and documents == [1]
    # A name no passage holds is left out as a value; its "according to" goes with it.
    query, _ = premise_search("MEAN pooling is best for Tessel according to Zenbench", TOPIC)
    assert "according" not in query
