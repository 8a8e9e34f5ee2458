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
from knowledge.text.hyphens import quote_span as locate_quote


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
    """`text` escaped, with the first occurrence of `quote` in <mark> (located as a citation's
    highlight is: knowledge.text.hyphens.quote_span)."""
    span = locate_quote(quote, text) if quote else None
    if span is None:
        return format_html("{}", text)
    at, end = span
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


def quote_span(text: str, quote: str, quote_start: int = -1) -> tuple[int, int]:
    """Offsets of `quote` in `text`: the one quote locator (knowledge.text.hyphens.quote_span:
    the occurrence at `quote_start` when it is there, case, spaces and hyphens between words
    aside, so a quote whose line-break hyphens were joined still lands), else compared by match
    key (all punctuation aside); the whole text when there is no quote or it is not found."""
    if quote:
        span = locate_quote(quote, text, quote_start)
        if span:
            return span
        from knowledge.pdf_boxes import match_key_with_index

        key, index = match_key_with_index(text)
        wanted, _ = match_key_with_index(quote)
        at = key.find(wanted) if wanted else -1
        if at >= 0:
            return index[at], index[at + len(wanted) - 1] + 1
    return 0, len(text)


def chunk_highlight(chunk, *, quote: str = "", quote_start: int = -1) -> dict:
    """What the viewer marks for a passage: the page and the boxes of the sentences the quote
    touches (all of the chunk's sentences without a quote). No boxes (a sentence pdfium did
    not place, a chunk ingested before boxes existed): the chunk's first page, unmarked."""
    from knowledge.pdf_boxes import boxes_for_span

    start, end = quote_span(chunk.text, quote, quote_start)
    rects = boxes_for_span(chunk.boxes or [], start, end)
    # The marked words in text too: for screen readers, and to read on a small screen.
    text = " ".join(chunk.text[start:end].split())
    return {"page": int(rects[0][0]) if rects else chunk.page_start, "rects": rects,
            "text": text if len(text) <= 600 else text[:600].rsplit(" ", 1)[0] + " …"}


def viewer_url(document: Document, *, chunk_id: int | None = None, quote: str = "") -> str:
    """Where a passage opens: the PDF viewer, or the text reader for Markdown, text and HTML."""
    from urllib.parse import urlencode

    from django.urls import reverse

    params = {k: v for k, v in {"chunk": chunk_id or "", "quote": quote[:2000]}.items() if v}
    query = f"?{urlencode(params)}" if params else ""
    if document.media_type == "application/pdf":
        return reverse("knowledge:document_viewer", args=[document.pk]) + query
    return reverse("knowledge:document_text", args=[document.pk]) + query + ("#passage" if chunk_id else "")


def viewer_context(*, document: Document, highlights: list[dict], current: int) -> dict:
    """The template context of the PDF viewer: the document, its file, and the marks
    (`highlights`: label, page, rects, href, here) with the one to open first."""
    from urllib.parse import urljoin

    from django.templatetags.static import static
    from django.urls import reverse

    config = {
        "file": reverse("knowledge:document_file", args=[document.pk]),
        "lib": static("vendor/pdfjs/pdf.min.mjs"),
        "worker": static("vendor/pdfjs/pdf.worker.min.mjs"),
        # Folders, not files: a manifest storage names only files, so these are taken relative
        # to the library's own URL (PDF.js appends the unhashed file names).
        "fonts": urljoin(static("vendor/pdfjs/pdf.min.mjs"), "standard_fonts/"),
        "cmaps": urljoin(static("vendor/pdfjs/pdf.min.mjs"), "cmaps/"),
        "pages": document.pages,
        "highlights": highlights,
        "current": current,
    }
    return {"document": document, "collection": document.collection, "config": config,
            "highlights": highlights, "current": highlights[current] if highlights else None}


@login_required
@require_GET
def document_viewer(request: HttpRequest, pk: int) -> HttpResponse:
    """A document in the portal's PDF viewer (PDF.js), at the page of `?chunk=` with its
    sentences (or the sentence of `?quote=`) marked; quick-search hits open here. A text
    source opens in the text reader instead."""
    document, _ = selectors.document_get(user=request.user, pk=pk)
    raw_chunk = request.GET.get("chunk", "")
    chunk_id = int(raw_chunk) if raw_chunk.isdigit() and len(raw_chunk) < 19 else None
    quote = request.GET.get("quote", "")[:2000]
    if document.media_type != "application/pdf":
        return redirect(viewer_url(document, chunk_id=chunk_id, quote=quote))
    chunk = document.chunks.filter(pk=chunk_id).first() if chunk_id is not None else None
    highlights = []
    if chunk is not None:
        mark = chunk_highlight(chunk, quote=quote)
        highlights.append({"label": f"p. {mark['page']}", "title": document.title, "here": True,
                           "href": viewer_url(document, chunk_id=chunk.pk, quote=quote), **mark})
    context = viewer_context(document=document, highlights=highlights, current=0)
    return render(request, "knowledge/document_viewer.html", context)
