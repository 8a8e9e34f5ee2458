"""One error shape for the whole API: {"error": {"code", "message", "detail"}}.

`code` is machine-readable and stable (`not_found`, `permission_denied`, `invalid`,
`too_large`, `unsupported_type`, `not_authenticated`, `throttled`, ...); `message` is for a
person; `detail` carries field errors for 400s and is null otherwise.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers, status
from rest_framework.exceptions import APIException
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

logger = logging.getLogger(__name__)

# Services raise Django's ValidationError; these codes carry their own HTTP status.
STATUS_BY_CODE = {
    "too_large": status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
    "unsupported_type": status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
    # ingest_job_retry: the document's state does not allow a retry right now.
    "busy": status.HTTP_409_CONFLICT,
    "not_failed": status.HTTP_409_CONFLICT,
}


def _error(code: str, message: str, detail: Any = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "detail": detail}}


def _from_django_validation_error(exc: DjangoValidationError) -> Response:
    codes = [e.code for e in exc.error_list] if hasattr(exc, "error_list") else []
    if hasattr(exc, "error_dict"):
        codes = [e.code for errors in exc.error_dict.values() for e in errors]
        detail: Any = exc.message_dict
    else:
        detail = None
    code = next((c for c in codes if c in STATUS_BY_CODE), None) or next((c for c in codes if c), "invalid")
    http_status = STATUS_BY_CODE.get(code, status.HTTP_400_BAD_REQUEST)
    return Response(_error(code, " ".join(exc.messages), detail), status=http_status)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DjangoValidationError):
        return _from_django_validation_error(exc)
    response = drf_exception_handler(exc, context)
    if response is None:
        # An unexpected error still answers in the API's shape; the traceback goes to the log.
        logger.exception("Unhandled API error in %s", context.get("view").__class__.__name__)
        return Response(
            _error("server_error", "Something went wrong on our side; the error was logged."),
            status=status.HTTP_500_INTERNAL_SERVER_ERROR,
        )
    code = getattr(exc, "default_code", "error")
    detail = response.data
    if isinstance(detail, dict) and set(detail) == {"detail"}:
        message = str(detail["detail"])
        code = getattr(detail["detail"], "code", code)
        detail = None
    elif response.status_code == 400:
        message = "The request is not valid: see detail."
        code = "invalid"
    else:
        message = str(exc)
    response.data = _error(str(code), message, detail)
    return response


class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Machine-readable error code, e.g. not_found, invalid, too_large.")
    message = serializers.CharField(help_text="A sentence for a person.")
    detail = serializers.JSONField(
        allow_null=True, help_text="Field errors for 400 responses ({field: [messages]}), else null."
    )


class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()


_DESCRIPTIONS = {
    400: "Invalid input (code `invalid`); `detail` names the fields.",
    401: "No or invalid credentials (code `not_authenticated` or `authentication_failed`).",
    403: "Member of the collection, but the role is too low (code `permission_denied`).",
    404: "No such object, or it belongs to a collection you are not in (code `not_found`).",
    409: "Conflicts with the object's state (code `conflict`).",
    413: "The upload is larger than the limit (code `too_large`).",
    415: "The file type is not supported (code `unsupported_type`).",
    429: "Too many requests (code `throttled`).",
    503: "A service the request needs (the embeddings API) did not answer in time (code `upstream_unavailable`).",
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """OpenAPI responses for the given error statuses, plus 401 and 429 that any call can get."""
    wanted = sorted({401, 429, *statuses})
    return {s: OpenApiResponse(ErrorSerializer, description=_DESCRIPTIONS[s]) for s in wanted}


class UpstreamUnavailable(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "upstream_unavailable"
    default_detail = "A service this request needs did not answer in time; try again shortly."


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"
    default_detail = "The object's current state does not allow this."


@csrf_exempt  # it changes nothing; a 403 from CSRF would hide the real answer, 404
def api_not_found(request: HttpRequest, rest: str = "") -> JsonResponse:
    """Unknown URLs under /api/ answer in the API's error shape, not with an HTML page."""
    message = "There is no API endpoint at this URL; see /api/docs/."
    if not request.path.endswith("/"):
        try:
            resolve(request.path + "/")
        except Resolver404:
            pass
        else:
            # CommonMiddleware's APPEND_SLASH redirect cannot fire past this catch-all route.
            message = f"API URLs end with a slash: try {request.path}/"
    return JsonResponse(_error("not_found", message), status=404)
