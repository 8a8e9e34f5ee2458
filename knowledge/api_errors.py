"""One error shape for the whole API: {"error": {"code", "message", "detail"}}."""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = getattr(exc, "default_code", "error")
    detail = response.data
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        message = str(detail["detail"])
        code = getattr(detail["detail"], "code", code)
        detail = None
    else:
        message = "The request is not valid." if response.status_code == 400 else str(exc)
    response.data = {"error": {"code": str(code), "message": message, "detail": detail}}
    return response
