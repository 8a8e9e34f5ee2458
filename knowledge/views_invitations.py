"""Joining: owners invite by e-mail, the invited person opens the link, and optional open sign-up.

The invitation pages are public (the person has no account yet); everything they can do is
bounded by the link (knowledge.invitations) and by the per-address form throttle.
"""

from __future__ import annotations

import unicodedata

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from knowledge import selectors
from knowledge.invitations import (
    InvitationInvalid,
    invitation_accept,
    invitation_check,
    invitation_create,
    invitation_revoke,
    invitation_send,
    signup_throttled,
)
from knowledge.models import Role

TOO_MANY = "Too many attempts from your address. Try again in {minutes} minutes."


class AccountForm(UserCreationForm):
    """Django's sign-up form, refusing names the login lock-out would confuse with another."""

    def clean_username(self) -> str:
        username = super().clean_username()
        # The lock-out keys accounts by the NFKC form of the name (accounts.lockout), so a
        # look-alike such as "alice" with a fullwidth a (U+FF41) must not become a second account.
        if username and unicodedata.normalize("NFKC", username) != username:
            raise ValidationError("Use plain letters, digits and @ . + - _ in the username.")
        return username


class SignupForm(AccountForm):
    email = forms.EmailField(required=True)

    class Meta(AccountForm.Meta):
        fields = ("username", "email")


def _too_many(request: HttpRequest, template: str, context: dict) -> HttpResponse:
    context["error"] = TOO_MANY.format(minutes=max(1, settings.LOGIN_LOCKOUT_SECONDS // 60))
    return render(request, template, context, status=429)


@login_required
@require_POST
def invitation_new(request: HttpRequest, slug: str) -> HttpResponse:
    """An owner invites an e-mail address with a role; the link goes out by e-mail."""
    collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
    try:
        invitation, token = invitation_create(
            collection=collection, inviter=request.user,
            email=request.POST.get("email", ""), role=request.POST.get("role", ""),
        )
    except ValidationError as exc:
        messages.error(request, "Give a valid e-mail address and a role. " + " ".join(exc.messages))
        return redirect("knowledge:collection_detail", slug=slug)
    link = request.build_absolute_uri(reverse("knowledge:invitation_accept", kwargs={"token": token}))
    try:
        invitation_send(invitation=invitation, link=link)
    except OSError as exc:  # smtplib.SMTPException is an OSError
        invitation.delete()
        messages.error(request, f"The e-mail to {invitation.email} could not be sent ({exc}); nothing was kept. "
                                "The operator can check the PORTAL_EMAIL_* settings.")
    else:
        messages.success(request, f"Invitation sent to {invitation.email} as {invitation.get_role_display().lower()}.")
    return redirect("knowledge:collection_detail", slug=slug)


@login_required
@require_POST
def invitation_cancel(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
    if not invitation_revoke(collection=collection, pk=pk):
        raise Http404("No such pending invitation.")
    messages.success(request, "The invitation was revoked; its link no longer works.")
    return redirect("knowledge:collection_detail", slug=slug)


@never_cache
def invitation_open(request: HttpRequest, token: str) -> HttpResponse:
    """The invitation link: choose a username and password (or join with the signed-in account)."""
    template = "knowledge/invitation_accept.html"
    if request.method == "POST" and signup_throttled(request):
        return _too_many(request, template, {"invitation": None})
    try:
        invitation = invitation_check(token=token)
    except InvitationInvalid as exc:
        return render(request, template, {"invitation": None, "error": str(exc)}, status=exc.status)
    form = AccountForm(request.POST if request.method == "POST" and not request.user.is_authenticated else None)
    form.instance.email = invitation.email  # the password must not resemble it either
    if request.method == "POST":
        try:
            if request.user.is_authenticated:
                user, _ = invitation_accept(token=token, user=request.user)
            elif form.is_valid():
                user, _ = invitation_accept(token=token, username=form.cleaned_data["username"],
                                            password=form.cleaned_data["password1"])
                login(request, user)
            else:
                return render(request, template, {"invitation": invitation, "form": form}, status=400)
        except InvitationInvalid as exc:
            return render(request, template, {"invitation": None, "error": str(exc)}, status=exc.status)
        messages.success(request, f"Welcome to {invitation.collection.name}.")
        return redirect("knowledge:collection_detail", slug=invitation.collection.slug)
    return render(request, template, {"invitation": invitation, "form": form})


@never_cache
def signup(request: HttpRequest) -> HttpResponse:
    """Open sign-up (PORTAL_OPEN_SIGNUP): an account with no collection. 404 when switched off."""
    if not settings.OPEN_SIGNUP:
        raise Http404("Sign-up is by invitation only.")
    if request.user.is_authenticated:
        return redirect(settings.LOGIN_REDIRECT_URL)
    template = "registration/signup.html"
    if request.method == "POST" and signup_throttled(request):
        return _too_many(request, template, {"form": SignupForm()})
    form = SignupForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        messages.success(request, "Your account is ready. Create a collection, or ask an owner to add you to theirs.")
        return redirect(settings.LOGIN_REDIRECT_URL)
    return render(request, template, {"form": form}, status=400 if request.method == "POST" else 200)
