"""HTML views for benchmark sets, benchmark runs and their reports, and the review queue.

Thin: lookups through knowledge.selectors.collection_get (an outsider gets 404, a member
below the needed role 403), writes through agent.benchmark.service and agent.review.services.
Roles: any member reads benchmark reports; editors import sets and start runs;
reviewers (and above) grade answers.
"""

from __future__ import annotations

import csv
import json

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.text import slugify
from django.views.decorators.http import require_POST

from agent import benchmark as bm
from agent import charts
from agent.benchmark import service as sb
from agent.configs import CONFIG_NAMES
from agent.models import BenchmarkSet, Citation, Review, Run
from agent.review import services as review_services
from agent.views_citations import cited_html
from knowledge import selectors as ks
from knowledge.models import Role

# Largest benchmark file accepted through the web form (devbench is about 60 kB).
MAX_IMPORT_BYTES = 5 * 1024 * 1024


def _error_text(exc: ValidationError) -> str:
    return " ".join(exc.messages)


def _set_for(request: HttpRequest, slug: str, set_id: int, minimum: Role = Role.VIEWER) -> tuple[BenchmarkSet, Role]:
    collection, role = ks.collection_get(user=request.user, slug=slug, minimum=minimum)
    bset = BenchmarkSet.objects.filter(pk=set_id, collection=collection).first()
    if bset is None:
        raise Http404("No such benchmark set.")
    return bset, role


# ---------------------------------------------------------------------------
# Benchmark sets
# ---------------------------------------------------------------------------


@login_required
def benchmark_list(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = ks.collection_get(user=request.user, slug=slug)
    sets = collection.benchmark_sets.all()
    return render(request, "agent/benchmark_list.html", {
        "collection": collection,
        "role": role,
        "sets": sets,
        "can_edit": ks.role_at_least(role, Role.EDITOR),
        "can_review": ks.role_at_least(role, Role.REVIEWER),
    })


@login_required
@require_POST
def benchmark_import(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = ks.collection_get(user=request.user, slug=slug, minimum=Role.EDITOR)
    upload = request.FILES.get("file")
    if upload is None:
        messages.error(request, "Choose a benchmark JSON file.")
        return redirect("agent:benchmark_list", slug=slug)
    if upload.size > MAX_IMPORT_BYTES:
        messages.error(request, f"The file is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB.")
        return redirect("agent:benchmark_list", slug=slug)
    try:
        text = upload.read().decode("utf-8-sig")
    except UnicodeDecodeError:
        messages.error(request, "The file is not UTF-8 text.")
        return redirect("agent:benchmark_list", slug=slug)
    name = request.POST.get("name", "").strip() or upload.name.rsplit(".", 1)[0]
    try:
        bset, warnings = sb.benchmark_import(
            collection=collection, user=request.user, name=name, text=text,
            description=request.POST.get("description", ""),
            allow_unknown_documents=request.POST.get("allow_unknown_documents") == "on",
        )
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
        return redirect("agent:benchmark_list", slug=slug)
    for warning in warnings:
        messages.warning(request, warning)
    messages.success(request, f"Imported {bset.questions.count()} questions into {bset.name}.")
    return redirect("agent:benchmark_set", slug=slug, set_id=bset.pk)


# Ticked on the start form: the comparison that matters (the loop against single-pass hybrid
# retrieval). All eight made 11 questions into 88 runs; the others are one click away.
DEFAULT_BENCHMARK_CONFIGS = ("hybrid", "agentic")


@login_required
def benchmark_set(request: HttpRequest, slug: str, set_id: int) -> HttpResponse:
    bset, role = _set_for(request, slug, set_id)
    questions = list(bset.questions.all())
    splits = sorted({q.split for q in questions})
    categories: dict[str, int] = {}
    split_counts: dict[str, int] = {}
    for q in questions:
        categories[q.category] = categories.get(q.category, 0) + 1
        split_counts[q.split] = split_counts.get(q.split, 0) + 1
    default_split = bm.DEFAULT_SPLIT if bm.DEFAULT_SPLIT in split_counts else (splits[0] if splits else "")
    checked = len([c for c in CONFIG_NAMES if c in DEFAULT_BENCHMARK_CONFIGS])
    return render(request, "agent/benchmark_set.html", {
        "collection": bset.collection,
        "bset": bset,
        "questions": questions,
        "splits": splits,
        "categories": sorted(categories.items()),
        "configs": [(c, c in DEFAULT_BENCHMARK_CONFIGS) for c in CONFIG_NAMES],
        "default_split": default_split,
        "split_options": [(split, split_counts[split]) for split in splits],
        "run_count": split_counts.get(default_split, 0) * checked,
        "question_count": split_counts.get(default_split, 0),
        "config_count": checked,
        "labels": sb.benchmark_labels(benchmark_set=bset),
        "can_edit": ks.role_at_least(role, Role.EDITOR),
    })


@login_required
@require_POST
def benchmark_start(request: HttpRequest, slug: str, set_id: int) -> HttpResponse:
    bset, _ = _set_for(request, slug, set_id, minimum=Role.EDITOR)
    try:
        label, runs = sb.benchmark_start(
            benchmark_set=bset, user=request.user, configs=request.POST.getlist("configs"),
            split=request.POST.get("split", bm.DEFAULT_SPLIT),
            label=request.POST.get("label", ""),
        )
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
        return redirect("agent:benchmark_set", slug=slug, set_id=set_id)
    messages.success(request, f"Started {len(runs)} runs.")
    return redirect("agent:benchmark_report", slug=slug, set_id=set_id, label=label)


# ---------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------


def _report_for(request: HttpRequest, slug: str, set_id: int, labels: list[str]):
    bset, role = _set_for(request, slug, set_id)
    brs = list(sb.benchmark_runs(benchmark_set=bset, labels=labels))
    if not brs:
        raise Http404("No such benchmark run.")
    return bset, role, brs, sb.benchmark_report(brs=brs)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f} ms"


def _display_row(m: bm.Metrics) -> dict:
    """One table row, formatted; the column order matches _benchmark_metrics_head.html."""
    if m.accuracy is None:
        accuracy = {"text": f"pending ({m.pending_runs} ungraded)", "pending": True}
    else:
        accuracy = {"text": f"{_pct(m.accuracy)} ({m.graded_runs} graded)"}
    cells = [{"text": str(m.runs)}, accuracy]
    cells += [{"text": _pct(v)} for v in (
        m.proxy_accuracy, m.answered, m.partial, m.refused, m.debunked, m.failed, m.hallucination,
        m.false_premise_debunked, m.wrongful_refusal, m.citation_precision, m.citation_coverage, m.evidence_recall,
    )]
    cells += [{"text": _ms(m.latency_p50_ms)}, {"text": _ms(m.latency_p95_ms)}, {"text": str(m.llm_calls)},
              {"text": f"{m.tokens:,}"}, {"text": f"${m.cost_usd:.4f}"}]
    name = f"{m.category} · {m.config_name}" if m.category else m.config_name
    return {"name": name, "cells": cells}


def _render_report(request: HttpRequest, bset: BenchmarkSet, labels: list[str], brs, report: bm.Report) -> HttpResponse:
    progress = sb.benchmark_progress(brs=brs)
    overall = [report.overall[c] for c in report.configs]
    return render(request, "agent/benchmark_report.html", {
        "collection": bset.collection,
        "bset": bset,
        "labels": labels,
        "label": labels[0] if len(labels) == 1 else "",
        "progress": progress,
        "report": report,
        "overall": overall,
        "overall_rows": [_display_row(m) for m in overall],
        # Grouped by category, so the configurations of one category sit together.
        "category_rows": [
            _display_row(report.by_category[(c, cat)])
            for cat in report.categories for c in report.configs if (c, cat) in report.by_category
        ],
        "human_graded": any(m.accuracy is not None for m in overall),
        "charts": charts.report_charts(report) if overall else {},
    })


@login_required
def benchmark_report(request: HttpRequest, slug: str, set_id: int, label: str) -> HttpResponse:
    bset, _, brs, report = _report_for(request, slug, set_id, [label])
    return _render_report(request, bset, [label], brs, report)


@login_required
def benchmark_compare(request: HttpRequest, slug: str, set_id: int) -> HttpResponse:
    """Configurations of several benchmark runs side by side (labels chosen on the set page)."""
    _set_for(request, slug, set_id)  # outsiders get 404 before anything else is said
    labels = [x for x in request.GET.getlist("label") if x]
    if not labels:
        messages.error(request, "Choose the benchmark runs to compare.")
        return redirect("agent:benchmark_set", slug=slug, set_id=set_id)
    bset, _, brs, report = _report_for(request, slug, set_id, labels)
    return _render_report(request, bset, labels, brs, report)


@login_required
def benchmark_progress(request: HttpRequest, slug: str, set_id: int, label: str) -> JsonResponse:
    bset, _ = _set_for(request, slug, set_id)
    brs = list(sb.benchmark_runs(benchmark_set=bset, labels=[label]))
    if not brs:
        raise Http404("No such benchmark run.")
    p = sb.benchmark_progress(brs=brs)
    return JsonResponse({"done": p.done, "total": p.total, "percent": p.percent, "finished": p.finished})


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP "CSV injection").
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value: object) -> object:
    """Text that a spreadsheet would evaluate gets a leading quote; numbers stay numbers."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


@login_required
def benchmark_export(request: HttpRequest, slug: str, set_id: int, label: str, fmt: str) -> HttpResponse:
    if fmt not in ("csv", "json"):
        raise Http404("Export as .csv or .json.")
    bset, _, _brs, report = _report_for(request, slug, set_id, [label])
    filename = f"benchmark-{slugify(bset.name)}-{label}"
    if fmt == "json":
        data = {"set": bset.name, "label": label, "human_accuracy_note": "accuracy is human-graded; "
                "proxy_accuracy is automatic (required spans covered by the answer's citations)", **report.as_dict()}
        response = HttpResponse(json.dumps(data, indent=2, default=str), content_type="application/json")
    else:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        csv.writer(response).writerows([[_csv_cell(v) for v in row] for row in bm.report_csv_rows(report)])
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response


# ---------------------------------------------------------------------------
# Review queue
# ---------------------------------------------------------------------------


def _blind(request: HttpRequest) -> bool:
    return request.GET.get("blind", "1") != "0"


def _review_context(run: Run, *, blind: bool) -> dict:
    citations = list(Citation.objects.filter(run=run).select_related("chunk"))
    return {
        "run": run,
        "blind": blind,
        "question": run.benchmark_question,
        "citations": [
            {"c": c, "html": cited_html(c)} for c in citations
        ],
    }


@login_required
def review_queue(request: HttpRequest, slug: str) -> HttpResponse:
    """The next run awaiting this reviewer's grade, with the question's reference material."""
    collection, _ = ks.collection_get(user=request.user, slug=slug, minimum=Role.REVIEWER)
    blind = _blind(request)
    queue = review_services.review_queue(user=request.user, collection=collection, blind=blind)
    # Where web search exists, a reviewer can take only the answers that searched the web.
    web_only = bool(settings.WEB_SEARCH_PROVIDER) and request.GET.get("web") == "1"
    if web_only:
        queue = [run for run in queue if run.used_web]
    context = {
        "web_search": bool(settings.WEB_SEARCH_PROVIDER),
        "web_only": web_only,
        "collection": collection,
        "remaining": len(queue),
        "blind": blind,
        "grades": Review.Grade.choices,
        "reviewed": Review.objects.filter(run__collection=collection, reviewer=request.user).count(),
    }
    if queue:
        context.update(_review_context(queue[0], blind=blind))
    return render(request, "agent/review_queue.html", context)


def _yes_no(value: str | None) -> bool | None:
    return {"yes": True, "no": False}.get(value or "")


@login_required
@require_POST
def review_submit(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    collection, _ = ks.collection_get(user=request.user, slug=slug, minimum=Role.REVIEWER)
    run = Run.objects.filter(pk=run_id, collection=collection).first()
    if run is None:
        raise Http404("No such run.")
    try:
        review_services.review_create(
            run=run, reviewer=request.user, grade=request.POST.get("grade", ""),
            citations_support=_yes_no(request.POST.get("citations_support")),
            refusal_appropriate=_yes_no(request.POST.get("refusal_appropriate")),
            note=request.POST.get("note", ""),
        )
    except ValidationError as exc:
        messages.error(request, _error_text(exc))
    else:
        messages.success(request, "Review saved.")
    query = "?blind=0" if request.POST.get("blind") == "0" else ""
    return redirect(reverse("agent:review_queue", kwargs={"slug": slug}) + query)
