"""End-to-end benchmark on devbench: ingest the papers, import the questions, answer every
question with every configuration (local backend, in-process), print the report table
and write the charts.

    .venv/bin/python bench/benchmark_devbench.py --small              # CI size: 4 questions, 2 papers
    .venv/bin/python bench/benchmark_devbench.py --charts docs/benchmarks   # full: 48 questions x 8 configs

It works in its own SQLite database and files under var/bench-devbench/ (recreated each
time), so it never touches the portal's data. The report table is Markdown, ready for
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("GROUNDED_SHARED_DATA", ROOT.parent / "shared" / "data"))
SMALL_SLICE = ("D03", "D04", "D05", "D09")


def _setup(var_dir: Path) -> None:
    if var_dir.exists():
        shutil.rmtree(var_dir)
    var_dir.mkdir(parents=True)
    os.environ["PORTAL_VAR_DIR"] = str(var_dir)
    os.environ.pop("PORTAL_DATABASE_URL", None)
    os.environ.setdefault("PORTAL_DEBUG", "1")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
    os.environ["PORTAL_LLM_BACKEND"] = "local"
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="4 questions of 4 categories over 2 papers")
    parser.add_argument("--configs", default="", help="comma-separated (default: all eight)")
    parser.add_argument("--charts", help="folder for rates.svg and latency.svg")
    parser.add_argument("--var", default=str(ROOT / "var" / "bench-devbench"))
    args = parser.parse_args()
    questions = json.loads((SHARED / "devbench" / "questions.json").read_text())
    if args.small:
        questions = [q for q in questions if q["question_id"] in SMALL_SLICE]
    stems = sorted({d for q in questions for d in q["expected_doc_ids"]})
    if not args.small:
        # Every paper, including the distractor that no question expects.
        stems = sorted(p.stem for p in (SHARED / "papers").glob("*.pdf"))

    _setup(Path(args.var))
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    from knowledge import services
    from knowledge.ingest import job_run

    user = get_user_model().objects.create_user("bench", password="bench-bench-bench")
    collection = services.collection_create(name="devbench", user=user)
    started = time.perf_counter()
    for stem in stems:
        data = (SHARED / "papers" / f"{stem}.pdf").read_bytes()
        document, _ = services.document_upload(
            collection=collection, user=user, uploaded_file=SimpleUploadedFile(f"{stem}.pdf", data)
        )
        job = job_run(job_id=document.jobs.latest("created_at").pk)
        print(f"ingested {stem}: {job.status if job else '?'} {job.error if job else ''}", flush=True)
    print(f"ingestion of {len(stems)} papers: {time.perf_counter() - started:.0f} s", flush=True)

    questions_file = Path(args.var) / "questions.json"
    questions_file.write_text(json.dumps(questions))
    call_command("import_benchmark", str(questions_file), collection=collection.slug, name="devbench")
    started = time.perf_counter()
    call_command("benchmark", set_name="devbench", configs=args.configs, in_process=True, charts=args.charts)
    print(f"answering: {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
