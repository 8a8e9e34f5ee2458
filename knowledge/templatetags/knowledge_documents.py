"""`{% documents_panel %}`: the documents section of the collection page (upload, list, progress)."""

from __future__ import annotations

from django import template
from django.conf import settings

from knowledge import selectors
from knowledge.models import Role

register = template.Library()


@register.inclusion_tag("knowledge/_documents.html", takes_context=True)
def documents_panel(context: template.Context) -> dict:
    from knowledge.views_documents import document_rows

    request = context["request"]
    collection = context["collection"]
    role = selectors.collection_role(user=request.user, collection=collection)
    return {
        "request": request,
        "collection": collection,
        "documents": document_rows(collection=collection, user=request.user),
        "can_edit": selectors.role_at_least(role, Role.EDITOR),
        "max_mb": settings.UPLOAD_MAX_BYTES // (1024 * 1024),
        "csrf_token": context.get("csrf_token"),
    }


@register.filter
def percent(done: int, total: int) -> int:
    return int(100 * done / total) if total else 0


@register.filter
def job_label(message_key: str) -> str:
    from knowledge.ingest import MESSAGE_LABELS, Message

    try:
        return MESSAGE_LABELS[Message(message_key)]
    except ValueError:
        return message_key.replace("_", " ").capitalize()


# What a citation calls its source, by media type: never "PDF" for a Markdown file.
SOURCE_KINDS = {
    "application/pdf": "PDF",
    "text/markdown": "Markdown document",
    "text/plain": "text file",
    "text/html": "web page",
}


@register.filter
def source_kind(media_type: str) -> str:
    return SOURCE_KINDS.get(media_type, "document")
