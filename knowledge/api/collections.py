"""REST API: collections."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from knowledge import selectors, services
from knowledge.api_common import (
    PAGE_PARAMETERS,
    DetailApi,
    detail_schema,
    ordering_field,
    page_of,
    paginated,
    parse_filters,
    parse_input,
    saved,
    serialized,
)
from knowledge.api_errors import error_responses
from knowledge.models import Collection, Role


class CollectionOutputSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    description = serializers.CharField()
    role = serializers.SerializerMethodField(help_text="Your role on the collection.")
    document_count = serializers.IntegerField()
    index_version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField()

    def get_role(self, obj: Collection) -> str:
        roles = self.context.get("roles") or {}
        role = roles.get(obj.pk) or selectors.collection_role(
            user=self.context["request"].user, collection=obj
        )
        return str(role)

    def get_url(self, obj: Collection) -> str:
        return reverse("api:collection_detail", kwargs={"slug": obj.slug}, request=self.context["request"])


class CollectionListApi(APIView):
    @extend_schema_serializer(component_name="CollectionListFilter")
    class FilterSerializer(serializers.Serializer):
        q = serializers.CharField(required=False, max_length=200, help_text="Part of the name.")
        ordering = ordering_field("name", "created_at", default="name")

    @extend_schema_serializer(component_name="CollectionCreate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)

    @extend_schema(
        operation_id="collections_list",
        summary="Collections you are a member of",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={200: page_of(CollectionOutputSerializer), **error_responses(400, 404)},
    )
    def get(self, request: Request) -> Response:
        filters = parse_filters(self.FilterSerializer, request)
        queryset = selectors.collection_search(user=request.user, q=filters.get("q", ""), ordering=filters["ordering"])
        roles = selectors.collection_roles(user=request.user)
        return paginated(self, request, queryset, CollectionOutputSerializer, roles=roles)

    @extend_schema(
        operation_id="collections_create",
        summary="Create a collection (you become its owner)",
        request=InputSerializer,
        responses={201: CollectionOutputSerializer, **error_responses(400)},
    )
    def post(self, request: Request) -> Response:
        data = parse_input(self.InputSerializer, request)
        collection = services.collection_create(user=request.user, **data)
        collection = selectors.collection_with_counts(pk=collection.pk)
        body = serialized(CollectionOutputSerializer, collection, request, roles={collection.pk: Role.OWNER})
        return saved(body, created=True, location=True)


@extend_schema_serializer(component_name="CollectionUpdate")
class CollectionUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(required=False, max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, max_length=5000)


@detail_schema(
    "collections",
    CollectionOutputSerializer,
    CollectionUpdateSerializer,
    get="A collection (any member)",
    patch="Rename or describe a collection (owner)",
    delete="Delete a collection with its documents and runs (owner)",
)
class CollectionDetailApi(DetailApi):
    output_serializer = CollectionOutputSerializer
    input_serializer = CollectionUpdateSerializer
    editor = Role.OWNER

    def find(self, *, user: Any, minimum: Role, slug: str) -> Collection:
        return selectors.collection_get(user=user, slug=slug, minimum=minimum)[0]

    def shown(self, obj: Collection) -> Collection:
        return selectors.collection_with_counts(pk=obj.pk)

    def change(self, obj: Collection, data: dict[str, Any]) -> None:
        services.collection_update(collection=obj, **data)

    def remove(self, obj: Collection) -> None:
        services.collection_delete(collection=obj)
