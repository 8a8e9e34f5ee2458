"""End-to-end benchmark on devbench through `manage.py benchmark`: ingest the papers, import
the questions as a benchmark set, answer every question with every configuration (local
backend, in-process), print the portal's full report table and write its charts.

    .venv/bin/python bench/benchmark_devbench.py --small              # CI size: 4 questions, 2 papers
    .venv/bin/python bench/benchmark_devbench.py --charts docs/benchmarks   # full: the 24 held-out questions x 8 configs
    .venv/bin/python bench/benchmark_devbench.py --split calibration        # the half thresholds were chosen on

It works in its own SQLite database and files under var/bench-devbench/ (recreated each
time), so it never touches the portal's data. The report table is Markdown, ready for
docs/benchmarks.md. For a compact table, per-question lines or the auditor's threshold grid
over a database that is kept between runs, use bench/devbench.py: same metrics.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import _devbench_common as common

SMALL_SLICE = ("D03", "D04", "D05", "D09")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="4 questions of 4 categories over 2 papers")
    parser.add_argument("--configs", default="", help="comma-separated (default: all eight)")
    parser.add_argument("--charts", help="folder for rates.svg and latency.svg")
    parser.add_argument("--var", default=str(common.ROOT / "var" / "bench-devbench"))
    parser.add_argument("--split", default="test", choices=["test", "calibration"],
                        help="test: the devbench half no threshold was calibrated on (agent.local.calibration)")
    args = parser.parse_args()
    questions = common.load_questions()
    if args.small:
        questions = [q for q in questions if q["question_id"] in SMALL_SLICE]
        stems = sorted({d for q in questions for d in q["expected_doc_ids"]})
    else:
        stems = common.paper_stems()

    common.django_setup(Path(args.var), fresh=True)
    from django.core.management import call_command

    user, collection = common.collection_with_papers(stems)
    # The 4-question CI slice is a smoke test, not a measurement: it keeps every question in "test".
    common.benchmark_set(collection, user, questions, name="devbench", declare_splits=not args.small)
    started = time.perf_counter()
    call_command("benchmark", set_name="devbench", configs=args.configs, in_process=True, charts=args.charts,
                 split=args.split)
    print(f"answering: {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
