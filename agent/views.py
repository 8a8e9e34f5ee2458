"""HTML views for asking, watching a run live and the question history (citations: agent.views_citations).

Thin: every lookup goes through agent.selectors / knowledge.selectors (outsiders get 404),
every write through agent.services.run_create.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from agent import selectors
from agent.configs import config_label, user_choices
from agent.models import OUTCOME_CHOICES, Run, RunStep
from agent.presentation import (
    Passage,
    answer_html,
    audit_chunk_ids,
    reader_text,
    removed_sentences,
    stage_view,
)
from agent.steps import RetrieveStep
from agent.types import Outcome
from knowledge import selectors as knowledge_selectors
from knowledge.models import Chunk


def ask_context(*, collection=None, collections=None, question: str = "", config_name: str = "",
                user=None) -> dict:
    from agent.services import web_preference_get
    from agent.web.search import web_search_available

    web = web_search_available() and user is not None and user.is_authenticated
    return {
        # The "may search the web" box exists only where a provider is configured; its
        # default is the asker's last choice.
        "web_search": web,
        "may_search_web": web and web_preference_get(user=user),
        "ask_collection": collection,
        "ask_collections": collections,
        "configs": user_choices(settings.DEFAULT_RUN_CONFIG),
        "configs_names": [name for name, _ in user_choices(settings.DEFAULT_RUN_CONFIG)],
        "selected_config": config_name or settings.DEFAULT_RUN_CONFIG,
        "question": question,
        # The offline backend quotes; the form says so, so nobody expects a summary from it.
        "offline_backend": settings.LLM_BACKEND == "local",
        "model": model_label({"backend": settings.LLM_BACKEND, "model": settings.LLM_MODEL}),
    }


def _scope(request: HttpRequest) -> list[int]:
    """The document ids a form limits the question to (`document`, repeated; a rephrasing
    picked after CLARIFY carries its paper's); anything but a number is a ValidationError."""
    try:
        return [int(v) for v in request.POST.getlist("document") if v]
    except ValueError:
        raise ValidationError("A document to ask must be given by its id.", code="invalid_document") from None


def _create_run(request: HttpRequest, collection, question: str, config_name: str, extra=(), thread=None,
                *, web_allowed: bool = False, documents=None) -> Run:
    from agent.services import run_create, web_preference_set
    from agent.web.search import web_search_available

    if request.method == "POST" and web_search_available() and "web_choice" in request.POST:
        web_allowed = request.POST.get("may_search_web") == "on"
        web_preference_set(user=request.user, may_search_web=web_allowed)
    return run_create(collection=collection, user=request.user, question=question, config_name=config_name,
                      extra_collections=extra, thread=thread, web_allowed=web_allowed,
                      documents=_scope(request) if documents is None else documents)


@login_required
def ask(request: HttpRequest) -> HttpResponse:
    """The global ask page: pick one collection, several, or all of yours; type a question.

    A chosen collection the user cannot read is a 404 (as everywhere), never silently skipped.
    """
    collections = selectors.askable_collections(user=request.user)
    question = request.POST.get("question", "")
    config_name = request.POST.get("config", "")
    chosen = [s for s in request.POST.getlist("collection") if s] or [request.GET.get("collection", "")]
    everything = request.POST.get("all_collections") == "1"
    if request.method == "POST" and not any(chosen) and not everything:
        messages.error(request, "Choose a collection to ask.")
    elif request.method == "POST":
        asked = selectors.ask_collections_get(user=request.user, slugs=chosen, everything=everything)
        try:
            if not asked:
                raise ValidationError("You are not in any collection yet.")
            run = _create_run(request, asked[0], question, config_name, extra=asked[1:])
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            return redirect("agent:run_detail", pk=run.pk)
    context = ask_context(collections=collections, question=question, config_name=config_name, user=request.user)
    context["chosen_slugs"] = chosen
    context["all_chosen"] = everything
    return render(request, "agent/ask.html", context, status=400 if request.method == "POST" else 200)


@login_required
@require_POST
def collection_ask(request: HttpRequest, slug: str) -> HttpResponse:
    """The ask form on the collection page: create the run and go to its page at once."""
    collection, _ = knowledge_selectors.collection_get(user=request.user, slug=slug)
    try:
        run = _create_run(request, collection, request.POST.get("question", ""), request.POST.get("config", ""))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("knowledge:collection_detail", slug=slug)
    return redirect("agent:run_detail", pk=run.pk)


def _closest_passages(run: Run, limit: int = 3) -> list[Chunk]:
    """The best chunks the run looked at, in its order; shown on a refusal, each with its
    `shown_text`: the words a line break cut written whole as its document writes them."""
    from knowledge.text import line_broken
    from knowledge.vocabulary import document_vocabulary

    ids = list(run.context_chunk_ids)
    if not ids:
        for row in run.steps.filter(kind=RunStep.Kind.RETRIEVE).order_by("ordinal"):
            step = row.record()
            if isinstance(step, RetrieveStep):
                ids += step.chunk_ids()
    ids = list(dict.fromkeys(ids))[:limit]
    chunks = Chunk.objects.filter(pk__in=ids, document__collection=run.collection).select_related("document")
    by_id = {c.pk: c for c in chunks}
    closest = [by_id[i] for i in ids if i in by_id]
    for chunk in closest:
        chunk.shown_text = (reader_text(chunk.text, document_vocabulary(chunk.document_id))  # type: ignore[attr-defined]
                            if line_broken(chunk.text) else chunk.text)
    return closest


def _audit_passages(run: Run, records) -> dict[int, Passage]:
    """The chunks the run's audits quote, by id, as the audit stage cites them (a chunk of a
    collection the run did not search, or deleted since, is left out: its quote shows alone)."""
    ids = set().union(*(audit_chunk_ids(r) for r in records))
    if not ids:
        return {}
    rows = Chunk.objects.filter(pk__in=ids, document__collection__in=run.searched_collections).values_list(
        "pk", "document_id", "document__title", "page_start")
    return {pk: Passage(document_id=doc, title=title, page=page) for pk, doc, title, page in rows}


def _fragment_context(run: Run) -> dict:
    from knowledge.vocabulary import document_vocabulary

    steps = list(run.steps.order_by("ordinal"))
    records = [s.record() for s in steps]
    passages = _audit_passages(run, records)
    stages = [
        stage_view(s.kind, record, attempt=s.attempt, duration_ms=s.duration_ms, passages=passages,
                   vocabulary=document_vocabulary)
        for s, record in zip(steps, records, strict=True)
    ]
    citations = list(run.citations.select_related("chunk", "collection").order_by("marker"))
    panel_url = reverse("agent:citation_panel", kwargs={"pk": run.pk, "marker": 0})
    web_markers = [c.marker for c in citations if c.source_url]
    context = {
        "run": run,
        "stages": stages,
        "citations": citations,
        "web_markers": web_markers,
        "answer_html": answer_html(run.answer, markers={c.marker for c in citations}, panel_url=panel_url,
                                   web_markers=set(web_markers)),
        "overdue": _overdue_context(run),
        "config_label": config_label(run.config_name, settings.DEFAULT_RUN_CONFIG),
        "searched_collections": [run.collection, *run.extra_collections.order_by("name")],
        "scope_documents": list(run.documents.order_by("title")),
        "model": model_label(run.config),
        "queue_place": _queue_place(run),
    }
    if run.is_final and run.status == Run.Status.DONE:
        last = {s.kind: s for s in steps}
        generate, verify = last.get("generate"), last.get("verify")
        context["removed"] = removed_sentences(run.answer, generate.record() if generate else None,
                                               verify.record() if verify else None)
    if run.outcome == Outcome.REFUSAL:
        context["searched"] = list(dict.fromkeys(q for s in stages if s.kind == "retrieve" for q in s.queries))
        context["closest"] = _closest_passages(run)
        # The last audit is the one that gave up; earlier ones repeat what it says.
        audits = [s for s in stages if s.kind == "audit"]
        context["missing"] = list(dict.fromkeys(audits[-1].missing)) if audits else []
        context["audit_reason"] = audits[-1].reason if audits else ""
    return context


def model_label(config: dict) -> str:
    """Who writes the answers: the model's name, or the offline extractive backend."""
    backend = config.get("backend") or settings.LLM_BACKEND
    if backend == "local":
        return "offline extractive backend (no language model)"
    where = "embedded llama-server" if backend == "embedded" else "OpenAI-compatible API"
    return f"{config.get('model') or settings.LLM_MODEL} ({where})"


def _queue_place(run: Run) -> int | None:
    """1 when this queued run is next: runs answer one at a time in creation order
    (the answer queue has one worker per model server), so the runs ahead are the running
    ones and the queued ones created before it."""
    if run.status != Run.Status.QUEUED:
        return None
    ahead = Run.objects.filter(Q(status=Run.Status.RUNNING) | Q(status=Run.Status.QUEUED, created_at__lt=run.created_at)
                               | Q(status=Run.Status.QUEUED, created_at=run.created_at, pk__lt=run.pk))
    return ahead.count() + 1


def _cursor(run: Run) -> str:
    """Changes whenever the run row or its steps change (steps are only ever appended), when
    the run passes its time limit, so the page shows the warning without a reload, and when
    a queued run moves up the queue."""
    from agent.sweeper import run_overdue_seconds

    last_step = run.steps.order_by("-ordinal").values_list("ordinal", flat=True).first()
    late = ":late" if run_overdue_seconds(run) else ""
    # A queued run's place moves when the runs ahead finish, not when its own row changes.
    place = _queue_place(run)
    queued = f":q{place}" if place else ""
    return f"{run.updated_at.timestamp():.6f}:{last_step if last_step is not None else -1}{late}{queued}"


def _overdue_context(run: Run) -> dict | None:
    """The run page's warning when a run has existed for longer than an answer may take."""
    from agent.sweeper import run_overdue_seconds, sweep_health

    if not run_overdue_seconds(run):
        return None
    health = sweep_health()
    return {"limit": settings.ANSWER_TIME_LIMIT, "sweeper_late": health.late, "last_sweep_age": health.age_seconds}


@login_required
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = selectors.run_get(user=request.user, pk=pk)
    context = _fragment_context(run)
    context["cursor"] = _cursor(run)
    return render(request, "agent/run_detail.html", context)


@login_required
@require_GET
def run_status(request: HttpRequest, pk: int) -> JsonResponse:
    """The one polling endpoint of the run page: rendered fragments plus an `updated` cursor.

    When the client's cursor (`?since=`) is current nothing is rendered, so an idle poll is
    two small queries.
    """
    run = selectors.run_get(user=request.user, pk=pk)
    cursor = _cursor(run)
    payload: dict = {"updated": cursor, "final": run.is_final, "status": run.status, "fragments": {}}
    if request.GET.get("since") != cursor:
        context = _fragment_context(run)
        payload["fragments"] = {
            "summary": render_to_string("agent/_run_summary.html", context, request=request),
            "stages": render_to_string("agent/_stages.html", context, request=request),
            "answer": render_to_string("agent/_answer.html", context, request=request),
        }
    return JsonResponse(payload)



@login_required
@require_POST
def run_retry(request: HttpRequest, pk: int) -> HttpResponse:
    """Ask a failed run's question again with the same configuration, as a new run."""
    run = selectors.run_get(user=request.user, pk=pk)
    if run.status != Run.Status.FAILED:
        raise Http404("Only a failed run can be retried.")
    try:
        # A retried follow-up stays in its thread and is rewritten again.
        new_run = _create_run(request, run.collection, run.question, run.config_name,
                              extra=list(run.extra_collections.all()), thread=run.thread,
                              web_allowed=run.web_allowed, documents=list(run.documents.values_list("pk", flat=True)))
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return redirect("agent:run_detail", pk=run.pk)
    return redirect("agent:run_detail", pk=new_run.pk)


HISTORY_FILTERS = [("", "All"), *OUTCOME_CHOICES, ("FAILED", "Failed")]


@login_required
def run_history(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = knowledge_selectors.collection_get(user=request.user, slug=slug)
    outcome = request.GET.get("outcome", "")
    q = request.GET.get("q", "").strip()[:200]
    runs = selectors.run_list(user=request.user, collection=collection, outcome=outcome, q=q)
    # Reviewers look for the answers that rest on the web (where web search exists).
    web = request.GET.get("web", "") if settings.WEB_SEARCH_PROVIDER else ""
    if web in ("1", "0"):
        runs = runs.filter(used_web=web == "1")
    threads = selectors.thread_list(user=request.user, collection=collection).annotate(
        turn_count=Count("turns"))[:50]
    return render(
        request,
        "agent/history.html",
        {"collection": collection, "runs": runs[:200], "outcome": outcome, "q": q, "filters": HISTORY_FILTERS,
         "threads": threads, "web_search": bool(settings.WEB_SEARCH_PROVIDER), "web": web},
    )


@login_required
@require_GET
def operations_status(request: HttpRequest) -> HttpResponse:
    """Staff only (others get 404): is the sweeper alive, and what work is waiting or late."""
    from agent.sweeper import LATE_AFTER_INTERVALS, sweep_health, work_in_flight

    if not request.user.is_staff:
        raise Http404
    return render(request, "agent/operations_status.html", {
        "health": sweep_health(), "work": work_in_flight(), "late_after": LATE_AFTER_INTERVALS,
        "answer_limit": settings.ANSWER_TIME_LIMIT, "ingest_limit": settings.INGEST_TIME_LIMIT,
    })
