"""Pieces every API view shares: pagination, validated query parameters, ordering, page schemas."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

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
