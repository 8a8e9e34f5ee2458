"""REST API for the reviews of a run (/api/v1/runs/{id}/reviews/): reviewers grade finished answers."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agent import selectors
from agent.models import Review, Run
from knowledge import selectors as knowledge_selectors
from knowledge.api_common import PAGE_PARAMETERS, page_of, paginated, parse_input, saved
from knowledge.api_errors import Conflict, error_responses
from knowledge.models import Role


class ReviewOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField(source="run_id")
    reviewer = serializers.CharField(source="reviewer.username")
    grade = serializers.ChoiceField(choices=Review.Grade.choices)
    citations_support = serializers.BooleanField(allow_null=True)
    refusal_appropriate = serializers.BooleanField(allow_null=True)
    note = serializers.CharField()
    created_at = serializers.DateTimeField()


class RunReviewListApi(APIView):
    class InputSerializer(serializers.Serializer):
        grade = serializers.ChoiceField(choices=Review.Grade.choices)
        citations_support = serializers.BooleanField(required=False, allow_null=True, default=None)
        refusal_appropriate = serializers.BooleanField(required=False, allow_null=True, default=None)
        note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)

    @extend_schema(
        operation_id="reviews_list",
        summary="Reviews of a run (any member)",
        parameters=PAGE_PARAMETERS,
        responses={200: page_of(ReviewOutputSerializer), **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        run = selectors.run_get(user=request.user, pk=pk)
        reviews = Review.objects.filter(run=run).select_related("reviewer").order_by("-created_at", "-pk")
        return paginated(self, request, reviews, ReviewOutputSerializer)

    @extend_schema(
        operation_id="reviews_create",
        summary="Grade a finished run (reviewer); a second review by the same person replaces the first",
        request=InputSerializer,
        responses={
            201: ReviewOutputSerializer,
            200: OpenApiResponse(ReviewOutputSerializer, description="Your earlier review, updated."),
            **error_responses(400, 403, 404, 409),
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        from agent.review.services import review_create

        run = selectors.run_get(user=request.user, pk=pk)
        role = knowledge_selectors.collection_role(user=request.user, collection=run.collection)
        if not knowledge_selectors.role_at_least(role, Role.REVIEWER):
            raise PermissionDenied("Reviewing needs the reviewer role on this collection.")
        data = parse_input(self.InputSerializer, request)
        if run.status != Run.Status.DONE:
            raise Conflict("Only a finished answer can be reviewed.")
        existed = Review.objects.filter(run=run, reviewer=request.user).exists()
        review = review_create(run=run, reviewer=request.user, **data)
        return saved(ReviewOutputSerializer(review).data, created=not existed)
