"""Which audited sentences the extractive answer states (agent.local.generator.ComposeParams):
how many per fact, how close to the best one a next-best one must be, and the sentence after
a best one that lacks the asked kind of answer (follow_on_sentence). Passages written for
these tests."""

from __future__ import annotations

from agent.local.generator import ComposeParams, ExtractiveGenerator, follow_on_sentence
from agent.types import AuditResult, FactAudit, SupportingSentence, SupportLabel, Verdict
from tests.agent.local.conftest import make_source

PARSER = ("The Quillet parser reads scanned tax forms page by page. "
          "The Quillet field extractor was tuned on a held-out set of forms. "
          "It reaches a field accuracy of 91.4% on the Ledger-500 benchmark. "
          "Training the extractor takes two days on one GPU.")
FIRST, SECOND, THIRD, FOURTH = (
    "The Quillet parser reads scanned tax forms page by page.",
    "The Quillet field extractor was tuned on a held-out set of forms.",
    "It reaches a field accuracy of 91.4% on the Ledger-500 benchmark.",
    "Training the extractor takes two days on one GPU.",
)


def _audit(fact: str, scored: list[tuple[str, float]]) -> AuditResult:
    return AuditResult(verdict=Verdict.SUFFICIENT, facts=[FactAudit(fact=fact, label=SupportLabel.SUPPORTED, sentences=[
        SupportingSentence(chunk_id=1, quote=q, label=SupportLabel.SUPPORTED, score=p, quote_start=PARSER.index(q))
        for q, p in scored])])


def _texts(embed, question: str, audit: AuditResult, params: ComposeParams) -> list[str]:
    draft = ExtractiveGenerator(embed=embed, params=params).generate(question, [make_source(1, PARSER)], audit)
    return [s.text for s in draft.sentences]


def test_a_next_best_sentence_close_in_ratio_is_stated(embed):
    audit = _audit("what does the Quillet parser read?", [(FIRST, 0.6), (FOURTH, 0.45)])
    # 0.45 is 0.15 below the best: outside a 0.08 margin, inside 0.75 of it.
    assert _texts(embed, "What does the Quillet parser read?", audit, ComposeParams(margin=0.08)) == [FIRST]
    assert _texts(embed, "What does the Quillet parser read?", audit,
                  ComposeParams(margin=0.08, ratio=0.75)) == [FIRST, FOURTH]


def test_per_fact_caps_the_sentences_of_one_fact(embed):
    audit = _audit("what does the Quillet parser read?", [(FIRST, 0.5), (FOURTH, 0.5), (SECOND, 0.5)])
    assert len(_texts(embed, "What does the Quillet parser read?", audit, ComposeParams(per_fact=3))) == 3
    assert _texts(embed, "What does the Quillet parser read?", audit, ComposeParams(per_fact=1)) == [FIRST]


def test_the_sentence_after_gives_the_number_the_best_one_lacks():
    # "how accurate": a number is asked for; the tuning sentence has none, the next one has it.
    assert follow_on_sentence("what field accuracy does the Quillet extractor reach?", SECOND, PARSER) == THIRD


def test_a_best_sentence_that_holds_the_number_gets_no_follow_on():
    assert follow_on_sentence("what field accuracy does the Quillet extractor reach?", THIRD, PARSER) == ""


def test_no_follow_on_when_the_next_sentence_lacks_it_too():
    assert follow_on_sentence("what field accuracy does the Quillet extractor reach?", FIRST, PARSER) == ""


def test_the_last_sentence_of_a_chunk_has_no_follow_on():
    assert follow_on_sentence("how many GPUs train the Quillet extractor?", FOURTH.replace("one", "a"),
                              PARSER.replace("one GPU", "a GPU")) == ""


def test_the_answer_reads_the_follow_on_after_its_sentence_only_when_asked(embed):
    question = "What field accuracy does the Quillet extractor reach?"
    audit = _audit(question, [(SECOND, 0.4)])
    assert _texts(embed, question, audit, ComposeParams(follow_on="")) == [SECOND]
    draft = ExtractiveGenerator(embed=embed, params=ComposeParams(follow_on="type")).generate(
        question, [make_source(1, PARSER)], audit)
    assert [s.text for s in draft.sentences] == [SECOND, THIRD]
    assert [s.citations for s in draft.sentences] == [[1], [1]]


def test_the_last_slot_goes_to_the_likelier_second_sentence_with_score_order(embed):
    text = PARSER + " Quillet was written in Rust by a team of three. It ships under the MIT licence."
    rust, licence = "Quillet was written in Rust by a team of three.", "It ships under the MIT licence."
    source = make_source(1, text)

    def said(order: str) -> list[str]:
        def sentence(q: str, p: float) -> SupportingSentence:
            return SupportingSentence(chunk_id=1, quote=q, label=SupportLabel.SUPPORTED, score=p,
                                      quote_start=text.index(q))
        audit = AuditResult(verdict=Verdict.SUFFICIENT, facts=[
            FactAudit(fact="what does the Quillet parser read?", label=SupportLabel.SUPPORTED,
                      sentences=[sentence(FIRST, 0.6), sentence(FOURTH, 0.31)]),
            FactAudit(fact="what language is Quillet written in?", label=SupportLabel.SUPPORTED,
                      sentences=[sentence(rust, 0.5), sentence(licence, 0.45)])])
        draft = ExtractiveGenerator(embed=embed, params=ComposeParams(margin=0.3, second_order=order)).generate(
            "What does the Quillet parser read, and what language is it written in?", [source], audit)
        return [s.text for s in draft.sentences]

    assert FOURTH in said("fact") and licence not in said("fact")
    assert licence in said("score") and FOURTH not in said("score")
