"""HTML views for collections, their members and team access. Thin: validate, call a service, redirect."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.models import Team
from accounts.views import added_message, error_text
from knowledge import selectors, services
from knowledge.metadata import MetadataError, parse_year_range
from knowledge.models import Role
from knowledge.views_documents import viewer_url

User = get_user_model()


@login_required
def collection_list(request: HttpRequest) -> HttpResponse:
    collections = selectors.collection_list(user=request.user).order_by("name")
    return render(request, "knowledge/collection_list.html", {"collections": collections})


@login_required
def collection_create(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name:
            messages.error(request, "Give the collection a name.")
        else:
            try:
                collection = services.collection_create(
                    name=name, description=request.POST.get("description", ""), user=request.user
                )
            except ValidationError as exc:
                messages.error(request, error_text(exc))
            else:
                messages.success(request, f"Collection {collection.name} created. Upload papers to start.")
                return redirect("knowledge:collection_detail", slug=collection.slug)
    return render(request, "knowledge/collection_create.html", {})


@login_required
def collection_detail(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = selectors.collection_get(user=request.user, slug=slug)
    context = {
        "collection": collection,
        "role": role,
        "can_edit": selectors.role_at_least(role, Role.EDITOR),
        "can_manage": role == Role.OWNER,
        "members": selectors.membership_list(collection=collection),
        "team_accesses": selectors.team_access_list(collection=collection),
        "roles": Role.choices,
        # Only teams the owner is in: listing every team would reveal them all.
        "teams": Team.objects.filter(memberships__user=request.user).order_by("name"),
        # The owner's web search switch exists only where a provider is configured.
        "web_search": bool(settings.WEB_SEARCH_PROVIDER),
    }
    if role == Role.OWNER:
        from django.utils import timezone

        from knowledge.invitations import invitation_list

        context["invitations"], context["now"] = invitation_list(collection=collection), timezone.now()
    return render(request, "knowledge/collection_detail.html", context)


@login_required
@require_POST
def collection_web_search(request: HttpRequest, slug: str) -> HttpResponse:
    """The owner turns the web search path on or off for this collection (docs/web-search.md)."""
    if not settings.WEB_SEARCH_PROVIDER:
        raise Http404("No such page.")
    collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
    services.collection_update(collection=collection, web_search_enabled=request.POST.get("enabled") == "on")
    messages.success(request, "Web search is now " + ("on" if collection.web_search_enabled else "off")
                     + " for this collection.")
    return redirect("knowledge:collection_detail", slug=slug)


@login_required
@require_POST
def member_set(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
    username = request.POST.get("username", "").strip()
    role = request.POST.get("role", "")
    user = User.objects.filter(username=username).first()
    if not username or role not in Role.values:
        messages.error(request, "Give a username and choose a role: owner, editor, reviewer or viewer.")
        return redirect("knowledge:collection_detail", slug=slug)
    try:
        if user is not None:
            services.membership_set(collection=collection, user=user, role=role)
    except ValidationError as exc:
        messages.error(request, error_text(exc))
    else:
        # The same words whether or not the account exists, so this form cannot be used to
        # find out which usernames exist.
        messages.success(request, added_message(username, Role(role).label.lower()))
    return redirect("knowledge:collection_detail", slug=slug)


@login_required
@require_POST
def member_remove(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
    user = User.objects.filter(pk=user_id).first()
    if user is None:
        raise Http404("No such user.")
    try:
        services.membership_remove(collection=collection, user=user)
        messages.success(request, f"{user.username} was removed.")
    except ValidationError as exc:
        messages.error(request, error_text(exc))
    return redirect("knowledge:collection_detail", slug=slug)


@login_required
@require_POST
def team_access_set(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
    # Only a team the owner is in: another team is answered as if it did not exist.
    team = Team.objects.filter(slug=request.POST.get("team", ""), memberships__user=request.user).first()
    role = request.POST.get("role", "")
    if team is None or role not in Role.values:
        messages.error(request, "Choose one of your teams and a role.")
    else:
        services.team_access_set(collection=collection, team=team, role=role, user=request.user)
        messages.success(request, f"Team {team.name} is now {Role(role).label.lower()}.")
    return redirect("knowledge:collection_detail", slug=slug)


@login_required
@require_POST
def team_access_remove(request: HttpRequest, slug: str, team_slug: str) -> HttpResponse:
    collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
    team = Team.objects.filter(slug=team_slug).first()
    if team is None:
        raise Http404("No such team.")
    services.team_access_remove(collection=collection, team=team)
    return redirect("knowledge:collection_detail", slug=slug)


SEARCH_RESULTS = 10


@login_required
def collection_search(request: HttpRequest, slug: str) -> HttpResponse:
    """Quick search: the fused ranking with each retriever's rank (why an answer cited what it cited).

    `?fragment=1` returns only the results table, for the search box on the collection page.
    """
    from knowledge.indexing.search import index_search
    from knowledge.models import Chunk

    collection, _ = selectors.collection_get(user=request.user, slug=slug)
    query = request.GET.get("q", "").strip()[:500]
    # As typed, to refill the form; `search` gets them parsed.
    filters = {key: request.GET.get(key, "").strip()[:200] for key in ("year", "tag", "title")}
    filters = {key: value for key, value in filters.items() if value}
    context: dict = {"collection": collection, "query": query, "results": None, "error": "", "filters": filters}
    search = dict(filters)
    if "year" in search:
        try:
            search["year"] = parse_year_range(search["year"])
        except MetadataError as exc:
            context["error"], context["results"], query = str(exc), [], ""
    if query:
        from knowledge.embeddings import EmbeddingUnavailable, bounded_calls

        try:
            # A web process: the query embedding (openai backend) is one bounded call.
            with bounded_calls(settings.WEB_OUTBOUND_TIMEOUT_SECONDS):
                hits = index_search(
                    collection=collection, query=query, k=SEARCH_RESULTS, mode="rrf", filters=search or None
                )
        except EmbeddingUnavailable:
            hits = []
            context["error"] = "The embeddings service did not answer in time. Try again in a moment."
        chunks = Chunk.objects.filter(
            pk__in=[h.chunk_id for h in hits], document__collection=collection
        ).select_related("document")
        by_id = {c.pk: c for c in chunks}
        context["results"] = [
            {"hit": h, "chunk": by_id[h.chunk_id], "bm25": h.ranks.get("bm25"), "dense": h.ranks.get("dense"),
             # A hit opens where a citation does: the PDF viewer, or the text reader.
             "view_url": viewer_url(by_id[h.chunk_id].document, chunk_id=h.chunk_id)}
            for h in hits
            if h.chunk_id in by_id
        ]
    if request.GET.get("fragment"):
        return render(request, "knowledge/_search_results.html", context)
    return render(request, "knowledge/collection_search.html", context)
