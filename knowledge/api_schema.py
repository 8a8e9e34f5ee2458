"""/api/schema/, built once per process and language, under a lock.

drf-spectacular builds the schema on every request, and its generator keeps registries that
are not safe to share: eight concurrent first requests in a fresh process failed with 500s.
The schema depends only on the code, never on who asks (it is public, see docs/api.md), so
the first request builds it while the others wait, and everyone gets the same document.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from django.utils import translation
from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response


class SchemaApi(SpectacularAPIView):
    _lock: ClassVar[threading.Lock] = threading.Lock()
    _built: ClassVar[dict[tuple[str | None, str | None], dict[str, Any]]] = {}

    def _get_schema_response(self, request: Request) -> Response:
        version = self.api_version or request.version or self._get_version_parameter(request)
        key = (version, translation.get_language())
        with self._lock:
            schema = self._built.get(key)
            if schema is None:
                generator = self.generator_class(urlconf=self.urlconf, api_version=version, patterns=self.patterns)
                schema = self._built[key] = generator.get_schema(request=request, public=self.serve_public)
        return Response(
            data=schema,
            headers={"Content-Disposition": f'inline; filename="{self._get_filename(request, version)}"'},
        )
