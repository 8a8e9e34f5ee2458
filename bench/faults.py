"""Longer fault runs than CI: kill -9 the worker 20 times mid-ingestion and mid-answer, restart
Redis and PostgreSQL under a stream of submissions; figures go to docs/reliability.md.

    .venv/bin/python bench/faults.py                  # 20 trials each, Redis + PostgreSQL
    .venv/bin/python bench/faults.py --trials 5       # what CI runs

It runs the fault tests (tests/test_faults.py, tests/test_redis_restart.py,
tests/test_broker_redelivery.py) with more trials and the PostgreSQL restart switched on
(it restarts this machine's PostgreSQL server), then prints the figures they recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--database", default="postgres://postgres@127.0.0.1:5432/grounded_faults")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--no-postgres-restart", action="store_true")
    args = parser.parse_args()

    report = Path(tempfile.mkdtemp()) / "faults.jsonl"
    env = {
        **os.environ, "PORTAL_DEBUG": "1", "PORTAL_DATABASE_URL": args.database, "PORTAL_REDIS_URL": args.redis,
        "GROUNDED_FAULT_TRIALS": str(args.trials), "GROUNDED_FAULT_REPORT": str(report),
        "GROUNDED_FAULT_RESTART_POSTGRES": "0" if args.no_postgres_restart else "1",
        "GROUNDED_TEST_DB_SUFFIX": "faults",
    }
    dbname = args.database.rsplit("/", 1)[1]
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-q", "-c", f"CREATE DATABASE {dbname}"],
                   stderr=subprocess.DEVNULL)
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "tests/test_faults.py",
         "tests/test_redis_restart.py", "tests/test_broker_redelivery.py"],
        cwd=ROOT, env=env,
    )
    figures = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else []
    print(json.dumps({"pytest_exit": result.returncode, "wall_s": round(time.monotonic() - started),
                      "figures": figures}, indent=2))
    sys.exit(result.returncode)


if __name__ == "__main__":
    main()
