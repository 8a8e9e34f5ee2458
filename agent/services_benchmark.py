"""The old home of agent.benchmark.service and agent.review.services, kept for the importers
outside that change (bench/ scripts, manage.py import_benchmark); new code imports those."""

from agent.benchmark.service import (
    benchmark_import,
    benchmark_labels,
    benchmark_progress,
    benchmark_report,
    benchmark_runs,
    benchmark_start,
    run_execute_in_process,
    run_records,
)
from agent.review.services import review_create, review_queue

__all__ = [
    "benchmark_import",
    "benchmark_labels",
    "benchmark_progress",
    "benchmark_report",
    "benchmark_runs",
    "benchmark_start",
    "review_create",
    "review_queue",
    "run_execute_in_process",
    "run_records",
]
