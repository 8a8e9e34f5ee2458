"""The local auditor's answer / partial / refuse decision (agent.local.sufficiency and the
per-need aggregation of agent.local.verdict), on passages and questions written for these
tests, with the real offline embedder (no database); and the loop's deeper retry."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from agent.configs import build_roles, get_config
from agent.local import sufficiency
from agent.local.auditor import AuditorParams, LocalAuditor
from agent.local.planner import RulePlanner
from agent.local.verdict import verdict_for
from agent.loop import AgentLoop
from agent.types import FactAudit, Outcome, PremiseCheck, Source, SupportLabel, Verdict
from tests.agent.local.conftest import make_source

TITLE = "Harrowgate: Layout-Aware Extraction from Shipping Manifests"
PAPER = [
    make_source(1, "4.1 Training We train Harrowgate with the Adam optimizer and a batch size of 32 manifests. "
                   "Each model is trained for two days before it is evaluated.", title=TITLE),
    make_source(2, "Harrowgate reads every manifest page as a grid of text cells and encodes the grid with a "
                   "graph attention network over neighbouring cells.", title=TITLE),
    make_source(3, "On the held-out manifests, Harrowgate extracts 88.4% of the fields correctly, against 80.1% "
                   "for the strongest rule-based system we compare with.", title=TITLE),
]


@pytest.fixture
def ask(pipeline):
    return lambda question, sources=PAPER: pipeline(question, sources)


# --- the probability ---------------------------------------------------------------------

def test_a_need_without_any_candidate_has_probability_zero():
    assert sufficiency.features([]) is None
    assert sufficiency.probability(None, (1.0,) * len(sufficiency.NEED_FEATURES), 5.0) == 0.0


def test_the_margin_to_the_second_candidate_is_capped_and_a_lone_candidate_gets_the_cap():
    x = np.zeros(8)
    names = ("best_logit", "margin")
    lone = sufficiency.features([(0.5, x)], names)
    assert lone[0] == pytest.approx(0.0) and lone[1] == 3.0
    close = sufficiency.features([(0.5, x), (0.45, x)], names)
    assert 0 < close[1] < 0.5
    far = sufficiency.features([(0.999, x), (0.001, x)], names)
    assert far[1] == 3.0
    # The default model's first features: the best candidate's logit and its support (the
    # first selection feature).
    x[0] = 0.7
    assert list(sufficiency.features([(0.5, x)]))[:2] == pytest.approx([0.0, 0.7])


def test_the_cost_weighs_an_unanswered_need_called_answered_more_than_a_missed_one():
    p, y = [0.9, 0.6, 0.4, 0.1], [1, 0, 1, 0]
    # At 0.5: the 0.6 unanswered need is answered (3) and the 0.4 answered one is missed (1).
    assert sufficiency.cost(p, y, 0.5, answer_unanswered=3, refuse_answered=1) == 4
    # At 0.7 both are refused: only the missed one costs.
    assert sufficiency.cost(p, y, 0.7, answer_unanswered=3, refuse_answered=1) == 1
    assert sufficiency.auc(p, y) == 0.75
    assert sufficiency.auc([0.2], [1]) is None


def test_the_calibrated_defaults_are_fitted_weights_not_a_placeholder():
    p = AuditorParams()
    assert len(p.need_weights) == len(p.need_features)
    assert set(p.need_features) <= set(sufficiency.ALL_FEATURES)
    assert 0 < p.need_partial_min <= p.need_min < 1


# --- the verdict from each need's own label ------------------------------------------------

def _audits(*labels: SupportLabel) -> list[FactAudit]:
    return [FactAudit(fact=f"need {i}", label=label) for i, label in enumerate(labels)]


def test_every_need_answered_is_sufficient_and_some_is_partial_naming_the_missing_ones():
    premise = PremiseCheck()
    assert verdict_for(_audits(SupportLabel.SUPPORTED, SupportLabel.SUPPORTED), premise, [], False)[0] == Verdict.SUFFICIENT
    verdict, reason = verdict_for(_audits(SupportLabel.SUPPORTED, SupportLabel.UNSUPPORTED), premise, [], False)
    assert verdict == Verdict.PARTIALLY_SUFFICIENT and "need 1" in reason and "need 0" not in reason.split(":")[-1]
    assert verdict_for(_audits(SupportLabel.UNSUPPORTED), premise, [], False)[0] == Verdict.INSUFFICIENT_REFUSE
    # While a retry is left, anything missing asks for it first.
    assert verdict_for(_audits(SupportLabel.SUPPORTED, SupportLabel.UNSUPPORTED), premise, [], True)[0] == \
        Verdict.INSUFFICIENT_RETRY


def test_a_one_need_question_with_an_unconfirmed_premise_is_refused_unless_the_need_is_very_likely_answered():
    premise = PremiseCheck(premise="Harrowgate was distilled from a teacher", confirmed=False)
    audits = _audits(SupportLabel.SUPPORTED)
    assert verdict_for(audits, premise, [], False)[0] == Verdict.INSUFFICIENT_REFUSE
    verdict, reason = verdict_for(audits, premise, [], False, premise_waived=True)
    assert verdict == Verdict.PARTIALLY_SUFFICIENT and "premise could not be confirmed" in reason


# --- the decision on passages written for the tests -----------------------------------------

def test_an_answerable_question_is_answered(ask):
    audit, answer = ask("Which optimizer is used to train Harrowgate?")
    assert audit.verdict == Verdict.SUFFICIENT and answer.outcome == Outcome.ANSWER
    assert "Adam" in answer.sentences[0].text


def test_a_multi_part_question_answers_the_answered_part_and_names_the_missing_one(ask):
    audit, answer = ask("Which optimizer is used to train Harrowgate, and how many GPUs was it trained on?")
    assert [f.label for f in audit.facts] == [SupportLabel.SUPPORTED, SupportLabel.UNSUPPORTED]
    assert answer.outcome == Outcome.PARTIAL
    assert any("Adam" in s.text for s in answer.sentences)
    assert "GPUs" in answer.missing_note and "optimizer" not in answer.missing_note


@pytest.mark.xfail(reason="the part 'who annotated the manifests?' still clears need_min (0.3) from on-topic "
                          "sentences that name no annotator: a 'who' need has no focus noun for focus_miss "
                          "to miss (docs/benchmarks.md)", strict=True)
def test_a_part_whose_candidates_are_on_topic_but_do_not_answer_is_named_missing(ask, embed):
    # Both parts have candidate sentences; nothing says who annotated the manifests, and the
    # model (not a gate) calls that part unanswered.
    question = "How is Harrowgate trained, and who annotated the manifests?"
    audit, answer = ask(question)
    assert [f.label for f in audit.facts] == [SupportLabel.SUPPORTED, SupportLabel.UNSUPPORTED]
    assert audit.facts[1].sentences  # it had candidates: kept as the closest evidence only
    assert answer.outcome == Outcome.PARTIAL
    # The note names the part as asked, not with the subject it borrowed for scoring.
    assert audit.missing == ["who annotated the manifests?"]
    assert "annotated the manifests?" in answer.missing_note and "trained" not in answer.missing_note
    assert all("Adam" in s.text or "trained" in s.text for s in answer.sentences)
    # The former rule (any candidate past the gates answers) stated the second part too.
    lenient = LocalAuditor(embed=embed, params=AuditorParams(need_min=0.0, need_partial_min=0.0))
    assert lenient.audit(question, RulePlanner().plan(question), PAPER, can_retry=False).verdict == \
        Verdict.SUFFICIENT


@pytest.mark.xfail(reason="a 'why' part answered by a sentence that says what is done but not why: the "
                          "reason-type fit accepts it and its support is high, so P(answered) clears need_min",
                   strict=True)
def test_a_why_part_that_the_paper_does_not_explain_is_named_missing(ask):
    audit, _ = ask("Which optimizer is used to train Harrowgate, and why does it use a graph over cells?")
    assert audit.facts[1].label == SupportLabel.UNSUPPORTED


@pytest.mark.parametrize("question", [
    "Who won the 2018 Tour de France?",  # out of scope
    # On topic: the paper speaks of Harrowgate's training (and holds numbers), never of its GPUs.
    "How many GPUs were used to train Harrowgate?",
    # A sentence on the asked topic that names *some* thing (the encoder), neither the asked
    # one (its pretraining corpus) nor a name where the corpus would be: focus_miss.
    "Which corpus was Harrowgate's encoder pretrained on?",
])
def test_a_question_the_evidence_does_not_answer_is_refused(ask, question):
    _, answer = ask(question)
    assert answer.outcome == Outcome.REFUSAL


@pytest.mark.xfail(reason="no shared word and a distant embedding: 'how long' against 'two days' after "
                          "'trained for' is found, but 'How much time does fitting take' shares no term with "
                          "the sentence, and the offline backend has no synonyms", strict=True)
def test_a_paraphrase_sharing_no_word_with_its_answer_is_answered(ask):
    _, answer = ask("How much time does fitting the manifest reader need?")
    assert answer.outcome == Outcome.ANSWER and "two days" in answer.text


# --- the loop's retry ---------------------------------------------------------------------

class _RankedRetriever:
    """Every query finds the same ranking: four on-topic chunks that do not answer, then the
    answering one at rank 5 (beyond top_k = 4 of the first pass)."""

    def __init__(self):
        self.calls: list[tuple[str, int]] = []
        filler = [f"Harrowgate processes manifest page {n} in the layout stage before extraction begins."
                  for n in range(1, 5)]
        self.ranking = [Source(chunk_id=i + 10, document_id=1, document_title=TITLE, text=t)
                        for i, t in enumerate(filler)]
        self.ranking.append(Source(chunk_id=99, document_id=1, document_title=TITLE,
                                   text="Harrowgate was trained on 16 GPUs for two days in total."))

    def retrieve(self, query, *, k):
        self.calls.append((query, k))
        return self.ranking[:k]


@pytest.mark.parametrize("depth, found", [(1, False), (2, True)])
def test_a_retry_reads_past_the_chunks_it_already_has(embed, depth, found):
    from dataclasses import replace

    cfg = replace(get_config("agentic"), top_k=4)
    retriever = _RankedRetriever()
    loop = AgentLoop(cfg, build_roles(cfg, "local", embed=embed), retriever, concurrent=False)
    loop.retry_depth = depth
    result = loop.run("How many GPUs were used to train Harrowgate?")
    assert result.retries >= 1
    assert (99 in [s.chunk_id for s in result.sources]) is found
    if found:
        assert result.answer.outcome == Outcome.ANSWER and "16 GPUs" in result.answer.text


def test_the_reformulator_searches_the_unanswered_part_with_the_question_subject(embed):
    from agent.local.reformulator import KeywordReformulator

    question = "How is Harrowgate trained, and who annotated the manifests?"
    # The second part without its subject, as a planner may give it (the rule planner now
    # writes "In Harrowgate, who annotated the manifests?", which the on-topic training
    # sentence answers by the model's lights: see the expected failure above).
    plan = RulePlanner().plan(question)
    plan = plan.model_copy(update={"facts": [plan.facts[0], "who annotated the manifests?"]})
    # A stricter threshold than the shipped one, so the second part is unanswered (see the
    # expected failure above) and the reformulator has something to search.
    strict = AuditorParams(need_min=0.35, need_partial_min=0.35)
    audit = LocalAuditor(embed=embed, params=strict).audit(question, plan, PAPER, can_retry=True)
    assert audit.verdict == Verdict.INSUFFICIENT_RETRY
    queries = KeywordReformulator().reformulate(question, plan, audit, tried=list(plan.sub_queries)).sub_queries
    assert queries and "annotated" in queries[0] and "Harrowgate" in queries[0]
    assert not any("trained" in q for q in queries)  # the answered part is not searched again


def test_the_auditor_threshold_is_a_parameter(embed):
    question = "Which optimizer is used to train Harrowgate?"
    plan = RulePlanner().plan(question)
    never = LocalAuditor(embed=embed, params=AuditorParams(need_min=1.01, need_partial_min=1.01))
    assert never.audit(question, plan, PAPER, can_retry=False).verdict == Verdict.INSUFFICIENT_REFUSE


# --- what the need asks for, named or not by its best sentence (issue 14, in-domain refusals) --

@pytest.mark.parametrize("question, focus", [
    ("How many GPUs were used to train Harrowgate?", ["gpus"]),
    ("Which optimizer is used to train Harrowgate?", ["optim"]),
    # "what is the N of X" asks for N, not for X.
    ("What is the carbon footprint of training Harrowgate?", ["carbon", "footprint"]),
    # A generic head ("rate") next to the thing it measures: the thing is asked for.
    ("What is the learning rate of Harrowgate's optimizer?", ["learn"]),
    # A noun that only names a measure is given by the number, not by the word: "what share
    # of X" asks about X (answer_type.need_of).
    ("What share of the fields does Harrowgate extract correctly?", ["field"]),
    ("What is the accuracy of the strongest rule-based system?", []),
    ("What BLEU score does Harrowgate reach?", ["bleu"]),
    # A name in the focus is what the question is about, not what it asks for; a focus of
    # names only stays.
    ("What share of Harrowgate-XL fields are extracted correctly?", ["field"]),
    ("How many A100 GPUs does Harrowgate use?", ["a100", "gpus"]),
    # A definition or a yes/no question names no focus.
    ("What is Harrowgate?", []),
    ("Does Harrowgate use a graph?", []),
    # "How long / how big / what is the N": no asked noun, but the question asks it of
    # something, and a duration or size of something else does not answer it.
    ("How long does distillation take?", ["distil"]),
    ("How long did it take to label the receipts?", ["label", "receipt"]),
    ("How big is the held-out split?", ["held-out", "held", "split"]),
    ("What is the teacher?", ["teacher"]),
])
def test_the_asked_focus_is_what_the_question_asks_for(question, focus):
    assert sufficiency.asked_focus(question) == focus


def test_the_focus_missing_from_the_best_sentence_counts_half_when_the_sentence_before_names_it():
    focus = ["carbon", "footprint"]
    assert sufficiency.focus_miss(focus, {"carbon", "footprint", "train"}, set()) == 0.0
    assert sufficiency.focus_miss(focus, {"train"}, {"carbon", "footprint"}) == 0.5
    assert sufficiency.focus_miss(focus, {"carbon", "train"}, set()) == 0.5
    assert sufficiency.focus_miss(focus, {"train"}, set()) == 1.0
    assert sufficiency.focus_miss([], {"train"}, set()) == 0.0


def test_miss_and_gap_is_the_focus_miss_times_the_answer_fit_gap_and_the_premise_flag_a_feature():
    x = np.zeros(8)
    x[4] = 0.3  # answer_fit: a number, but not next to the asked focus
    names = ("focus_miss", "fit_gap", "miss_and_gap", "premise_unconfirmed")
    assert list(sufficiency.features([(0.5, x)], names, miss=1.0)) == pytest.approx([1.0, 0.7, 0.7, 0.0])
    # A sentence that names the focus, or holds the asked kind of answer, is not penalised.
    assert sufficiency.features([(0.5, x)], names, miss=0.0)[2] == 0.0
    x[4] = 1.0
    assert sufficiency.features([(0.5, x)], names, miss=1.0)[2] == 0.0
    assert sufficiency.features([(0.5, x)], names, unconfirmed=True)[3] == 1.0


def test_the_default_weighs_the_share_of_the_asked_focus_its_best_sentence_leaves_out():
    # Refitted on whole runs of today's needs (bench/calibrate_sufficiency.py --runs, stop 26):
    # focus_miss on top of the two-feature model, chosen over miss_and_gap by the
    # leave-one-question-out cost on the calibration halves.
    p = AuditorParams()
    assert "focus_miss" in p.need_features and p.need_weights[p.need_features.index("focus_miss")] < 0


TUNING = [make_source(4, "We fine-tune Harrowgate with a learning rate of 3e-5 for ten epochs on the training "
                         "manifests.", title=TITLE)]


def test_a_number_next_to_only_part_of_the_asked_focus_costs_the_need_its_probability(embed):
    # "rate" is there, "dropout" is not: the answer type (a number by part of the focus) fits,
    # so miss_and_gap is 0 and the former default scored the learning rate as if it answered.
    question = "What dropout rate does Harrowgate use?"
    plan = RulePlanner().plan(question)
    former = replace(AuditorParams(), need_features=("best_logit", "support", "miss_and_gap"),
                     need_weights=(0.619, 3.2922, -1.2521))

    def need_p(params: AuditorParams, q: str = question) -> float:
        auditor = LocalAuditor(embed=embed, params=params)
        (x, _), = auditor.rank_sentences(q, RulePlanner().plan(q), PAPER + TUNING, need_features=params.need_features)
        return sufficiency.probability(x, params.need_weights, params.need_bias)

    assert plan.facts and need_p(AuditorParams()) < need_p(former) - 0.1
    # The sentence that names the whole focus keeps its probability, and answers.
    assert need_p(AuditorParams(), "What learning rate does Harrowgate use?") > 0.8



@pytest.mark.parametrize("question", [
    # Terse, QASPER-style ("they" for the authors): the paper speaks of its training and its
    # numbers, never of annotators or a vocabulary.
    "How many annotators checked the extracted fields?",
    "How large is their vocabulary?",
])
def test_a_terse_question_the_paper_does_not_answer_is_refused(ask, question):
    assert ask(question)[1].outcome == Outcome.REFUSAL


@pytest.mark.parametrize("question, expected", [
    ("What optimizer do they use?", "Adam"),
    ("What batch size do they use?", "32"),
    ("How long is each model trained?", "two days"),
])
def test_a_terse_question_the_paper_answers_is_answered_and_not_sent_to_clarify(ask, question, expected):
    audit, answer = ask(question)
    assert audit.verdict != Verdict.CLARIFY and answer.outcome == Outcome.ANSWER and expected in answer.text


def test_a_one_need_question_with_an_unconfirmed_premise_is_answered_when_the_model_weighs_the_premise(embed):
    # With "premise_unconfirmed" among the need features the model itself weighs the
    # unconfirmed premise: a need it still calls answered is answered (PARTIAL, saying so).
    question = "Which optimizer did the Harrowgate authors pick after their ablation?"
    plan = RulePlanner().plan(question)
    assert plan.premise
    weighs = AuditorParams(need_features=("best_logit", "support", "premise_unconfirmed"),
                           need_weights=(0.619, 3.2922, -1.0), need_bias=-0.6589, need_min=0.01,
                           need_partial_min=0.01, premise_unconfirmed_min=1.01)
    never = replace(weighs, need_features=("best_logit", "support"), need_weights=(0.619, 3.2922))
    audit = LocalAuditor(embed=embed, params=weighs).audit(question, plan, PAPER, can_retry=False)
    if audit.premise.confirmed:
        pytest.skip("the premise check confirmed this premise: nothing to waive")
    assert audit.verdict == Verdict.PARTIALLY_SUFFICIENT
    assert LocalAuditor(embed=embed, params=never).audit(question, plan, PAPER, can_retry=False).verdict == \
        Verdict.INSUFFICIENT_REFUSE


def test_the_need_features_carry_the_focus_miss_and_the_answer_fit_gap():
    x = np.zeros(8)
    x[4] = 0.3  # answer_fit: a number, but not next to the asked focus
    names = ("best_logit", "focus_miss", "fit_gap")
    assert list(sufficiency.features([(0.5, x)], names, miss=1.0)) == pytest.approx([0.0, 1.0, 0.7])


# The model bench/calibrate_sufficiency.py --loop fitted with the in-domain questions
# (docs/benchmarks.md, "Refusals, stop 24"); not the default, since it refused more answerable
# held-out questions. Its features are parameters of the role like its weights.
# A need model's weights hold for the selection model whose logit (best_logit) it was fitted
# on, so the frozen models below keep the selection weights of their day (stop 25's: the
# default until the refit on all calibration halves, docs/benchmarks.md, stop 26).
FORMER_SELECTION = {"selection_weights": (0.8158, 0.835, 1.0167, 1.1054, 0.7608, 0.418, 0.5017, 0.5511, 0.0, 0.0,
                                          0.0, 0.0, 0.0),
                    "selection_bias": -6.1972, "answer_min": 0.04}
FOCUS_MODEL = AuditorParams(need_features=("best_logit", "support", "focus_miss", "fit_gap"),
                            need_weights=(0.8673, 3.4788, -1.4912, -1.3542), need_bias=-0.305, need_min=0.2,
                            need_partial_min=0.2, premise_unconfirmed_min=0.75, **FORMER_SELECTION)


# The default before the whole-run refit (docs/benchmarks.md, "QASPER-style questions", stop 25).
FORMER_DEFAULT = AuditorParams(need_features=("best_logit", "support"), need_weights=(0.619, 3.2922),
                               need_bias=-0.6589, need_min=0.2, need_partial_min=0.2, premise_unconfirmed_min=1.01,
                               **FORMER_SELECTION)


@pytest.fixture
def ask_focus(embed):
    from agent.local.generator import ExtractiveGenerator
    from agent.verify import CitationVerifier

    auditor, generator, verifier = (LocalAuditor(embed=embed, params=FOCUS_MODEL), ExtractiveGenerator(embed=embed),
                                    CitationVerifier())

    def run(question: str, sources=PAPER):
        audit = auditor.audit(question, RulePlanner().plan(question), sources, can_retry=False)
        return audit, verifier.verify(generator.generate(question, sources, audit), sources)

    return run


def test_the_focus_model_weighs_the_focus_the_best_sentence_leaves_out():
    p = FOCUS_MODEL
    assert set(p.need_features) <= set(sufficiency.ALL_FEATURES) and len(p.need_weights) == len(p.need_features)
    assert p.need_weights[p.need_features.index("focus_miss")] < 0
    assert p.need_weights[p.need_features.index("fit_gap")] < 0


@pytest.mark.parametrize("question", [
    # On topic, and the paper holds sentences about Harrowgate's training and numbers, but
    # nothing about what is asked (the QASPER-style case: the paper is there, the answer is not).
    "What is the carbon footprint of training Harrowgate?",
    "What is the learning rate of Harrowgate's optimizer?",
    # A sentence that names *some* thing (the encoder) but not the asked one (its corpus).
    "Which corpus was Harrowgate's encoder pretrained on?",
])
def test_an_on_topic_question_whose_asked_thing_no_sentence_names_is_refused(ask, ask_focus, embed, question):
    audit, answer = ask_focus(question)
    assert audit.verdict == Verdict.INSUFFICIENT_REFUSE and answer.outcome == Outcome.REFUSAL
    # The default model refuses it too (its best sentence does not name what is asked:
    # focus_miss) ...
    assert ask(question)[1].outcome == Outcome.REFUSAL
    # ... which the former default (best logit and support only, need_min 0.2) answered with
    # an on-topic sentence. (Since stop 28 the encoder question's premise, "Harrowgate's
    # encoder was pretrained on some corpus", is no longer confirmed by "Harrowgate ... encodes
    # the grid", which holds its subject and one relation word of three, so the former
    # default refuses it too: agent.local.premise_check._asserts.)
    plan = RulePlanner().plan(question)
    former = LocalAuditor(embed=embed, params=FORMER_DEFAULT).audit(question, plan, PAPER, can_retry=False)
    assert (former.verdict != Verdict.INSUFFICIENT_REFUSE) == ("encoder" not in question)


@pytest.mark.parametrize("question, expected", [
    ("Which optimizer is used to train Harrowgate?", "Adam"),
    ("What batch size is used to train Harrowgate?", "32"),
    ("What share of the fields does Harrowgate extract correctly?", "88.4%"),
    ("What is the accuracy of the strongest rule-based system?", "80.1%"),
])
def test_questions_whose_answer_names_the_focus_or_gives_the_measure_are_still_answered(ask_focus, question,
                                                                                     expected):
    _, answer = ask_focus(question)
    assert answer.outcome == Outcome.ANSWER and expected in answer.text


@pytest.mark.parametrize("question, expected", [
    ("Which optimizer is used to train Harrowgate?", "Adam"),
    ("What batch size is used to train Harrowgate?", "32"),
    ("What share of the fields does Harrowgate extract correctly?", "88.4%"),
])
def test_the_default_answers_them_too(ask, question, expected):
    answer = ask(question)[1]
    assert answer.outcome == Outcome.ANSWER and expected in answer.text


@pytest.mark.xfail(strict=True, reason="the selection refit (stop 26) gives the only sentence holding 80.1% "
                   "P(answers) 0.03 (0.11 before), under answer_partial_min 0.04: no candidate, refused "
                   "(docs/benchmarks.md, 'Selection and need refit together')")
def test_the_default_answers_a_measure_question_whose_sentence_names_only_the_compared_system(ask):
    answer = ask("What is the accuracy of the strongest rule-based system?")[1]
    assert answer.outcome == Outcome.ANSWER and "80.1%" in answer.text


def test_the_answering_quotes_are_the_candidates_whose_own_need_probability_clears_need_min(embed):
    # What the LLM path asks of the auditor (agent.llm.drafts.local_answer_quotes): each
    # candidate judged as if it were the need's best sentence, with the role's own features.
    question = "Which optimizer is used to train Harrowgate?"
    plan = RulePlanner().plan(question)
    auditor = LocalAuditor(embed=embed, params=FORMER_DEFAULT)  # features that need no focus
    p = auditor.params
    expected = {quote for quote, _, answers, x in auditor.rank_sentences(question, plan, PAPER)[0]
                if sufficiency.probability(sufficiency.features([(answers, x)], p.need_features), p.need_weights,
                                           p.need_bias) >= p.need_min}
    assert expected and auditor.answering_quotes(question, plan, PAPER) == expected
    assert any("Adam" in q for q in expected)


def test_rank_sentences_gives_each_need_its_features_when_asked(embed):
    question = "What is the carbon footprint of training Harrowgate?"
    plan = RulePlanner().plan(question)
    (x, ranked), = LocalAuditor(embed=embed).rank_sentences(question, plan, PAPER,
                                                             need_features=("support", "focus_miss"))
    assert ranked and x is not None and x[1] == 1.0  # no sentence names a carbon footprint


def test_what_kind_of_asks_for_the_noun_after_it():
    # "kind" is the form of the answer, not a word the answering sentence must repeat.
    from agent.local.sufficiency import asked_focus

    assert asked_focus("What kind of ranking function is Lumen?") == ["rank", "function"]
    assert asked_focus("Which type of loss does Lumen use?") == ["loss"]


def test_a_generic_head_next_to_the_thing_it_measures_is_not_the_focus():
    from agent.local.sufficiency import asked_focus, focus_miss
    from agent.local.text import term_set

    focus = asked_focus("What dropout rate does Quill use when fine-tuning?")
    assert focus == ["dropout"]
    # A sentence about another rate does not name what is asked; one about dropout does.
    assert focus_miss(focus, term_set("The learning rate is 3e-5 for every run."), set()) == 1.0
    assert focus_miss(focus, term_set("We apply a dropout of 0.1 to every layer."), set()) == 0.0
    assert asked_focus("What learning rate does Quill use?") == ["learn"]


def test_a_noun_naming_the_answer_form_or_a_modifier_is_not_the_focus():
    # "name" and "term" are the form of the answer: the sentence gives the name without the word.
    from agent.local.sufficiency import asked_focus, focus_miss
    from agent.local.text import term_set

    assert asked_focus("What other name is it given?") == []
    assert focus_miss(asked_focus("What other name is it given?"),
                      term_set("This pipeline is also known as Fetch-Then-Write."), set()) == 0.0
    # "the name of the N" asks for the N, which the sentence names.
    assert asked_focus("What is the name of the corpus Quill is trained on?") == ["corpus"]
    # "exact", "specific" narrow the asked thing without naming it.
    assert asked_focus("Which exact checkpoint does Quill start from?") == ["checkpoint"]


def test_a_new_name_may_fill_a_name_need_whose_asked_noun_the_sentence_leaves_out():
    # "Which accelerator ...?" is answered by a sentence naming one ("a Coral TPU-7") without the
    # word: its names the need does not hold (numbers aside) are the candidate answer.
    assert sufficiency.new_names("Which accelerator does Quill run on?",
                                 "All runs of Quill used a single Coral TPU-7 board.") == ["coral", "tpu-7"]
    assert sufficiency.new_names("Which accelerator does Quill run on?", "Quill runs for 3 hours.") == []


def test_a_name_need_whose_best_sentence_names_something_new_keeps_half_its_focus_miss(embed):
    sources = [make_source(1, "All runs of Quill used a single Coral TPU-7 board with 16 GB of memory.",
                           title="Quill: Compact Passage Rerankers")]
    question = "Which accelerator does Quill run on?"
    plan = RulePlanner().plan(question)
    ps = {}
    for fill in (1.0, 0.5):
        auditor = LocalAuditor(embed=embed, params=replace(AuditorParams(), name_fills_focus=fill))
        (x, _), = auditor.rank_sentences(question, plan, sources, need_features=("focus_miss",))
        ps[fill] = float(x[0])
    assert ps[1.0] == 1.0 and ps[0.5] == 0.5


# --- a term the need quotes or asks to define ------------------------------------------------

@pytest.mark.parametrize("question, term", [
    ("What is 'cell hopping', and how does it differ from row reading?", ["cell", "hop"]),
    ("What is \u201cgrid-aware decoding\u201d?", ["grid", "awar", "decod"]),
    ("What does slot drift mean?", ["slot", "drift"]),
    ("What do the Harrowgate authors mean by cell-only pooling?", ["cell", "pool"]),
    ("What is meant by manifest pooling?", ["manifest", "pool"]),
    ("Define layout tokens.", ["layout", "token"]),
    ("What is a grid encoder?", ["grid", "encod"]),
    # Not a definition: a value of something, or a noun the clause goes on about.
    ("What is the best grid encoder?", []),
    ("What is their main grid encoder?", []),
    ("What is the learning rate of Harrowgate?", []),
    ("What is Harrowgate trained on?", []),
    ("What is it?", []),
])
def test_the_defined_term_is_the_quoted_term_or_the_x_of_what_is_x(question, term):
    assert sufficiency.defined_term(question) == term


def test_a_defined_term_is_named_by_all_its_words_in_order_whatever_the_case_hyphens_or_plural():
    term = sufficiency.defined_term("What is 'cell hopping'?")
    assert sufficiency.names_term(term, "We call this Cell-Hopping: the reader jumps between cells.")
    assert sufficiency.names_term(term, "Both cell hoppings visit every cell once.")
    assert not sufficiency.names_term(term, "The reader hops from one cell to the next.")
    assert not sufficiency.names_term(term, "Each cell is encoded once; hopping is not used.")
    # In order with one other content word between: "cell-wise hopping" names it, a clause apart does not.
    assert sufficiency.names_term(term, "A cell-wise hopping order is used.")
    assert not sufficiency.names_term(term, "Each cell is read by the decoder before hopping begins.")
    assert sufficiency.names_term([], "Anything at all.")


GRID_PAPER = [
    make_source(1, "Harrowgate encodes every manifest page as a grid of text cells.", title=TITLE),
    make_source(2, "Row pooling averages the vectors of the cells in one row, so a row becomes one vector.",
                title=TITLE),
    make_source(3, "Hopping is how the reader moves between cells: it visits the right neighbour of each cell "
                   "before the next row.", title=TITLE),
]


@pytest.mark.parametrize("question", [
    "What is 'cell hopping'?",
    # The later part carries the quoted term ("how does 'cell hopping' differ ..."): it too must be named.
    "What is 'cell hopping', and how does it differ from row pooling?",
])
def test_a_defined_term_no_sentence_names_leaves_its_need_unanswered(ask, question):
    # "cell hopping" is coined: sentence 3 says "Hopping" and "cells" (and, without this rule,
    # answered both parts), but no sentence names the term.
    audit, answer = ask(question, GRID_PAPER)
    assert all(f.label == SupportLabel.UNSUPPORTED for f in audit.facts) and answer.outcome == Outcome.REFUSAL


def test_a_defined_term_a_sentence_names_is_answered(ask):
    audit, answer = ask("What is 'row pooling'?", GRID_PAPER)
    assert audit.facts[0].label == SupportLabel.SUPPORTED
    assert answer.outcome == Outcome.ANSWER and "Row pooling averages" in answer.text


def test_a_quoted_title_is_no_defined_term():
    assert sufficiency.defined_term("In 'Grids Meet Manifests', how large are the cells?") == []
    assert sufficiency.defined_term("In the 'Lost in the Grid' tests, how large are the cells?") == []
