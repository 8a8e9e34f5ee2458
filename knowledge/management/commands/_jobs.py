"""Shared by the `ingest`, `reingest` and `demo_setup` commands: run or wait for IngestJobs
with a progress bar on the terminal."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from typing import TextIO

from knowledge.models import IngestJob


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = int(width * done / total) if total else width
    return "[" + "#" * filled + "." * (width - filled) + f"] {done}/{total}"


def finish_jobs(job_ids: Iterable[int], *, inline: bool, timeout: float, out: TextIO | None = None) -> dict[int, IngestJob]:
    """Run the jobs here (inline) or wait for workers to finish them; returns the final rows.

    Inline runs the very same job code as the worker; a worker that later receives the
    queued task finds the job final and does nothing (the claim is a conditional UPDATE).
    """
    from knowledge.ingest import job_run

    ids = list(job_ids)
    out = out or sys.stdout
    show = out.isatty() if hasattr(out, "isatty") else False
    total = len(ids)
    if inline:
        for n, job_id in enumerate(ids, start=1):
            job_run(job_id=job_id)
            if show:
                out.write("\r" + _bar(n, total))
                out.flush()
    else:
        deadline = time.monotonic() + timeout
        while True:
            done = IngestJob.objects.filter(pk__in=ids, status__in=IngestJob.FINAL).count()
            if show:
                out.write("\r" + _bar(done, total))
                out.flush()
            if done == total or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    if show:
        out.write("\n")
    return IngestJob.objects.select_related("document").in_bulk(ids)
