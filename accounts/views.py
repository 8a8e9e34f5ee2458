"""HTML views for teams and API tokens. Thin: validate, call a service, redirect."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from accounts import services
from accounts.api_auth import api_token_create, api_token_list
from accounts.api_auth import api_token_revoke as revoke
from accounts.models import Team

User = get_user_model()


def error_text(exc: ValidationError) -> str:
    """A validation error as one line for a flash message."""
    return " ".join(exc.messages)


def added_message(username: str, what: str) -> str:
    """The same words whether or not the account exists (team and collection member forms)."""
    return f"If an account called {username} exists, it is now {what}. The list below shows who is in."


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
                return redirect("accounts:team_detail", slug=team.slug)
            except ValidationError as exc:
                messages.error(request, error_text(exc))
    teams = Team.objects.filter(memberships__user=request.user).order_by("name")
    return render(request, "accounts/team_list.html", {"teams": teams})


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
            messages.error(request, error_text(exc))
        else:
            if removing:
                messages.success(request, f"{username} is no longer in the team.")
            elif username:
                # Same words for an unknown name: the form must not reveal which accounts exist.
                messages.success(request, added_message(username, "a team member"))
        return redirect("accounts:team_detail", slug=slug)
    members = team.memberships.select_related("user").order_by("user__username")
    return render(request, "accounts/team_detail.html", {"team": team, "members": members, "is_admin": is_admin})


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
    new_token = ""
    if request.method == "POST":
        name = request.POST.get("name", "").strip()
        if not name:
            messages.error(request, "Give the token a name, e.g. the tool that will use it.")
        else:
            _, new_token = api_token_create(user=request.user, name=name)
    context = {"tokens": api_token_list(user=request.user), "new_token": new_token}
    return render(request, "accounts/api_tokens.html", context)


@login_required
@require_POST
def api_token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = revoke(user=request.user, pk=pk)
    messages.success(request, f"Token {token.name!r} was revoked; it no longer works.")
    return redirect("accounts:api_tokens")
