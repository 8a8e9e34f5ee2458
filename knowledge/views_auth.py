"""Login with a lock-out after repeated failures, per username and per client address."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse


def _keys(request: HttpRequest) -> list[str]:
    username = request.POST.get("username", "").strip().lower()
    address = request.META.get("REMOTE_ADDR", "")
    return [
        "login-fail:user:" + hashlib.sha256(username.encode()).hexdigest(),
        "login-fail:addr:" + hashlib.sha256(address.encode()).hexdigest(),
    ]


def _locked(request: HttpRequest) -> bool:
    return any((cache.get(key) or 0) >= settings.LOGIN_MAX_FAILURES for key in _keys(request))


def _record_failure(request: HttpRequest) -> None:
    for key in _keys(request):
        # add() starts the window; incr() keeps its expiry, so the lock-out ends on time.
        if not cache.add(key, 1, settings.LOGIN_LOCKOUT_SECONDS):
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, settings.LOGIN_LOCKOUT_SECONDS)


class ThrottledLoginView(auth_views.LoginView):
    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if _locked(request):
            minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
            form = self.get_form()
            form.add_error(None, f"Too many failed logins. Try again in {minutes} minutes.")
            return self.render_to_response(self.get_context_data(form=form, locked=True), status=429)
        response = super().post(request, *args, **kwargs)
        if not request.user.is_authenticated:
            _record_failure(request)
        else:
            for key in _keys(request):
                cache.delete(key)
        return response
