"""HTML views of a run's citations: the side panel, the PDF viewer at the cited sentence, and
adding a web citation's page to the collection.

Thin: every lookup goes through agent.selectors / knowledge.selectors (outsiders get 404).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST

from agent import selectors
from agent.models import Citation, Run
from agent.presentation import highlighted_html
from knowledge import selectors as knowledge_selectors


def _document_file_url(document_id: int | None, page: int) -> str:
    """The permission-checked file view at the cited page; empty when the document is gone."""
    if document_id is None:
        return ""
    try:
        return reverse("knowledge:document_file", kwargs={"pk": document_id}) + f"#page={page}"
    except NoReverseMatch:
        return ""



def cited_html(citation: Citation) -> SafeString:
    """The cited passage with its quote marked, its line-break words written whole as the
    document writes them (as the answer's quote is); a web page's text as fetched."""
    from knowledge.text import line_broken
    from knowledge.vocabulary import document_vocabulary

    cut = line_broken(citation.chunk_text)
    vocabulary = document_vocabulary(citation.chunk.document_id) if cut and citation.chunk is not None else None
    return highlighted_html(citation.chunk_text, citation.quote, citation.quote_start,
                            joined=not citation.source_url, vocabulary=vocabulary)


def _panel_context(citation: Citation) -> dict:
    chunk = citation.chunk
    return {
        "citation": citation,
        "section": chunk.section_title if chunk else "",
        "chunk_html": cited_html(citation),
        "file_url": _document_file_url(chunk.document_id if chunk else None, citation.page),
        "viewer_url": reverse("agent:citation_viewer", kwargs={"pk": citation.run_id, "marker": citation.marker})
        if chunk is not None and chunk.document.media_type == "application/pdf" else "",
    }


def _viewer_marks(request: HttpRequest, run: Run) -> list[dict]:
    """Every citation of the run the user may open, as the viewer's list of marks: label,
    page, boxes and the link that opens it (a text source opens in the text reader)."""
    from knowledge.views_documents import chunk_highlight, viewer_url

    readable: dict[int, bool] = {}
    marks = []
    for citation in run.citations.select_related("chunk__document").order_by("marker"):
        chunk = citation.chunk
        if chunk is None:
            continue
        document = chunk.document
        if document.pk not in readable:
            try:
                knowledge_selectors.document_get(user=request.user, pk=document.pk)
                readable[document.pk] = True
            except Http404:
                readable[document.pk] = False
        if not readable[document.pk]:
            continue
        href = (reverse("agent:citation_viewer", kwargs={"pk": run.pk, "marker": citation.marker})
                if document.media_type == "application/pdf"
                else viewer_url(document, chunk_id=chunk.pk, quote=citation.quote))
        mark = chunk_highlight(chunk, quote=citation.quote, quote_start=citation.quote_start)
        marks.append({"label": f"[{citation.marker}]", "marker": citation.marker, "title": citation.document_title,
                      "document": document.pk, "href": href, **mark})
    return marks


@login_required
@require_GET
def citation_viewer(request: HttpRequest, pk: int, marker: int) -> HttpResponse:
    """A cited PDF in the portal's viewer, at the cited sentence, with every citation of the
    run one key or click away. A text source opens in the text reader at the passage."""
    from knowledge.views_documents import viewer_context, viewer_url

    citation = selectors.citation_get(user=request.user, run_pk=pk, marker=marker)
    if citation.chunk is None:
        return redirect("agent:citation_panel", pk=pk, marker=marker)
    document, _ = knowledge_selectors.document_get(user=request.user, pk=citation.chunk.document_id)
    if document.media_type != "application/pdf":
        return redirect(viewer_url(document, chunk_id=citation.chunk_id, quote=citation.quote))
    marks = _viewer_marks(request, citation.run)
    for mark in marks:
        mark["here"] = mark["document"] == document.pk
    current = next(i for i, m in enumerate(marks) if m["marker"] == marker)
    context = viewer_context(document=document, highlights=marks, current=current)
    context["run"] = citation.run
    return render(request, "knowledge/document_viewer.html", context)


@login_required
@require_GET
def citation_panel(request: HttpRequest, pk: int, marker: int) -> HttpResponse:
    """The side panel of one citation; a full page when opened without JavaScript."""
    citation = selectors.citation_get(user=request.user, run_pk=pk, marker=marker)
    context = _panel_context(citation)
    context["can_save"] = _can_save(request, citation)
    if request.GET.get("fragment"):
        return render(request, "agent/_citation_panel.html", context)
    context["run"] = citation.run
    return render(request, "agent/citation.html", context)


def _can_save(request: HttpRequest, citation: Citation) -> bool:
    """Editors may add a web citation's page to the collection (where web search exists)."""
    from agent.web.search import web_search_available
    from knowledge.models import Role

    if citation.web_page_id is None or not web_search_available():
        return False
    role = knowledge_selectors.collection_role(user=request.user, collection=citation.run.collection)
    return knowledge_selectors.role_at_least(role, Role.EDITOR)


@login_required
@require_POST
def citation_save(request: HttpRequest, pk: int, marker: int) -> HttpResponse:
    """Add a web citation's page to the run's collection (editors; outsiders get 404)."""
    from django.core.exceptions import PermissionDenied

    from agent.services import citation_save_to_collection
    from agent.web.search import web_search_available

    if not web_search_available():
        raise Http404("No such page.")
    citation = selectors.citation_get(user=request.user, run_pk=pk, marker=marker)
    if not _can_save(request, citation):
        raise PermissionDenied("Adding a page to the collection needs the editor role.")
    try:
        document, created = citation_save_to_collection(citation=citation, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        if created:
            messages.success(request, f"“{document.title}” was added to the collection; it is being ingested.")
        else:
            messages.info(request, f"This page is already in the collection as “{document.title}”.")
    return redirect("agent:run_detail", pk=pk)
