"""HTML views for collections, members and teams. Thin: validate, call a service, redirect."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from knowledge import selectors, services
from knowledge.metadata import MetadataError, parse_year_range
from knowledge.models import Role, Team
from knowledge.views_documents import viewer_url

User = get_user_model()


def _error_text(exc: ValidationError) -> str:
    return " ".join(exc.messages)


def _added_message(username: str, what: str) -> str:
    return f"If an account called {username} exists, it is now {what}. The list below shows who is in."


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
                messages.error(request, _error_text(exc))
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
        messages.error(request, _error_text(exc))
    else:
        # The same words whether or not the account exists, so this form cannot be used to
        # find out which usernames exist.
        messages.success(request, _added_message(username, Role(role).label.lower()))
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
        messages.error(request, _error_text(exc))
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


def _team_for_user(request: HttpRequest, slug: str, *, admin: bool = False) -> Team:
    team = Team.objects.filter(slug=slug, memberships__user=request.user).first()
    if team is None:
        raise Http404("No such team.")
    if admin and not team.memberships.filter(user=request.user, is_admin=True).exists():
        raise PermissionDenied("Only the team's admins can change its members.")
    return team


@login_required
def team_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name:
            messages.error(request, "Give the team a name.")
        else:
            try:
                team = services.team_create(name=name, user=request.user)
                return redirect("knowledge:team_detail", slug=team.slug)
            except ValidationError as exc:
                messages.error(request, _error_text(exc))
    teams = Team.objects.filter(memberships__user=request.user).order_by("name")
    return render(request, "knowledge/team_list.html", {"teams": teams})


@login_required
def team_detail(request: HttpRequest, slug: str) -> HttpResponse:
    team = _team_for_user(request, slug)
    is_admin = team.memberships.filter(user=request.user, is_admin=True).exists()
    if request.method == "POST":
        team = _team_for_user(request, slug, admin=True)
        username = request.POST.get("username", "").strip()
        user = User.objects.filter(username=username).first()
        removing = request.POST.get("action") == "remove"
        try:
            if user is not None and removing:
                services.team_member_remove(team=team, user=user)
            elif user is not None:
                services.team_member_add(team=team, user=user, is_admin=bool(request.POST.get("is_admin")))
        except ValidationError as exc:
            messages.error(request, _error_text(exc))
        else:
            if removing:
                messages.success(request, f"{username} is no longer in the team.")
            elif username:
                # Same words for an unknown name: the form must not reveal which accounts exist.
                messages.success(request, _added_message(username, "a team member"))
        return redirect("knowledge:team_detail", slug=slug)
    members = team.memberships.select_related("user").order_by("user__username")
    return render(request, "knowledge/team_detail.html", {"team": team, "members": members, "is_admin": is_admin})


SEARCH_RESULTS = 10


@login_required
def collection_search(request: HttpRequest, slug: str) -> HttpResponse:
    """Quick search: the fused ranking with each retriever's rank (why an answer cited what it cited).

    `?fragment=1` returns only the results table, for the search box on the collection page.
    """
    from knowledge.indexing import index_search
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


# ---------------------------------------------------------------------------
# API tokens (settings page): create shows the token once, list, revoke
# ---------------------------------------------------------------------------


@never_cache  # the page may show a new token: no browser or proxy may keep a copy
@login_required
def api_tokens(request: HttpRequest) -> HttpResponse:
    """List the user's API tokens; a POST creates one and shows it on this response only.

    The new token is rendered, never redirected to: it must not travel through the session
    or a message, since only its hash is kept.
    """
    from knowledge.api_auth import api_token_create, api_token_list

    new_token = ""
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name:
            messages.error(request, "Give the token a name, e.g. the tool that will use it.")
        else:
            _, new_token = api_token_create(user=request.user, name=name)
    context = {"tokens": api_token_list(user=request.user), "new_token": new_token}
    return render(request, "knowledge/api_tokens.html", context)


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    from knowledge.api_auth import api_token_revoke as revoke

    token = revoke(user=request.user, pk=pk)
    messages.success(request, f"Token {token.name!r} was revoked; it no longer works.")
    return redirect("knowledge:api_tokens")
