"""HTML views for documents: upload (several files, drag and drop), progress polling,
permission-checked file view/download, delete and retry. Thin: selectors + services."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST

from knowledge import selectors, services
from knowledge.models import Document, Role


def document_rows(*, collection, user) -> list[Document]:
    """Documents of the collection with their latest job attached as `.latest_job`."""
    documents = list(selectors.document_list(user=user, collection=collection).order_by("-created_at", "-pk"))
    jobs: dict[int, object] = {}
    from knowledge.models import IngestJob

    for job in IngestJob.objects.filter(document__in=documents).order_by("document_id", "-created_at", "-pk"):
        jobs.setdefault(job.document_id, job)
    for document in documents:
        document.latest_job = jobs.get(document.pk)  # type: ignore[attr-defined]
    return documents


@login_required
@require_POST
def document_upload(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.EDITOR)
    files = request.FILES.getlist("files")
    if not files:
        messages.error(request, "Choose one or more files to upload.")
    added, duplicates = 0, []
    for uploaded in files:
        try:
            document, created = services.document_upload(collection=collection, user=request.user, uploaded_file=uploaded)
        except ValidationError as exc:
            messages.error(request, f"{uploaded.name}: {' '.join(exc.messages)}")
            continue
        if created:
            added += 1
        else:
            duplicates.append(f"{uploaded.name} is already in this collection as “{document.title}”.")
    if added:
        messages.success(request, f"{added} file{'s' if added != 1 else ''} queued for ingestion.")
    for text in duplicates:
        messages.info(request, text)
    return redirect(f"{collection_url(slug)}#documents")


def collection_url(slug: str) -> str:
    from django.urls import reverse

    return reverse("knowledge:collection_detail", args=[slug])


@login_required
@require_GET
def document_status(request: HttpRequest, slug: str) -> JsonResponse:
    """One polling endpoint for the collection page: every document row pre-rendered.

    `busy` tells the page whether to keep polling; `updated` is the newest change seen.
    """
    collection, role = selectors.collection_get(user=request.user, slug=slug)
    documents = document_rows(collection=collection, user=request.user)
    can_edit = selectors.role_at_least(role, Role.EDITOR)
    rows = {
        str(d.pk): render_to_string(
            "knowledge/_document_row.html", {"d": d, "collection": collection, "can_edit": can_edit}, request=request
        )
        for d in documents
    }
    busy = any(d.status in (Document.Status.QUEUED, Document.Status.PROCESSING)
               or (d.latest_job is not None and not d.latest_job.is_final) for d in documents)
    updated = max((d.updated_at for d in documents), default=timezone.now())
    latest_job = max((d.latest_job.updated_at for d in documents if d.latest_job), default=updated)
    return JsonResponse({
        "order": [str(d.pk) for d in documents],
        "rows": rows,
        "busy": busy,
        "updated": max(updated, latest_job).isoformat(),
    })


@login_required
@require_GET
def document_file(request: HttpRequest, pk: int) -> FileResponse:
    """The stored file, to members only; inline for PDFs (viewer opens at #page=N)."""
    document, _ = selectors.document_get(user=request.user, pk=pk)
    path = Path(settings.MEDIA_ROOT) / document.file
    if not path.is_file():
        raise Http404("The file is no longer stored.")
    download = bool(request.GET.get("download")) or document.media_type == "text/html"
    # HTML is never rendered inline: an uploaded page must not run script on our origin.
    content_type = document.media_type if document.media_type != "text/html" else "application/octet-stream"
    if content_type.startswith("text/"):
        content_type += "; charset=utf-8"
    response = FileResponse(path.open("rb"), as_attachment=download, filename=document.original_name,
                            content_type=content_type)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox"
    return response


@login_required
@require_POST
def document_delete(request: HttpRequest, pk: int) -> HttpResponse:
    document, _ = selectors.document_get(user=request.user, pk=pk, minimum=Role.EDITOR)
    slug, title = document.collection.slug, document.title
    services.document_delete(document=document)
    messages.success(request, f"“{title}” was deleted.")
    return redirect(f"{collection_url(slug)}#documents")


@login_required
@require_POST
def document_update(request: HttpRequest, pk: int) -> HttpResponse:
    """An editor corrects the title or sets the year and tags (the search filters)."""
    document, _ = selectors.document_get(user=request.user, pk=pk, minimum=Role.EDITOR)
    try:
        services.document_update(
            document=document, title=request.POST.get("title", ""),
            year=request.POST.get("year", ""), tags=request.POST.get("tags", ""),
        )
        messages.success(request, f"The details of “{document.title}” are saved.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect(f"{collection_url(document.collection.slug)}#doc-{document.pk}")


@login_required
@require_POST
def document_retry(request: HttpRequest, pk: int) -> HttpResponse:
    document, _ = selectors.document_get(user=request.user, pk=pk, minimum=Role.EDITOR)
    try:
        services.ingest_job_retry(document=document, user=request.user)
        messages.success(request, f"“{document.title}” is queued again.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect(f"{collection_url(document.collection.slug)}#documents")


def _passage_html(text: str, quote: str) -> SafeString:
    """`text` escaped, with the first occurrence of `quote` in <mark>."""
    at = text.find(quote) if quote else -1
    if at < 0:
        return format_html("{}", text)
    end = at + len(quote)
    return format_html("{}<mark>{}</mark>{}", text[:at], text[at:end], text[end:])


def document_text_blocks(*, document: Document, cited_chunk_id: int | None, quote: str) -> list[dict]:
    """The document's text as it was indexed, chunk by chunk without the overlaps, the cited
    chunk whole and marked.

    Chunks overlap (each repeats the end of the one before); their `char_start`/`char_end`
    are offsets into the text of their first page, so on one page a chunk's new text starts
    where the previous one ended. The cited chunk is shown whole, so the one before it is cut
    where the cited one starts.
    """
    blocks: list[dict] = []
    previous = None
    for chunk in document.chunks.order_by("ordinal"):
        cited = chunk.pk == cited_chunk_id
        start = chunk.char_start
        if previous is not None and previous["page"] == chunk.page_start:
            if cited:
                # Cut the block before at the cited chunk's start instead of cutting this one.
                cut = max(0, chunk.char_start - previous["start"])
                previous["text"] = previous["text"][:cut]
            else:
                start = max(chunk.char_start, previous["end"])
        text = chunk.text[start - chunk.char_start :]
        block = {"page": chunk.page_start, "start": start, "end": chunk.char_end, "text": text, "cited": cited}
        blocks.append(block)
        previous = block
    return [
        {"html": _passage_html(b["text"], quote if b["cited"] else ""), "cited": b["cited"]}
        for b in blocks
        if b["text"].strip()
    ]


@login_required
@require_GET
def document_text(request: HttpRequest, pk: int) -> HttpResponse:
    """Where a citation of a text source (Markdown, text, HTML) opens: the document's indexed
    text with the cited passage marked, at `#passage`. A PDF opens in the browser's viewer."""
    document, _ = selectors.document_get(user=request.user, pk=pk)
    raw_chunk = request.GET.get("chunk", "")
    cited = int(raw_chunk) if raw_chunk.isdigit() and len(raw_chunk) < 19 else None
    blocks = document_text_blocks(document=document, cited_chunk_id=cited, quote=request.GET.get("quote", "")[:2000])
    return render(request, "knowledge/document_text.html", {
        "document": document, "collection": document.collection, "blocks": blocks,
    })
