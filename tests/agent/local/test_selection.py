"""Answer-sentence selection (agent.local.selection through LocalAuditor): the sentence that
holds what the question asks for wins over sentences that are merely on topic, wherever its
chunk ranked. Passages and questions are written for these tests (fictional papers), with
the real offline embedder and the fitted AuditorParams defaults."""

from __future__ import annotations

import numpy as np
import pytest

from agent.local.auditor import LocalAuditor
from agent.local.planner import RulePlanner
from agent.local.selection import FEATURES, fit_logistic, lead_in, probability
from agent.types import Outcome
from tests.agent.local.conftest import make_source

BRINDLE = "Brindle: Shallow Encoders for Legal Search"
CHUNKS = [
    make_source(1, "Brindle relies on multi-head attention in every encoder layer, which lets the model attend "
                   "to clauses and their cross-references jointly. Attention heads are what make Brindle fast.",
                title=BRINDLE),
    make_source(2, "Masking is central to the pretraining objective of Brindle, as it is for most encoders. "
                   "We pretrain on statutes and court opinions for two weeks.", title=BRINDLE),
    make_source(3, "Brindle uses 6 encoder layers in its full-size model. Each layer has 12 attention heads of dimension 32. "
                   "During pretraining Brindle masks 20% of the input tokens at random.", title=BRINDLE),
    make_source(4, "The Brindle benchmark extends the LexGLUE collection with 4,000 new queries written by "
                   "lawyers. We release the benchmark under an open licence.", title=BRINDLE),
]


@pytest.fixture
def ask(pipeline):
    return lambda question, sources=CHUNKS: pipeline(question, sources)


@pytest.mark.parametrize(("question", "expected"), [
    ("How many attention heads are in each Brindle layer?", "12 attention heads"),
    ("What share of input tokens does Brindle mask when pretraining?", "20%"),
    ("What is the dimension of each Brindle attention head?", "dimension 32"),
    ("Which collection does the Brindle benchmark build on?", "LexGLUE"),
    # The asking clause after a lead-in decides the answer type (a number here).
    ("In the Brindle paper, what fraction of the input tokens is masked during pretraining?", "20%"),
    ("For the full-size Brindle model, how many encoder layers are there?", "6 encoder layers"),
])
def test_the_sentence_that_holds_the_asked_value_is_quoted_first(ask, question, expected):
    # The on-topic sentences of chunks 1 and 2 rank above chunk 3 and share more words with
    # the question; the value asked for is only in chunks 3 and 4.
    _, answer = ask(question)
    assert answer.outcome in (Outcome.ANSWER, Outcome.PARTIAL)
    assert expected in answer.sentences[0].text


def test_an_answer_is_one_to_three_sentences_without_repeats(ask):
    _, answer = ask("How many encoder layers and attention heads does Brindle use?")
    assert 1 <= len(answer.sentences) <= 3
    texts = [s.text for s in answer.sentences]
    assert len(set(texts)) == len(texts)
    assert any("6 encoder layers" in t for t in texts) and any("12 attention heads" in t for t in texts)


def test_a_question_about_something_absent_is_refused(ask):
    _, answer = ask("How many GPUs were used to pretrain Brindle?")
    assert answer.outcome == Outcome.REFUSAL


def test_the_model_is_a_role_parameter_that_changes_the_choice(embed):
    question = "How many attention heads are in each Brindle layer?"
    plan = RulePlanner().plan(question)
    fitted = LocalAuditor(embed=embed).rank_sentences(question, plan, CHUNKS)[0]
    assert "12 attention heads" in fitted[0][0]
    # With answer fit and focus weighted against, the on-topic sentence wins: the choice is the model's.
    from dataclasses import replace

    auditor = LocalAuditor(embed=embed)
    weights = list(auditor.params.selection_weights)
    weights[FEATURES.index("answer_fit")] = -5.0
    weights[FEATURES.index("focus")] = -5.0
    flipped = LocalAuditor(embed=embed, params=replace(auditor.params, selection_weights=tuple(weights),
                                                      answer_partial_min=0.0))
    assert "12 attention heads" not in flipped.rank_sentences(question, plan, CHUNKS)[0][0][0]


def test_fit_logistic_separates_and_orders():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 2))
    y = (x[:, 0] - 0.5 * x[:, 1] > 0).astype(float)
    weights, bias = fit_logistic(x, y, l2=0.1)
    assert weights[0] > 0 > weights[1]
    assert probability(np.array([2.0, -1.0]), weights, bias) > 0.9 > 0.1 > probability(np.array([-2.0, 1.0]),
                                                                                          weights, bias)


@pytest.mark.xfail(reason="answer fit looks for a number in the sentence itself: a value given only in a table "
                          "cell the splitter drops (not prose) cannot be quoted", strict=True)
def test_a_value_only_in_a_table_is_found(ask):
    sources = [make_source(9, "Layers Heads Dim 6 12 32", title=BRINDLE),
               make_source(10, "Brindle is described in Table 2, which lists its size.", title=BRINDLE)]
    _, answer = ask("How many attention heads does Brindle have?", sources)
    assert "12" in answer.text


class _DepthRetriever:
    """Returns CHUNKS[:k] (its sentence search: SENTENCE_HITS[:k]) and records what was asked."""

    def __init__(self, sentence_hits=()):
        self.asked = []
        self.sentence_hits = list(sentence_hits)

    def retrieve(self, query, *, k):
        self.asked.append((query, k))
        return CHUNKS[:k]

    def retrieve_sentences(self, query, *, k):
        self.asked.append(("sentences", query, k))
        return self.sentence_hits[:k]


class _NoPool:
    """An auditor like the wrapped one that does not say it reads a pool."""

    def __init__(self, inner):
        self.inner = inner

    def audit(self, *args, **kwargs):
        return self.inner.audit(*args, **kwargs)


def test_a_pool_widens_every_search_below_its_top_k(embed):
    from agent.configs import RunConfig, build_roles
    from agent.loop import AgentLoop

    question = "How many attention heads are in each Brindle layer?"
    narrow, wide = (RunConfig("t", plan=True, audit=True, top_k=2, pool=pool) for pool in (0, 4))
    plain = _DepthRetriever()
    result = AgentLoop(narrow, build_roles(narrow, embed=embed), plain, concurrent=False).run(question)
    assert plain.asked[0] == (question, 2) and not any(s.pool for s in result.sources)
    deep = _DepthRetriever()
    result = AgentLoop(wide, build_roles(wide, embed=embed), deep, concurrent=False).run(question)
    first_pass = [k for q, k in deep.asked[: len(result.plan.sub_queries)]]
    assert first_pass == [4] * len(result.plan.sub_queries)
    # The top 2 are evidence like any other; chunks 3 and 4 only widen the choice of sentence.
    assert [(s.chunk_id, s.pool) for s in result.sources[:4]] == [(1, False), (2, False), (3, True), (4, True)]
    assert result.answer.outcome == Outcome.ANSWER and "12 attention heads" in result.answer.sentences[0].text


def test_the_sentence_search_adds_the_chunk_whose_one_sentence_answers(embed):
    from agent.configs import RunConfig, build_roles
    from agent.loop import AgentLoop

    question = "How many attention heads are in each Brindle layer?"
    cfg = RunConfig("t", plan=True, audit=True, top_k=2, sentence_pool=1)
    retriever = _DepthRetriever(sentence_hits=[CHUNKS[2]])
    result = AgentLoop(cfg, build_roles(cfg, embed=embed), retriever, concurrent=False).run(question)
    assert ("sentences", question, 1) in retriever.asked
    assert (3, True) in [(s.chunk_id, s.pool) for s in result.sources]
    assert result.answer.outcome == Outcome.ANSWER and "12 attention heads" in result.answer.sentences[0].text
    # An auditor that does not read a pool (an LLM's) gets no sentence search.
    roles = build_roles(cfg, embed=embed)
    roles.auditor = _NoPool(roles.auditor)
    retriever = _DepthRetriever(sentence_hits=[CHUNKS[2]])
    AgentLoop(cfg, roles, retriever, concurrent=False).run(question)
    assert not any(asked[0] == "sentences" for asked in retriever.asked)
    # Without it, the top 2 chunks do not hold the number.
    plain = RunConfig("t", plan=True, audit=True, top_k=2)
    result = AgentLoop(plain, build_roles(plain, embed=embed), _DepthRetriever(), concurrent=False).run(question)
    assert all(s.chunk_id in (1, 2) for s in result.sources)
    assert "12 attention heads" not in result.answer.text


def test_the_premise_check_does_not_read_the_deeper_pool(embed):
    planner, auditor = RulePlanner(), LocalAuditor(embed=embed)
    question = "Why does Brindle use 16 attention heads in each layer?"
    plan = planner.plan(question)
    read = auditor.audit(question, plan, CHUNKS, can_retry=False)
    assert read.premise.contradicted and read.premise.chunk_id == 3
    pooled = [s.model_copy(update={"pool": s.chunk_id == 3}) for s in CHUNKS]
    unread = auditor.audit(question, plan, pooled, can_retry=False)
    assert not unread.premise.contradicted


def test_a_value_in_a_very_short_sentence_is_found(ask):
    sources = [make_source(21, "The learning rate increases linearly for the first warmup_steps training steps and "
                               "decays afterwards. We used warmup_steps = 2500.", title=BRINDLE)]
    _, answer = ask("How many warmup steps does Brindle use?", sources)
    assert answer.outcome == Outcome.ANSWER and "2500" in answer.sentences[0].text


def test_a_sentence_that_points_elsewhere_is_not_chosen(embed):
    from dataclasses import replace

    question = "How does Brindle attend to cross-references between clauses?"
    sources = [
        make_source(31, "In Section 4, we describe how Brindle attends to cross-references between clauses.",
                    title=BRINDLE),
        make_source(32, "Brindle attends to cross-references by pairing each clause with the clauses it cites.",
                    title=BRINDLE),
    ]
    plan = RulePlanner().plan(question)
    default = LocalAuditor(embed=embed)
    lenient = LocalAuditor(embed=embed, params=replace(default.params, pointers_answer=True))
    quotes = [q for q, *_ in lenient.rank_sentences(question, plan, sources)[0]]
    assert any("Section 4" in q for q in quotes)
    quotes = [q for q, *_ in default.rank_sentences(question, plan, sources)[0]]
    assert quotes and not any("Section 4" in q for q in quotes)


class _PoolRetriever:
    """The question finds a distractor first and the evidence second; keyword queries (a
    retry's) find the evidence first."""

    distractor = make_source(41, "Domestic cats sleep for most of the day and hunt small rodents at night.",
                             title="Cats")
    evidence = make_source(42, "We apply a softmax only on the logits of the true and false tokens. Hence, we rerank "
                               "the documents according to the probabilities assigned to the true token.",
                           title="MonoT5")

    def retrieve(self, query, *, k):
        return ([self.distractor, self.evidence] if query.endswith("?") else [self.evidence, self.distractor])[:k]


def test_a_pooled_chunk_a_retry_ranks_in_its_top_k_becomes_evidence(embed):
    from agent.configs import RunConfig, build_roles
    from agent.loop import AgentLoop

    cfg = RunConfig("t", plan=True, audit=True, max_retries=2, top_k=1, pool=2)
    result = AgentLoop(cfg, build_roles(cfg, embed=embed), _PoolRetriever(), concurrent=False).run(
        "How does the MonoT5 reranker rerank documents using the probabilities of the true token?")
    assert result.retries >= 1
    assert [(s.chunk_id, s.pool) for s in result.sources] == [(41, False), (42, False)]
    assert result.answer.outcome == Outcome.ANSWER and result.answer.citations[0].chunk_id == 42


@pytest.mark.parametrize(("sentence", "expected"), [
    ("In this paper, we study how lawyers phrase statutory queries.", True),
    ("The rest of the paper is organised as follows.", True),
    ("We now describe the pretraining corpus of Brindle.", True),
    ("Brindle masks 20% of the input tokens at random.", False),
    ("In this setting the encoder attends to clauses jointly.", False),
])
def test_lead_in_tells_framing_from_stating(sentence, expected):
    assert lead_in(sentence) is expected


def test_every_feature_has_a_weight_and_pool_chunks_are_marked(embed):
    question = "How many attention heads are in each Brindle layer?"
    plan = RulePlanner().plan(question)
    assert len(LocalAuditor().params.selection_weights) == len(FEATURES)
    sources = [s.model_copy(update={"pool": s.chunk_id == 3}) for s in CHUNKS]
    ranked = LocalAuditor(embed=embed).rank_sentences(question, plan, sources)[0]
    column = FEATURES.index("pooled")
    assert {chunk_id for _, chunk_id, _, _ in ranked} >= {3}
    assert all(x[column] == float(chunk_id == 3) for _, chunk_id, _, x in ranked)


def test_a_lead_in_clause_does_not_hide_what_is_asked(ask):
    # "what fraction ..." after "In the Brindle corpus," still asks for a number: the sentence
    # that restates the topic in the question's own words holds none.
    sources = [
        make_source(21, "Cross-referenced clauses are a central difficulty of the Brindle corpus, because a "
                        "cross-referenced clause is read together with the clause it cites.", title=BRINDLE),
        make_source(22, "Roughly 41% of the clauses in the corpus cite at least one other clause.",
                    title=BRINDLE),
    ]
    _, answer = ask("In the Brindle corpus, what fraction of clauses are cross-referenced clauses?", sources)
    assert answer.outcome in (Outcome.ANSWER, Outcome.PARTIAL)
    assert "41%" in answer.sentences[0].text
