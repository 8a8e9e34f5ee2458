"""REST API for follow-up questions, threads and exports (/api/v1/).

A follow-up is asked like a question: `POST /runs/{id}/follow-ups/` (or
`POST /threads/{id}/turns/`, which follows up the thread's last turn) answers 202 with the
new run; the worker rewrites it into a standalone question (`search_question`) and answers
that. Threads are read with the same permissions as runs: any member of their collection.
Exports are plain text downloads: `GET /runs/{id}/export/{md,bib,ris}/`, `GET /threads/{id}/export/`.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from agent import selectors
from agent.api import RunDetailSerializer, RunSummarySerializer, _run_detail
from agent.models import Thread
from knowledge import selectors as knowledge_selectors
from knowledge.api_common import PAGE_PARAMETERS, page_of, paginated, parse_filters, parse_input
from knowledge.api_errors import error_responses


class ThreadSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    collection = serializers.SlugField(source="collection.slug")
    user = serializers.CharField(source="user.username", allow_null=True, default=None)
    title = serializers.CharField(help_text="The first question.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField(help_text="When the last turn was asked.")

    def get_url(self, obj: Thread) -> str:
        return reverse("api:thread_detail", kwargs={"pk": obj.pk}, request=self.context["request"])


class ThreadDetailSerializer(ThreadSummarySerializer):
    turns = serializers.SerializerMethodField(help_text="The questions of the thread, oldest first.")

    @extend_schema_field(RunSummarySerializer(many=True))
    def get_turns(self, obj: Thread) -> list[dict]:
        turns = selectors.thread_turns(obj).prefetch_related("extra_collections")
        return RunSummarySerializer(turns, many=True, context=self.context).data


class FollowUpInputSerializer(serializers.Serializer):
    question = serializers.CharField(max_length=100_000, help_text="The follow-up, as the user typed it.")


def _accepted(request: Request, run_pk: int) -> Response:
    body = RunDetailSerializer(_run_detail(run_pk), context={"request": request}).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


FOLLOW_UP_DESCRIPTION = (
    "202 with the new run (status `queued`); it joins the run's thread (started if needed), with the same "
    "configuration and collections. Poll it like any run: `search_question` shows the standalone question "
    "it was rewritten into."
)


def _follow_up_schema(operation_id: str, summary: str):
    return extend_schema(operation_id=operation_id, summary=summary, description=FOLLOW_UP_DESCRIPTION,
                         request=FollowUpInputSerializer,
                         responses={202: RunDetailSerializer, **error_responses(400, 404)})


def _follow_up(request: Request, run) -> Response:
    from agent.services import follow_up_create

    data = parse_input(FollowUpInputSerializer, request)
    return _accepted(request, follow_up_create(run=run, user=request.user, question=data["question"]).pk)


class RunFollowUpApi(APIView):
    @_follow_up_schema("runs_follow_up", "Ask a follow-up question of a run")
    def post(self, request: Request, pk: int) -> Response:
        return _follow_up(request, selectors.run_get(user=request.user, pk=pk))


class ThreadListApi(APIView):
    @extend_schema_serializer(component_name="ThreadListFilter")
    class FilterSerializer(serializers.Serializer):
        collection = serializers.SlugField(required=False, help_text="Only threads of this collection.")
        mine = serializers.BooleanField(
            required=False, default=True, help_text="Only threads you started (default); false: every member's."
        )

    @extend_schema(
        operation_id="threads_list",
        summary="Conversations (a question and its follow-ups) in your collections, latest activity first",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={200: page_of(ThreadSummarySerializer), **error_responses(400, 404)},
    )
    def get(self, request: Request) -> Response:
        filters = parse_filters(self.FilterSerializer, request)
        collection = None
        if filters.get("collection"):
            collection, _ = knowledge_selectors.collection_get(user=request.user, slug=filters["collection"])
        threads = selectors.thread_list(user=request.user, collection=collection, mine=filters["mine"])
        return paginated(self, request, threads.select_related("collection", "user"), ThreadSummarySerializer)


class ThreadDetailApi(APIView):
    @extend_schema(
        operation_id="threads_retrieve",
        summary="A thread and its turns (run summaries; each run has its answer and citations)",
        responses={200: ThreadDetailSerializer, **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        thread = selectors.thread_get(user=request.user, pk=pk)
        return Response(ThreadDetailSerializer(thread, context={"request": request}).data)


class ThreadTurnListApi(APIView):
    @_follow_up_schema("threads_turns_create", "Ask a follow-up in a thread (of its last turn)")
    def post(self, request: Request, pk: int) -> Response:
        last = selectors.thread_turns(selectors.thread_get(user=request.user, pk=pk)).last()
        if last is None:
            raise Http404("The thread has no turns.")
        return _follow_up(request, last)


def _download(*media_types: str) -> dict:
    return {(200, t): OpenApiResponse(OpenApiTypes.STR, description="The export, as a file download.")
            for t in media_types}


class RunExportApi(APIView):
    @extend_schema(
        operation_id="runs_export",
        summary="A run as Markdown (md: footnoted citations with quotes) or its cited papers (bib, ris)",
        parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=["md", "bib", "ris"],
                                     description="md: the answer; bib / ris: the cited papers.")],
        responses={**_download("text/markdown", "application/x-bibtex", "application/x-research-info-systems"),
                   **error_responses(404)},
    )
    def get(self, request: Request, pk: int, fmt: str) -> HttpResponse:
        from agent.views_threads import EXPORT_TYPES, download, run_export_text

        run = selectors.run_get(user=request.user, pk=pk)
        if fmt not in EXPORT_TYPES:
            raise Http404("No such export format: use md, bib or ris.")
        url = request.build_absolute_uri(f"/runs/{run.pk}/")
        return download(run_export_text(run, fmt, url), fmt, f"run-{run.pk}" + ("" if fmt == "md" else "-sources"))


class ThreadExportApi(APIView):
    @extend_schema(
        operation_id="threads_export",
        summary="A thread as Markdown: every turn with its footnoted citations",
        responses={**_download("text/markdown"), **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        from agent.views_threads import download, thread_export_text

        thread = selectors.thread_get(user=request.user, pk=pk)
        return download(thread_export_text(thread, request.build_absolute_uri(f"/threads/{thread.pk}/")), "md",
                        f"thread-{thread.pk}")
