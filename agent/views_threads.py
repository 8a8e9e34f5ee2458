"""HTML views for follow-up questions, threads and exports (Markdown, BibTeX, RIS).

Lookups go through agent.selectors (outsiders get 404); writes through
agent.services.follow_up_create. The export builders here are shared with agent.api.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from agent import exports, selectors
from agent.models import Run, Thread

EXPORT_TYPES = {
    "md": "text/markdown; charset=utf-8",
    "bib": "application/x-bibtex; charset=utf-8",
    "ris": "application/x-research-info-systems; charset=utf-8",
}


def exported_run(run: Run, url: str = "") -> exports.ExportedRun:
    citations = run.citations.select_related("collection").order_by("marker")
    return exports.ExportedRun(
        question=run.question, answer=run.answer if run.is_final else "(not answered yet)", outcome=run.outcome,
        searched_as=run.search_question, missing_evidence=run.missing_evidence, url=url,
        citations=[exports.CitedPassage(marker=c.marker, document_title=c.document_title, page=c.page,
                                        quote=c.quote or c.chunk_text[:300],
                                        collection=c.collection.name if c.collection else "",
                                        verified=c.verified) for c in citations],
    )


def cited_papers(runs: list[Run]) -> list[exports.Paper]:
    """The distinct documents the runs cite, in order of first citation, with their metadata."""
    papers: dict[object, exports.Paper] = {}
    for run in runs:
        for c in run.citations.select_related("chunk__document").order_by("marker"):
            document = c.chunk.document if c.chunk else None
            key = document.pk if document else c.document_title
            if key in papers:
                continue
            meta = document.metadata if document else {}
            authors = meta.get("authors") or []
            papers[key] = exports.Paper(
                title=(document.title if document else c.document_title) or c.document_title,
                authors=[authors] if isinstance(authors, str) else [str(a) for a in authors],
                year=meta.get("year") if isinstance(meta.get("year"), int) else None,
                arxiv_id=str(meta.get("arxiv_id") or ""),
            )
    return list(papers.values())


def run_export_text(run: Run, fmt: str, url: str = "") -> str:
    if fmt == "md":
        return exports.run_markdown(exported_run(run, url))
    papers = cited_papers([run])
    return exports.bibtex(papers) if fmt == "bib" else exports.ris(papers)


def thread_export_text(thread: Thread, url: str = "") -> str:
    turns = list(selectors.thread_turns(thread))
    return exports.thread_markdown(thread.title, [exported_run(r) for r in turns], url)


def download(text: str, fmt: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type=EXPORT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{filename}.{fmt}"'
    return response


@login_required
@require_POST
def run_follow_up(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask a follow-up of a run: a new run in its thread, answered like any other."""
    from agent.services import follow_up_create

    run = selectors.run_get(user=request.user, pk=pk)
    try:
        new_run = follow_up_create(run=run, user=request.user, question=request.POST.get("question", ""))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("agent:run_detail", pk=run.pk)
    return redirect("agent:run_detail", pk=new_run.pk)


@login_required
@require_GET
def thread_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """Every turn of a thread with its answer and sources, and the follow-up box."""
    from agent.views import _fragment_context

    thread = selectors.thread_get(user=request.user, pk=pk)
    turns = [_fragment_context(run) for run in selectors.thread_turns(thread)]
    return render(request, "agent/thread_detail.html", {"thread": thread, "turns": turns,
                                                        "last_run": turns[-1]["run"] if turns else None})


@login_required
@require_GET
def run_export(request: HttpRequest, pk: int, fmt: str) -> HttpResponse:
    """The run as Markdown (md), or the papers it cites as BibTeX (bib) or RIS (ris)."""
    if fmt not in EXPORT_TYPES:
        raise Http404("No such export format.")
    run = selectors.run_get(user=request.user, pk=pk)
    url = request.build_absolute_uri(reverse("agent:run_detail", kwargs={"pk": run.pk}))
    name = f"run-{run.pk}" if fmt == "md" else f"run-{run.pk}-sources"
    return download(run_export_text(run, fmt, url), fmt, name)


@login_required
@require_GET
def thread_export(request: HttpRequest, pk: int) -> HttpResponse:
    thread = selectors.thread_get(user=request.user, pk=pk)
    url = request.build_absolute_uri(reverse("agent:thread_detail", kwargs={"pk": thread.pk}))
    return download(thread_export_text(thread, url), "md", f"thread-{thread.pk}")
