"""REST API for questions (runs), their citations and the configuration names (/api/v1/; reviews: agent.api_reviews).

Asking is asynchronous: `POST /runs/` validates, stores a QUEUED run, enqueues it and answers
202 with the run's URL; the client polls `GET /runs/{id}/` until `status` is done or failed.
Every lookup is scoped by agent.selectors / knowledge.selectors: outsiders get 404.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from agent import selectors
from agent.configs import config_choices
from agent.models import OUTCOME_CHOICES, Citation, Run, RunStep
from agent.verify import quote_span
from knowledge import selectors as knowledge_selectors
from knowledge.api_common import (
    PAGE_PARAMETERS,
    ordering_field,
    page_of,
    paginated,
    parse_filters,
    parse_input,
    saved,
)
from knowledge.api_errors import error_responses
from knowledge.models import Role

# ---------------------------------------------------------------------------
# Output shapes
# ---------------------------------------------------------------------------


# Drops the fields named in WEB_FIELDS where no web search provider is configured: then the
# feature does not exist in the API's bodies nor in its schema (a comment, not a docstring,
# so the schema's component descriptions do not inherit it).
class WebFieldsMixin:

    WEB_FIELDS: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from agent.web.search import web_search_available

        super().__init__(*args, **kwargs)
        if not web_search_available():
            for name in self.WEB_FIELDS:
                self.fields.pop(name, None)  # type: ignore[attr-defined]


class CitationOutputSerializer(WebFieldsMixin, serializers.Serializer):
    WEB_FIELDS = ("source_url", "fetched_at")

    marker = serializers.IntegerField(help_text="The n of [n] in the answer.")
    document_id = serializers.IntegerField(
        source="chunk.document_id",
        allow_null=True,
        default=None,
        help_text="Null once the document was deleted.",
    )
    document_title = serializers.CharField()
    collection = serializers.SlugField(
        source="collection.slug", allow_null=True, default=None,
        help_text="Slug of the collection the passage came from (a run may search several); null once deleted.",
    )
    page = serializers.IntegerField()
    chunk_id = serializers.IntegerField(allow_null=True)
    chunk_text = serializers.CharField(help_text="Exactly the text that was retrieved and audited.")
    quote = serializers.CharField(help_text="The supporting span the auditor quoted.")
    quote_start = serializers.SerializerMethodField(
        help_text="Where the quote sits in chunk_text: chunk_text[quote_start:quote_end] (-1 if not found)."
    )
    quote_end = serializers.SerializerMethodField(
        help_text="End offset of the quote in chunk_text; -1 if none."
    )
    verified = serializers.BooleanField()
    source_url = serializers.CharField(help_text="Web evidence: the page's URL (empty for a collection passage).")
    fetched_at = serializers.DateTimeField(allow_null=True, help_text="Web evidence: when the page was fetched.")

    def _span(self, obj: Citation) -> tuple[int, int]:
        if not hasattr(obj, "_api_span"):
            obj._api_span = quote_span(obj.quote, obj.chunk_text, obj.quote_start) or (-1, -1)  # type: ignore[attr-defined]
        return obj._api_span  # type: ignore[attr-defined]

    def get_quote_start(self, obj: Citation) -> int:
        return self._span(obj)[0]

    def get_quote_end(self, obj: Citation) -> int:
        return self._span(obj)[1]


class StepOutputSerializer(serializers.Serializer):
    ordinal = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=RunStep.Kind.choices)
    attempt = serializers.IntegerField(help_text="0 for the first pass, 1..2 for retries.")
    duration_ms = serializers.IntegerField()
    llm_calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField()
    output = serializers.JSONField(help_text="What the step produced (plan, hits, verdict, ...).")


class ProgressSerializer(serializers.Serializer):
    stage = serializers.CharField(help_text="Message key of the current stage, e.g. RETRIEVING.")
    current = serializers.IntegerField(source="progress_current")
    max = serializers.IntegerField(source="progress_max")


class TimingsSerializer(serializers.Serializer):
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    latency_ms = serializers.IntegerField(allow_null=True)


class UsageSerializer(serializers.Serializer):
    llm_calls = serializers.IntegerField()
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField()


class RunSummarySerializer(WebFieldsMixin, serializers.Serializer):
    WEB_FIELDS = ("used_web",)

    id = serializers.IntegerField()
    url = serializers.SerializerMethodField()
    collection = serializers.SlugField(source="collection.slug")
    user = serializers.CharField(source="user.username", allow_null=True, default=None)
    question = serializers.CharField()
    search_question = serializers.CharField(
        help_text="A follow-up rewritten into the standalone question that was searched; empty otherwise."
    )
    thread = serializers.IntegerField(source="thread_id", allow_null=True, help_text="Thread id of a conversation.")
    collections = serializers.SerializerMethodField(
        help_text="Every collection searched: `collection` first, then the others asked across."
    )
    config_name = serializers.CharField()
    status = serializers.ChoiceField(choices=Run.Status.choices)
    outcome = serializers.CharField(help_text="ANSWER, PARTIAL, REFUSAL, FALSE_PREMISE, CLARIFY; empty until done.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    used_web = serializers.BooleanField(
        help_text="The run searched the web: citations with a source_url come from web pages, not the collection.")

    def get_url(self, obj: Run) -> str:
        return reverse("api:run_detail", kwargs={"pk": obj.pk}, request=self.context["request"])

    def get_collections(self, obj: Run) -> list[str]:
        return [obj.collection.slug, *(c.slug for c in sorted(obj.extra_collections.all(), key=lambda c: c.slug))]


class RunDetailSerializer(RunSummarySerializer):
    WEB_FIELDS = ("web_allowed", "used_web")

    config_hash = serializers.CharField()
    progress = ProgressSerializer(source="*")
    verdict = serializers.CharField()
    answer = serializers.CharField(help_text="Sentences carry [n] markers that match citations[].marker.")
    answer_preview = serializers.SerializerMethodField(
        help_text="While a language model writes the answer: its text so far, not yet verified and without "
                  "citations; empty once the run is final (read `answer`) and with the offline backend."
    )
    missing_evidence = serializers.CharField(help_text="What the papers did not cover (PARTIAL, REFUSAL); with CLARIFY, the request the backend cannot do "
                  "(summarising or comparing whole papers offline), empty for a vague question.")
    suggestions = serializers.ListField(
        child=serializers.CharField(),
        help_text="CLARIFY (and requests the backend cannot do): concrete rephrasings to ask instead.",
    )
    suggested_questions = serializers.SerializerMethodField(
        help_text="The suggestions as run bodies: each `question` with the `documents` (ids) it is about. POST one "
                  "with the run's collection(s) to ask it of that paper only; `documents` is empty when the "
                  "suggestion is about the whole collection."
    )
    documents = serializers.SerializerMethodField(
        help_text="The documents (ids) the question was limited to; empty: every document of the collections."
    )
    error = serializers.CharField(help_text="Why the run failed, when status is failed.")
    retries = serializers.IntegerField()
    index_version = serializers.IntegerField(allow_null=True)
    citations = CitationOutputSerializer(many=True, source="citations.all")
    steps = StepOutputSerializer(many=True, source="steps.all")
    timings = TimingsSerializer(source="*")
    usage = UsageSerializer(source="*")
    web_allowed = serializers.BooleanField(help_text="The asker allowed a web search for this question.")

    @extend_schema_field(inline_serializer("SuggestedQuestion", {
        "question": serializers.CharField(), "documents": serializers.ListField(child=serializers.IntegerField())},
        many=True))
    def get_suggested_questions(self, obj: Run) -> list[dict]:
        return [{"question": q, "documents": documents} for q, documents in obj.suggested]

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_documents(self, obj: Run) -> list[int]:
        return sorted(d.pk for d in obj.documents.all())

    def get_answer_preview(self, obj: Run) -> str:
        return "" if obj.is_final else obj.answer_preview


# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------


def _run_detail(pk: int) -> Run:
    return (
        Run.objects.select_related("collection", "user")
        .prefetch_related("steps", "citations__chunk", "citations__collection", "extra_collections", "documents")
        .get(pk=pk)
    )


class RunListApi(APIView):
    @extend_schema_serializer(component_name="RunListFilter")
    class FilterSerializer(WebFieldsMixin, serializers.Serializer):
        WEB_FIELDS = ("used_web",)

        collection = serializers.SlugField(required=False, help_text="Only runs of this collection.")
        used_web = serializers.BooleanField(required=False, allow_null=True, default=None,
                                            help_text="true: only runs that searched the web; false: only the others.")
        status = serializers.ChoiceField(choices=Run.Status.choices, required=False)
        outcome = serializers.ChoiceField(choices=OUTCOME_CHOICES, required=False)
        config = serializers.CharField(required=False, max_length=50, help_text="Configuration name.")
        mine = serializers.BooleanField(
            required=False,
            default=True,
            help_text="Only your own questions (default); false: every member's.",
        )
        q = serializers.CharField(required=False, max_length=200, help_text="Part of the question.")
        ordering = ordering_field("created_at", "finished_at", default="-created_at")

    @extend_schema_serializer(component_name="RunCreate")
    class InputSerializer(WebFieldsMixin, serializers.Serializer):
        WEB_FIELDS = ("may_search_web",)

        collection = serializers.SlugField(
            required=False, help_text="Slug of a collection you are a member of (or use `collections`)."
        )
        collections = serializers.ListField(
            child=serializers.SlugField(), required=False, max_length=50,
            help_text="Ask across several collections you may read (slugs); one you cannot read is a 404.",
        )
        all_collections = serializers.BooleanField(
            required=False, default=False, help_text="Ask across every collection you may read."
        )
        question = serializers.CharField(max_length=100_000, help_text="Validated further by the service.")
        documents = serializers.ListField(
            child=serializers.IntegerField(min_value=1), required=False, max_length=50,
            help_text="Ask these documents (ids) of the collections only, e.g. a CLARIFY run's "
                      "`suggested_questions[].documents`; one not in them is a 400.")
        config = serializers.ChoiceField(choices=[], required=False, help_text="Configuration name.")
        may_search_web = serializers.BooleanField(
            required=False, allow_null=True, default=None,
            help_text="Allow a web search when the collection falls short (and its owner enabled it); "
                      "omitted: your preference.")

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # Named configurations come from agent.configs; read them per request, not at import.
            self.fields["config"].choices = config_choices(settings.DEFAULT_RUN_CONFIG)

    @extend_schema(
        operation_id="runs_list",
        summary="Questions asked in your collections, newest first",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={200: page_of(RunSummarySerializer), **error_responses(400, 404)},
    )
    def get(self, request: Request) -> Response:
        filters = parse_filters(self.FilterSerializer, request)
        collection = None
        if filters.get("collection"):
            collection, _ = knowledge_selectors.collection_get(user=request.user, slug=filters["collection"])
        runs = selectors.run_search(
            user=request.user, collection=collection, mine=filters["mine"], status=filters.get("status", ""),
            outcome=filters.get("outcome", ""), config=filters.get("config", ""), q=filters.get("q", ""),
            used_web=filters.get("used_web"), ordering=filters["ordering"],
        )
        return paginated(self, request, runs, RunSummarySerializer)

    @extend_schema(
        operation_id="runs_create",
        summary="Ask a question; answered in the background",
        description=(
            "202 with the run (status `queued`) and its URL in `url` and the Location header. "
            "Poll it until `status` is `done` (read `outcome`, `answer`, `citations`) or `failed` (`error`)."
        ),
        request=InputSerializer,
        responses={202: RunDetailSerializer, **error_responses(400, 403, 404)},
    )
    def post(self, request: Request) -> Response:
        from agent.services import run_create, web_preference_get

        data = parse_input(self.InputSerializer, request)
        slugs = [data["collection"]] if data.get("collection") else []
        asked = selectors.ask_collections_get(
            user=request.user, slugs=slugs + list(data.get("collections") or []), everything=data["all_collections"]
        )
        if not asked:
            raise ValidationError(
                {"collection": ["Give `collection`, `collections` or `all_collections` (you are in none)."]}
            )
        web_allowed = data.get("may_search_web")
        run = run_create(
            collection=asked[0],
            user=request.user,
            question=data["question"],
            config_name=data.get("config") or settings.DEFAULT_RUN_CONFIG,
            extra_collections=asked[1:],
            web_allowed=web_preference_get(user=request.user) if web_allowed is None else web_allowed,
            documents=data.get("documents") or (),
        )
        body = RunDetailSerializer(_run_detail(run.pk), context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class RunDetailApi(APIView):
    @extend_schema(
        operation_id="runs_retrieve",
        summary="A run: status, stage progress, outcome, answer, citations, timings, tokens, cost",
        responses={200: RunDetailSerializer, **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        run = selectors.run_get(user=request.user, pk=pk)
        return Response(RunDetailSerializer(_run_detail(run.pk), context={"request": request}).data)


SAVED_DOCUMENT = inline_serializer("SavedDocument", {
    "document_id": serializers.IntegerField(), "title": serializers.CharField(), "created": serializers.BooleanField(),
})


class CitationSaveApi(APIView):
    @extend_schema(
        operation_id="citations_save",
        summary="Add a web citation's page to the run's collection (editor); ingested like an upload",
        # No fields: the citation is named by the path; an empty JSON object is the body.
        request={"application/json": OpenApiTypes.OBJECT},
        responses={
            201: SAVED_DOCUMENT,
            200: OpenApiResponse(SAVED_DOCUMENT, description="The same page (by content hash) is already there."),
            **error_responses(400, 403, 404),
        },
    )
    def post(self, request: Request, pk: int, marker: int) -> Response:
        from django.core.exceptions import ValidationError
        from django.http import Http404

        from agent.services import citation_save_to_collection
        from agent.web.search import web_search_available

        if not web_search_available():
            raise Http404("No such endpoint.")
        citation = selectors.citation_get(user=request.user, run_pk=pk, marker=marker)
        role = knowledge_selectors.collection_role(user=request.user, collection=citation.run.collection)
        if not knowledge_selectors.role_at_least(role, Role.EDITOR):
            raise PermissionDenied("Adding a page to the collection needs the editor role.")
        try:
            document, created = citation_save_to_collection(citation=citation, user=request.user)
        except ValidationError as exc:
            from rest_framework.exceptions import ValidationError as ApiValidationError

            raise ApiValidationError({"citation": exc.messages}) from None
        return saved({"document_id": document.pk, "title": document.title, "created": created}, created=created)


class ConfigListApi(APIView):
    @extend_schema(
        operation_id="configs_list",
        summary="Configuration names a run may use, the default first",
        responses={
            200: inline_serializer(
                "ConfigList", {"configs": serializers.ListField(child=serializers.CharField())}
            ),
            **error_responses(),
        },
    )
    def get(self, request: Request) -> Response:
        return Response({"configs": config_choices(settings.DEFAULT_RUN_CONFIG)})
