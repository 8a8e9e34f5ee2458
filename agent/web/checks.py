"""System check: the tests-only loopback opening must never reach a production process."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register


@register()
def web_search_loopback_check(app_configs=None, **kwargs) -> list[Error]:
    if getattr(settings, "WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS", False) and not settings.DEBUG:
        return [Error(
            "PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS lets the web fetcher reach this server itself; "
            "it is for tests only and refused outside DEBUG.",
            hint="Unset PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS.", id="agent.E101",
        )]
    return []
