"""The login page: Django's LoginView, answering 429 with a reason when the lock-out refused it.

The lock-out itself is in the authentication backend (accounts.lockout), so the admin login
and any other caller of `authenticate()` obey it too.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpResponse

from accounts.lockout import LOCKED_ATTRIBUTE


class ThrottledLoginView(auth_views.LoginView):
    def get_context_data(self, **kwargs):  # type: ignore[no-untyped-def]
        # The page links to the sign-up form only when open sign-up is on (PORTAL_OPEN_SIGNUP).
        return {**super().get_context_data(**kwargs), "open_signup": settings.OPEN_SIGNUP}

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        if not getattr(self.request, LOCKED_ATTRIBUTE, False):
            return super().form_invalid(form)
        minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
        # Replace "wrong password" by the real reason: the password was not checked.
        form.errors.pop(NON_FIELD_ERRORS, None)
        form.add_error(None, f"Too many failed logins. Try again in {minutes} minutes.")
        return self.render_to_response(self.get_context_data(form=form, locked=True), status=429)
