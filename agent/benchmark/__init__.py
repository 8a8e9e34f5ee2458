"""Benchmarks: reading a benchmark file (parse), metrics of finished runs (metrics) and the
report over them (report), all without Django; the Django side is agent.benchmark.service.

The pure API is re-exported here, so callers write `from agent import benchmark as bm`.
"""

from agent.benchmark.metrics import (
    GRADE_SCORE,
    GRADES,
    OUT_FAILED,
    STRADDLE_MIN_SHARE,
    CitedChunk,
    Metrics,
    RunRecord,
    answer_sentences,
    citation_supports,
    group_metrics,
    normalise,
    percentile,
    proxy_score,
    span_in_text,
    spans_covered,
)
from agent.benchmark.parse import (
    ANSWER,
    DEBUNK,
    DEFAULT_SPLIT,
    EXPECTED_BEHAVIORS,
    KNOWN_FIELDS,
    REFUSE,
    BenchmarkFormatError,
    ExpectedPage,
    QuestionSpec,
    doc_key,
    parse_benchmark,
    unknown_doc_ids,
)
from agent.benchmark.report import (
    CSV_FIELDS,
    Report,
    cohen_kappa,
    compute_report,
    report_csv_rows,
)

__all__ = [
    "ANSWER",
    "CSV_FIELDS",
    "DEBUNK",
    "DEFAULT_SPLIT",
    "EXPECTED_BEHAVIORS",
    "GRADES",
    "GRADE_SCORE",
    "KNOWN_FIELDS",
    "OUT_FAILED",
    "REFUSE",
    "STRADDLE_MIN_SHARE",
    "BenchmarkFormatError",
    "CitedChunk",
    "ExpectedPage",
    "Metrics",
    "QuestionSpec",
    "Report",
    "RunRecord",
    "answer_sentences",
    "citation_supports",
    "cohen_kappa",
    "compute_report",
    "doc_key",
    "group_metrics",
    "normalise",
    "parse_benchmark",
    "percentile",
    "proxy_score",
    "report_csv_rows",
    "span_in_text",
    "spans_covered",
    "unknown_doc_ids",
]
