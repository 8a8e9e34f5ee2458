"""Hand-made runs for the metric and report tests: every expected figure in
tests/agent/benchmark/test_metrics.py and test_report.py was computed by hand from `records()`
(the working is in the comments there)."""

from __future__ import annotations

from agent import benchmark as b

QA1 = b.QuestionSpec(
    "A1", "fox?", "single", b.ANSWER,
    expected_doc_ids=("paperA",), expected_pages=(b.ExpectedPage("paperA", 3),),
    required_evidence_spans=("the quick brown fox jumps over", "a lazy dog sleeps in the sun"),
)
QA2 = b.QuestionSpec(
    "A2", "rate?", "numeric", b.ANSWER,
    expected_doc_ids=("paperB",), expected_pages=(b.ExpectedPage("paperB", 5),),
    required_evidence_spans=("learning rate of 0.001 was used",),
)
QO = b.QuestionSpec("O1", "world cup?", "oos", b.REFUSE, answerable=False)
QF = b.QuestionSpec(
    "F1", "which reranker?", "premise", b.DEBUNK, answerable=False,
    expected_doc_ids=("paperC",), expected_pages=(b.ExpectedPage("paperC", 2),),
    required_evidence_spans=("we did not use any reranker",),
)


def cite(text, doc="paperZ.pdf", page=1):
    return b.CitedChunk(text=text, doc_names=(doc, doc), page_start=page, page_end=page)


def records() -> list[b.RunRecord]:
    fox = "The quick brown fox jumps over the fence"
    dog = "A lazy dog sleeps in the sun."
    premise = "Note: we did not use any re-\nranker in our experiments"
    agentic = [
        # 3 sentences, 2 cited; c1 holds span 1, c2 lies on the expected page; spans retrieved 2/2
        b.RunRecord(1, "agentic", QA1, "ANSWER", "The fox jumps [1]. The dog sleeps [2]. It is sunny.",
                    [cite(fox, "paperA.pdf", 7), cite("unrelated text", "paperA.pdf", 3)], [fox, dog],
                    100, 3, 100, 50, 0.01, ["correct", "partial"]),
        b.RunRecord(2, "agentic", QA2, "REFUSAL", "I could not find it.", [], ["nothing relevant"],
                    200, 2, 80, 20, 0.005, ["incorrect", "incorrect"]),
        # out of scope and answered: a hallucination; its citation is not counted in precision
        b.RunRecord(3, "agentic", QO, "ANSWER", "France won [1].", [cite("football text")], ["football text"],
                    300, 1, 10, 10, 0.0, []),
        b.RunRecord(4, "agentic", QF, "FALSE_PREMISE", "The paper did not use a reranker [1].",
                    [cite(premise, "paperC.pdf", 9)], [premise], 400, 4, 200, 100, 0.02, ["correct", "correct"]),
    ]
    bm25 = [
        # the cited chunk ends with the first 16 of the span's 25 normalised characters
        b.RunRecord(5, "bm25", QA1, "PARTIAL", "The fox jumps over [1]. Something else.",
                    [cite("ending with the quick brown fox")], ["ending with the quick brown fox"],
                    50, grades=["partial"]),
        b.RunRecord(6, "bm25", QA2, "ANSWER", "The rate was 0.01 [1].",
                    [cite("learning rate of 0.01 was used", "paperB.pdf", 4)], ["learning rate of 0.01 was used"],
                    60, grades=["incorrect"]),
        b.RunRecord(7, "bm25", QO, "REFUSAL", "Nothing in the collection says.", [], [], 70),
        b.RunRecord(8, "bm25", QF, "ANSWER", "It used a reranker.", [], [], 80),
    ]
    return agentic + bm25
