"""When a question's presupposition counts as confirmed (agent.local.premise_check,
agent.local.auditor): a wh-question's presupposition is a readable claim that some N exists
(agent.local.planner), the sentence that answers a one-need question states it with the asked
noun filled, and a number in a sentence names no other subject. Passages and questions are
written for these tests; none comes from a benchmark."""

from __future__ import annotations

import pytest

from agent.local.auditor import AuditorParams, LocalAuditor
from agent.local.candidates import Candidate
from agent.local.planner import RulePlanner, presupposition
from agent.local.premise_check import _asserts, answer_confirms
from agent.local.text import term_set
from agent.types import Outcome
from tests.agent.local.conftest import make_source

TITLE = "Harbor: tagging shipping manifests at scale"
HARBOR = [
    make_source(
        91,
        "Harbor tags every line of a shipping manifest with its commodity code. "
        "Harbor was trained on manifests from three ports.",
        title=TITLE,
    ),
    make_source(
        92,
        "All tagging runs were executed on an Nvidia Quadro P6000 GPU with 48GB of RAM. "
        "Each run took about two hours.",
        title=TITLE,
    ),
    make_source(
        93,
        "Overall, the project needed roughly 2,300 annotation hours to label the manifests.",
        title=TITLE,
    ),
]


@pytest.mark.parametrize(
    ("question", "premise"),
    [
        ("Which optimizer was chosen to train Quill?", "some optimizer was chosen to train Quill"),
        ("What learning rate is used to tune the Quill reranker?",
         "some learning rate is used to tune the Quill reranker"),
        ("Which GPU were the ablations of Quill run on?", "the ablations of Quill were run on some GPU"),
        ("What bonus were the Quill raters paid?", "the Quill raters were paid some bonus"),
        # Without a passive, the verb's place is not known: the body and the noun, as before.
        ("Which tokenizer does Quill rely on?", "Quill rely on tokenizer"),
    ],
)
def test_a_which_n_question_presupposes_that_some_n_exists_in_readable_order(question, premise):
    assert presupposition(question) == premise


def test_what_a_named_score_measures_presupposes_only_the_score():
    # As "What is X?": a definition question takes only X for granted.
    assert presupposition("What does the P@3x score reported by Quill measure?") == ""
    assert RulePlanner().plan("What does the P@3x score reported by Quill mean?").premise == ""
    # In the past it asks what was measured, which presupposes that something was.
    assert presupposition("What did the Quill authors measure?") == "the Quill authors measure"


def _candidate(quote: str, title: str = TITLE) -> Candidate:
    return Candidate(0, quote, f" {title}", term_set(quote), quote)


def test_the_answering_sentence_confirms_the_premise_it_fills():
    premise = presupposition("Which GPU were the tagging runs of Harbor executed on?")
    answer = _candidate("All tagging runs were executed on an Nvidia Quadro P6000 GPU with 48GB of RAM.")
    assert answer_confirms(premise, "GPU", answer, term_set(TITLE))


@pytest.mark.parametrize(
    ("asked", "quote", "document"),
    [
        # The sentence does not name what is asked: it answers something else.
        ("GPU", "All tagging runs of Harbor finished within two hours.", TITLE),
        # The document is not about the premise's subject.
        ("GPU", "All tagging runs were executed on an Nvidia Quadro P6000 GPU.", "Quill: a receipt reader"),
        # A question that asks for no noun leaves nothing to fill.
        ("", "All tagging runs were executed on an Nvidia Quadro P6000 GPU.", TITLE),
    ],
)
def test_a_sentence_that_does_not_fill_the_asked_slot_confirms_nothing(asked, quote, document):
    premise = presupposition("Which GPU were the tagging runs of Harbor executed on?")
    assert not answer_confirms(premise, asked, _candidate(quote, document), term_set(document))


def _run(embed, question: str, **params):
    from agent.local.generator import ExtractiveGenerator
    from agent.verify import CitationVerifier

    plan = RulePlanner().plan(question)
    audit = LocalAuditor(embed=embed, params=AuditorParams(**params)).audit(question, plan, HARBOR, can_retry=False)
    return audit, CitationVerifier().verify(ExtractiveGenerator(embed=embed).generate(question, HARBOR, audit), HARBOR)


def test_a_one_need_question_answered_by_a_sentence_stating_its_premise_is_answered(embed):
    question = "Which GPU were the tagging runs of Harbor executed on?"
    audit, answer = _run(embed, question)
    assert audit.premise.confirmed
    assert answer.outcome == Outcome.ANSWER and "P6000" in answer.sentences[0].text
    # Without the rule the sentence's other names (Nvidia, Quadro) keep the title from lending
    # it "Harbor", and the question is refused for its unconfirmed premise (the waiver off)...
    audit, answer = _run(embed, question, answer_confirms_premise=False, premise_waive_support=1.01)
    assert not audit.premise.confirmed and answer.outcome == Outcome.REFUSAL
    # ... or answered in part, saying so, when the evidence comes close enough to the premise
    # (agent.local.premise_check.waive_unconfirmed, the default waiver).
    audit, answer = _run(embed, question, answer_confirms_premise=False)
    assert not audit.premise.confirmed and answer.outcome == Outcome.PARTIAL


def test_a_number_in_the_sentence_names_no_other_subject(embed):
    # "the project needed roughly 2,300 annotation hours" is about Harbor, which its title names.
    audit, answer = _run(embed, "How many annotation hours did the Harbor project need?",
                         answer_confirms_premise=False)
    assert audit.premise.confirmed
    assert answer.outcome == Outcome.ANSWER


BRIDGE_TITLE = "Bridge: a mixture of experts for manifests"
BRIDGE = [
    make_source(95, "In particular, we looked at the routing decisions of Bridge on manifests from four harbours. "
                    "Surprisingly, we do not observe any pattern in the assignment of experts based on the port.",
                title=BRIDGE_TITLE),
    make_source(96, "Bridge keeps the top two experts for each token, and does not cache experts across batches.",
                title=BRIDGE_TITLE),
]


def test_a_sentence_that_denies_the_relation_words_does_not_confirm_the_premise(embed):
    # "experts" and "port" are there, but the first only inside "do not observe ...": the
    # sentence says the experts do not specialise by port, and nothing else states it.
    question = "Given that Bridge's experts specialise by port, which expert handles the Rotterdam manifests?"
    audit = LocalAuditor(embed=embed).audit(question, RulePlanner().plan(question), BRIDGE, can_retry=False)
    assert audit.premise.premise == "Bridge's experts specialise by port"
    assert not audit.premise.confirmed


def test_a_negated_side_remark_leaves_the_affirmed_relation_confirmed(embed):
    question = "Why does Bridge keep the top two experts for each token?"
    audit = LocalAuditor(embed=embed).audit(question, RulePlanner().plan(question), BRIDGE, can_retry=False)
    assert audit.premise.confirmed and not audit.premise.contradicted


def test_a_sentence_stating_the_relation_of_the_premise_subject_asserts_it():
    quote = "Harbor caches the embeddings of each manifest line after tagging."
    assert _asserts("Harbor caches the embeddings of each manifest line",
                    Candidate(0, quote, "The indexer caches the embeddings of each line once.", term_set(quote), quote))


@pytest.mark.xfail(reason="the sentence before lends its relation words to a sentence that names the premise's "
                          "subject: tightening this (relation words the sentence's own) lost true premises and "
                          "corrected no false one on calibration (docs/benchmarks.md, 'Premise confirmation (stop 29)')",
                   strict=True)
def test_relation_words_lent_by_the_sentence_before_do_not_confirm():
    # The indexer caches the embeddings; Harbor only recomputes its scores.
    quote = "Harbor recomputes its tag scores for every manifest it reads."
    assert not _asserts("Harbor caches the embeddings of each manifest line",
                        Candidate(0, quote, "The indexer caches the embeddings of each line once.", term_set(quote),
                                  quote))
