"""Steps in order (agent.local.contradiction.sequence): a claim that puts a named step after or
before another, against a sentence that puts another named step there. Sentences written for
these tests; none comes from a benchmark."""

from __future__ import annotations

import pytest

from agent.local.contradiction.sequence import swapped_step


@pytest.mark.parametrize(
    ("claim", "sentence", "swapped"),
    [
        # "B after A" against "A and then B'": the later step is another named one.
        ("Osprey is tuned with RLHF after pretraining on web text",
         "Osprey is pretrained on web text and then tuned with DPO on preference pairs.", True),
        # "A before B" against "A followed by B'", with an acronym in parentheses and a citation.
        ("Osprey applies BM25 before the T5 reranker",
         "Osprey retrieves with BM25 (a sparse retriever) [12] followed by a BERT reranker.", True),
        # The earlier step swapped: "B after A" against "A' followed by B".
        ("the Heron parser is distilled with KL loss after pretraining with MLM",
         "Heron is pretrained with ELECTRA objectives followed by distillation with a KL loss.", True),
        # An acronym of the claim's step names the same step: "SFT" for "supervised fine-tuning".
        ("Heron-Chat was trained with RLHF after supervised fine-tuning",
         "Heron-Chat is trained with SFT on dialogues followed by DPO on ranked replies.", True),
        # The same steps in the same order: no contradiction.
        ("Osprey is tuned with DPO after pretraining on web text",
         "Osprey is pretrained on web text and then tuned with DPO on preference pairs.", False),
        # The sentence names the claim's step too (a third step): not a substitute.
        ("Osprey is tuned with DPO after pretraining on web text",
         "Osprey is pretrained on web text, then tuned with KTO followed by DPO.", False),
        # A time is no step: "after 10 epochs".
        ("Osprey applies BM25 before the T5 reranker", "After 10 epochs, the BERT reranker converges.", False),
        # No order in the sentence at all.
        ("Osprey applies BM25 before the T5 reranker", "Osprey reranks the BM25 candidates with BERT.", False),
        # Nothing in common between the two sequences.
        ("Osprey is tuned with RLHF after pretraining on web text",
         "Indexing is done with FAISS followed by compression with PQ.", False),
    ],
)
def test_another_named_step_in_the_claims_place_is_a_swap(claim, sentence, swapped):
    assert swapped_step(claim, sentence) is swapped


def test_the_premise_check_corrects_a_premise_with_another_step_in_its_place(embed):
    from agent.local.auditor import LocalAuditor
    from agent.local.planner import RulePlanner
    from agent.types import Verdict
    from tests.agent.local.conftest import make_source

    title = "Heron-Chat: a small dialogue model"
    sources = [
        make_source(1, "We train Heron-Chat with supervised fine-tuning (SFT) on support dialogues followed by "
                       "Kahneman-Tversky Optimization (KTO) on thumbs-up ratings.", title=title),
        make_source(2, "Heron-Chat answers support tickets in English and German.", title=title),
    ]
    auditor = LocalAuditor(embed=embed)
    false = "How was Heron-Chat trained with PPO after supervised fine-tuning?"
    audit = auditor.audit(false, RulePlanner().plan(false), sources, can_retry=False)
    assert audit.verdict == Verdict.FALSE_PREMISE
    assert "Kahneman-Tversky" in audit.premise.quote
    true = "How was Heron-Chat trained with Kahneman-Tversky Optimization after supervised fine-tuning?"
    assert auditor.audit(true, RulePlanner().plan(true), sources, can_retry=False).verdict != Verdict.FALSE_PREMISE
