"""Pieces every API view shares: pagination, validated query parameters, ordering, page schemas, responses."""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import Model, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from knowledge.api_errors import error_responses
from knowledge.models import Role

# The largest id a BigAutoField holds; a larger one cannot even be sent to SQLite (a 500).
MAX_ID = 2**63 - 1


class Pagination(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


def paginated(
    view: APIView, request: Request, queryset: QuerySet, serializer: type, **context: Any
) -> Response:
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    data = serializer(page, many=True, context={"request": request, **context}).data
    return paginator.get_paginated_response(data)


def serialized(serializer_class: type[serializers.Serializer], instance: Any, request: Request,
               **context: Any) -> dict[str, Any]:
    """`instance` in its output shape; the serializers that build URLs read the request from the context."""
    return serializer_class(instance, context={"request": request, **context}).data


def saved(body: dict[str, Any], *, created: bool, location: bool = False) -> Response:
    """201 for a row this request made, 200 for one that was already there (the same file, a second
    review); with `location`, the row's `url` goes in the Location header."""
    return Response(
        body,
        status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        headers={"Location": body["url"]} if location else None,
    )


def parse_filters(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """Validated query parameters; a bad value is a 400 in the API's error shape."""
    filters = serializer_class(data=request.query_params)
    filters.is_valid(raise_exception=True)
    return filters.validated_data


def parse_input(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def ordering_field(*fields: str, default: str) -> serializers.ChoiceField:
    choices = [f for name in fields for f in (name, f"-{name}")]
    return serializers.ChoiceField(
        choices=choices, required=False, default=default, help_text="Sort key; prefix with - for descending."
    )


def page_of(serializer_class: type[serializers.Serializer]) -> serializers.Serializer:
    """The schema of one page of a list, as `paginated` returns it."""
    name = serializer_class.__name__.removesuffix("Serializer").removesuffix("Output")
    return inline_serializer(
        f"Paginated{name}List",
        {
            "count": serializers.IntegerField(help_text="Items across all pages."),
            "next": serializers.URLField(allow_null=True, help_text="Next page, or null."),
            "previous": serializers.URLField(allow_null=True, help_text="Previous page, or null."),
            "results": serializer_class(many=True),
        },
    )


PAGE_PARAMETERS = [
    OpenApiParameter("page", OpenApiTypes.INT, description="Page number, from 1."),
    OpenApiParameter("page_size", OpenApiTypes.INT, description="Items per page (at most 200)."),
]


# GET, PATCH and DELETE of one row, the same for a collection and a document. A subclass says
# how to find the row for a user and a minimum role (`find`: 404 for an outsider, 403 for a lower
# role), how to load it for its output shape (`shown`), and the services that change and delete
# it; `editor` is the role those two need. Each subclass documents its methods with
# `detail_schema`. (A comment, not a docstring: the schema would take it as every
# operation's description.)
class DetailApi(APIView):

    output_serializer: ClassVar[type[serializers.Serializer]]
    input_serializer: ClassVar[type[serializers.Serializer]]
    editor: ClassVar[Role]

    def find(self, *, user: Any, minimum: Role, **url: Any) -> Model:
        raise NotImplementedError

    def shown(self, obj: Any) -> Model:
        raise NotImplementedError

    def change(self, obj: Any, data: dict[str, Any]) -> None:
        raise NotImplementedError

    def remove(self, obj: Any) -> None:
        raise NotImplementedError

    def get(self, request: Request, **url: Any) -> Response:
        obj = self.find(user=request.user, minimum=Role.VIEWER, **url)
        return Response(serialized(self.output_serializer, self.shown(obj), request))

    def patch(self, request: Request, **url: Any) -> Response:
        obj = self.find(user=request.user, minimum=self.editor, **url)
        self.change(obj, parse_input(self.input_serializer, request))
        return Response(serialized(self.output_serializer, self.shown(obj), request))

    def delete(self, request: Request, **url: Any) -> Response:
        self.remove(self.find(user=request.user, minimum=self.editor, **url))
        return Response(status=status.HTTP_204_NO_CONTENT)


def detail_schema(
    name: str, output: type[serializers.Serializer], update: type[serializers.Serializer], *,
    get: str, patch: str, delete: str,
) -> Any:
    """The schema of a DetailApi's methods: operations `{name}_retrieve/_update/_destroy` with these summaries."""
    return extend_schema_view(
        get=extend_schema(
            operation_id=f"{name}_retrieve", summary=get, responses={200: output, **error_responses(404)}
        ),
        patch=extend_schema(
            operation_id=f"{name}_update",
            summary=patch,
            request=update,
            responses={200: output, **error_responses(400, 403, 404)},
        ),
        delete=extend_schema(
            operation_id=f"{name}_destroy", summary=delete, responses={204: None, **error_responses(403, 404)}
        ),
    )
