"""Inclusion tags so other apps' pages (the collection page) can show the ask form and the
quick-search box without their views knowing about configurations."""

from __future__ import annotations

from django import template

register = template.Library()


@register.inclusion_tag("agent/_ask_form.html", takes_context=True)
def ask_form(context: template.Context, collection) -> dict:
    from agent.views import ask_context

    request = context.get("request")
    result = ask_context(collection=collection, user=getattr(request, "user", None))
    result["csrf_token"] = context.get("csrf_token")
    return result


@register.inclusion_tag("knowledge/_search_box.html")
def search_box(collection, query: str = "", results=None) -> dict:
    return {"collection": collection, "query": query, "results": results}
