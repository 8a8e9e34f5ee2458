"""manage.py benchmark --set NAME --configs agentic,hybrid --split test: run a benchmark and print its report.

Each question x configuration becomes an ordinary Run. By default the runs are queued for
the workers and the command returns; --wait follows them with a progress bar; --in-process
answers them here, one after the other, without a worker (CI, a laptop without Celery).
"""

from __future__ import annotations

import sys
import time

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count
from django.urls import reverse

from agent.benchmark import service as sb
from agent.configs import CONFIG_NAMES
from agent.models import BenchmarkSet, Run
from knowledge.models import Membership, Role

BAR_WIDTH = 30


def progress_line(done: int, total: int) -> str:
    filled = round(BAR_WIDTH * done / total) if total else BAR_WIDTH
    percent = round(100 * done / total) if total else 100
    return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} runs ({percent}%)"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def report_table(report) -> str:
    """The overall rows as a Markdown table (pasted as is into docs/benchmarks.md)."""
    head = ("configuration", "runs", "accuracy (human)", "proxy accuracy (auto)", "answered", "partial", "refused",
            "debunked", "failed", "hallucination", "FP debunked", "wrongful refusal", "cit. precision", "cit. coverage",
            "evidence recall", "p50 ms", "p95 ms", "LLM calls", "tokens", "cost $")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in report.configs:
        m = report.overall[c]
        accuracy = f"pending ({m.pending_runs})" if m.accuracy is None else f"{_pct(m.accuracy)} ({m.graded_runs})"
        cells = [c, str(m.runs), accuracy, _pct(m.proxy_accuracy), _pct(m.answered), _pct(m.partial), _pct(m.refused),
                 _pct(m.debunked), _pct(m.failed), _pct(m.hallucination), _pct(m.false_premise_debunked), _pct(m.wrongful_refusal),
                 _pct(m.citation_precision), _pct(m.citation_coverage), _pct(m.evidence_recall),
                 "n/a" if m.latency_p50_ms is None else f"{m.latency_p50_ms:.0f}",
                 "n/a" if m.latency_p95_ms is None else f"{m.latency_p95_ms:.0f}",
                 str(m.llm_calls), str(m.tokens), f"{m.cost_usd:.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def split_note(bset: BenchmarkSet, split: str) -> str:
    """Which questions these figures come from: a set with a calibration split (the local
    roles' thresholds were chosen on it, agent.local.calibration) is reported per split."""
    from agent.local.calibration import CALIBRATION

    counts = dict(bset.questions.values_list("split").annotate(n=Count("id")).values_list("split", "n"))
    others = ", ".join(f"{k} ({n})" for k, n in sorted(counts.items()) if k != split)
    if split == CALIBRATION:
        return (f"Split {split!r} ({counts.get(split, 0)} questions) is the one thresholds were calibrated on: "
                "its figures are in-sample.")
    if CALIBRATION in counts:
        return (f"Split {split!r} ({counts.get(split, 0)} questions) was held out from calibration; "
                f"other splits: {others} (run them with --split).")
    return f"Split {split!r}: {counts.get(split, 0)} questions" + (f"; other splits: {others}." if others else ".")


class Command(BaseCommand):
    help = "Start a benchmark run (every question of a split x every chosen configuration) and report on it."

    def add_arguments(self, parser):
        parser.add_argument("--set", required=True, dest="set_name", help="benchmark set name")
        parser.add_argument("--configs", default="", help="comma-separated configurations (default: all)")
        parser.add_argument("--split", default="test")
        parser.add_argument("--collection", help="collection slug, when several collections have a set of that name")
        parser.add_argument("--label", default="", help="label grouping the runs (default: a timestamp)")
        parser.add_argument("--user", help="username the runs belong to (default: the set's creator)")
        parser.add_argument("--wait", action="store_true", help="follow the queued runs with a progress bar")
        parser.add_argument("--in-process", action="store_true", help="answer the runs here, without a worker")
        parser.add_argument("--timeout", type=float, default=6 * 3600, help="seconds --wait waits at most")
        parser.add_argument("--charts", help="write the report's SVG charts into this folder")
        parser.add_argument("--report", metavar="LABEL", help="start nothing: print the report of an earlier run")

    def _set(self, opts) -> BenchmarkSet:
        sets = BenchmarkSet.objects.filter(name=opts["set_name"]).select_related("collection")
        if opts["collection"]:
            sets = sets.filter(collection__slug=opts["collection"])
        found = list(sets[:2])
        if not found:
            raise CommandError(f"No benchmark set called {opts['set_name']!r}.")
        if len(found) > 1:
            raise CommandError("Several collections have a set of that name: add --collection SLUG.")
        return found[0]

    def _user(self, opts, bset: BenchmarkSet):
        if opts["user"]:
            user = get_user_model().objects.filter(username=opts["user"]).first()
            if user is None:
                raise CommandError(f"No user called {opts['user']!r}.")
            return user
        if bset.created_by:
            return bset.created_by
        owner = Membership.objects.filter(collection=bset.collection, role=Role.OWNER).select_related("user").first()
        if owner is None:
            raise CommandError("The collection has no owner: give --user.")
        return owner.user

    def _bar(self, done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        # A carriage return redraws one line on a terminal; in a log each update is its own line.
        prefix = "\r" if sys.stdout.isatty() else ""
        self.stdout.write(prefix + progress_line(done, total), ending=end if prefix else "\n")
        self.stdout.flush()

    def handle(self, *args, **opts):
        bset = self._set(opts)
        if opts["report"]:
            brs = list(sb.benchmark_runs(benchmark_set=bset, labels=[opts["report"]]))
            if not brs:
                raise CommandError(f"The set has no benchmark run labelled {opts['report']!r}.")
            self._report(brs, opts)
            return
        configs = [c.strip() for c in opts["configs"].split(",") if c.strip()] or list(CONFIG_NAMES)
        user = self._user(opts, bset)
        try:
            label, runs = sb.benchmark_start(
                benchmark_set=bset, user=user, configs=configs, split=opts["split"], label=opts["label"],
                enqueue=not opts["in_process"],
            )
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        total = len(runs)
        self.stdout.write(f"Benchmark {label}: {total} runs ({', '.join(configs)}) on split {opts['split']}.")
        self.stdout.write(split_note(bset, opts["split"]))
        brs = list(sb.benchmark_runs(benchmark_set=bset, labels=[label]))
        if opts["in_process"]:
            self._bar(0, total)
            # Question by question, every configuration in turn: stopped half way, the
            # finished runs still compare all configurations on the same questions.
            order = {c: i for i, c in enumerate(configs)}
            runs = sorted(runs, key=lambda r: (r.benchmark_question_id, order.get(r.config_name, 0)))
            for n, run in enumerate(runs, 1):
                sb.run_execute_in_process(run)
                self._bar(n, total)
        elif opts["wait"]:
            deadline = time.monotonic() + opts["timeout"]
            last = -1
            while True:
                progress = sb.benchmark_progress(brs=brs)
                if progress.done != last:
                    self._bar(progress.done, progress.total)
                    last = progress.done
                if progress.finished:
                    break
                if time.monotonic() > deadline:
                    raise CommandError(f"Timed out with {progress.done}/{progress.total} runs finished.")
                time.sleep(1)
        else:
            self.stdout.write("Queued. Follow it on the report page, or run again with --wait.")
        self.stdout.write(reverse("agent:benchmark_report", args=[bset.collection.slug, bset.pk, label]))
        if opts["in_process"] or opts["wait"]:
            self._report(brs, opts)

    def _report(self, brs, opts) -> None:
        progress = sb.benchmark_progress(brs=brs)
        if not progress.finished:
            self.stdout.write(f"Only {progress.done}/{progress.total} runs are finished; the figures cover those.")
        failed = Run.objects.filter(benchmark_run__in=brs, status=Run.Status.FAILED).count()
        if failed:
            self.stderr.write(self.style.WARNING(f"{failed} runs failed."))
        report = sb.benchmark_report(brs=brs)
        self.stdout.write(split_note(brs[0].benchmark_set, brs[0].split))
        self.stdout.write(report_table(report))
        if opts["charts"]:
            self._write_charts(report, opts["charts"])

    def _write_charts(self, report, folder: str) -> None:
        from pathlib import Path

        from agent import charts

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        for name, svg in charts.report_charts(report).items():
            (out / f"{name}.svg").write_text(svg)
            self.stdout.write(f"wrote {out / f'{name}.svg'}")
