"""REST API: the members of a collection."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from knowledge import selectors, services
from knowledge.api_common import PAGE_PARAMETERS, page_of, paginated, parse_input
from knowledge.api_errors import error_responses
from knowledge.models import Collection, Membership, Role

User = get_user_model()


class MemberOutputSerializer(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    role = serializers.ChoiceField(choices=Role.choices)
    created_at = serializers.DateTimeField()


class MemberAddedSerializer(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)
    detail = serializers.CharField()


class MemberListApi(APIView):
    @extend_schema_serializer(component_name="MemberAdd")
    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150)
        role = serializers.ChoiceField(choices=Role.choices)

    @extend_schema(
        operation_id="members_list",
        summary="Members of a collection (any member)",
        parameters=PAGE_PARAMETERS,
        responses={200: page_of(MemberOutputSerializer), **error_responses(404)},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug)
        return paginated(
            self, request, selectors.membership_list(collection=collection), MemberOutputSerializer
        )

    @extend_schema(
        operation_id="members_create",
        summary="Add a member, or change the role of an existing one (owner)",
        request=InputSerializer,
        responses={
            202: OpenApiResponse(MemberAddedSerializer, description=(
                "Not a member before: added if an account of that name exists. The same answer "
                "whether or not it does, so this endpoint cannot tell which usernames exist.")),
            200: OpenApiResponse(MemberOutputSerializer, description="Was already a member: role changed."),
            **error_responses(400, 403, 404),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
        data = parse_input(self.InputSerializer, request)
        user = User.objects.filter(username=data["username"]).first()
        # The owner sees the members already, so a role change may say so; anyone else gets
        # the same 202 whether or not the account exists (issue 15, as the HTML form does).
        existed = user is not None and Membership.objects.filter(collection=collection, user=user).exists()
        membership = services.membership_set(collection=collection, user=user, role=data["role"]) if user else None
        if existed:
            return Response(MemberOutputSerializer(membership).data, status=status.HTTP_200_OK)
        role = Role(data["role"])
        return Response({
            "username": data["username"], "role": role.value,
            "detail": f"If an account called {data['username']} exists, it now has the role "
                      f"{role.label.lower()} in this collection. The members list shows who is in.",
        }, status=status.HTTP_202_ACCEPTED)


class MemberDetailApi(APIView):
    @extend_schema_serializer(component_name="MemberRoleChange")
    class InputSerializer(serializers.Serializer):
        role = serializers.ChoiceField(choices=Role.choices)

    def _membership(self, collection: Collection, username: str) -> Membership:
        membership = (
            Membership.objects.select_related("user")
            .filter(collection=collection, user__username=username)
            .first()
        )
        if membership is None:
            raise NotFound("No such member.")
        return membership

    @extend_schema(
        operation_id="members_update",
        summary="Change a member's role (owner); the last owner cannot be demoted",
        request=InputSerializer,
        responses={200: MemberOutputSerializer, **error_responses(400, 403, 404)},
    )
    def patch(self, request: Request, slug: str, username: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
        membership = self._membership(collection, username)
        data = parse_input(self.InputSerializer, request)
        membership = services.membership_set(collection=collection, user=membership.user, role=data["role"])
        return Response(MemberOutputSerializer(membership).data)

    @extend_schema(
        operation_id="members_destroy",
        summary="Remove a member (owner); the last owner cannot be removed",
        responses={204: None, **error_responses(400, 403, 404)},
    )
    def delete(self, request: Request, slug: str, username: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
        membership = self._membership(collection, username)
        services.membership_remove(collection=collection, user=membership.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
