"""REST API for collections, members, documents and search (/api/v1/).

One APIView per use case, with nested serializers, calling services and selectors (HackSoft
style). Every lookup goes through `selectors.collection_get`/`document_get`: an outsider gets
404, a member whose role is too low gets 403. Errors have one shape (knowledge.api_errors).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from knowledge import selectors, services
from knowledge.api_common import (
    MAX_ID,
    PAGE_PARAMETERS,
    ordering_field,
    page_of,
    paginated,
    parse_filters,
    parse_input,
)
from knowledge.api_errors import UpstreamUnavailable, error_responses
from knowledge.metadata import MAX_TAG_CHARS, MAX_TAGS, YEAR_MAX, YEAR_MIN, MetadataError, parse_year_range
from knowledge.models import ROLE_RANK, Collection, Document, IngestJob, Membership, Role, TeamAccess

User = get_user_model()


# ---------------------------------------------------------------------------
# Collections
# ---------------------------------------------------------------------------


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


def _my_roles(user: Any) -> dict[int, Role]:
    """The user's effective role on each of their collections, in two queries (not two per row)."""
    roles: dict[int, Role] = {}
    pairs = list(Membership.objects.filter(user=user).values_list("collection_id", "role"))
    pairs += TeamAccess.objects.filter(team__memberships__user=user).values_list("collection_id", "role")
    for collection_id, role in pairs:
        current = roles.get(collection_id)
        if current is None or ROLE_RANK[Role(role)] > ROLE_RANK[current]:
            roles[collection_id] = Role(role)
    return roles


def _with_counts(queryset: QuerySet[Collection]) -> QuerySet[Collection]:
    return queryset.annotate(document_count=Count("documents", distinct=True))


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
        queryset = selectors.collection_list(user=request.user)
        if filters.get("q"):
            queryset = queryset.filter(name__icontains=filters["q"])
        queryset = _with_counts(queryset).order_by(filters["ordering"], "pk")
        return paginated(self, request, queryset, CollectionOutputSerializer, roles=_my_roles(request.user))

    @extend_schema(
        operation_id="collections_create",
        summary="Create a collection (you become its owner)",
        request=InputSerializer,
        responses={201: CollectionOutputSerializer, **error_responses(400)},
    )
    def post(self, request: Request) -> Response:
        data = parse_input(self.InputSerializer, request)
        collection = services.collection_create(user=request.user, **data)
        collection = _with_counts(Collection.objects.filter(pk=collection.pk)).get()
        body = CollectionOutputSerializer(
            collection, context={"request": request, "roles": {collection.pk: Role.OWNER}}
        )
        return Response(body.data, status=status.HTTP_201_CREATED, headers={"Location": body.data["url"]})


class CollectionDetailApi(APIView):
    @extend_schema_serializer(component_name="CollectionUpdate")
    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(required=False, max_length=200)
        description = serializers.CharField(required=False, allow_blank=True, max_length=5000)

    def _out(self, request: Request, collection: Collection) -> Response:
        collection = _with_counts(Collection.objects.filter(pk=collection.pk)).get()
        return Response(CollectionOutputSerializer(collection, context={"request": request}).data)

    @extend_schema(
        operation_id="collections_retrieve",
        summary="A collection (any member)",
        responses={200: CollectionOutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug)
        return self._out(request, collection)

    @extend_schema(
        operation_id="collections_update",
        summary="Rename or describe a collection (owner)",
        request=InputSerializer,
        responses={200: CollectionOutputSerializer, **error_responses(400, 403, 404)},
    )
    def patch(self, request: Request, slug: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
        data = parse_input(self.InputSerializer, request)
        services.collection_update(collection=collection, **data)
        return self._out(request, collection)

    @extend_schema(
        operation_id="collections_destroy",
        summary="Delete a collection with its documents and runs (owner)",
        responses={204: None, **error_responses(403, 404)},
    )
    def delete(self, request: Request, slug: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.OWNER)
        services.collection_delete(collection=collection)
        return Response(status=status.HTTP_204_NO_CONTENT)


# ---------------------------------------------------------------------------
# Members
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Documents
# ---------------------------------------------------------------------------


class JobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=IngestJob.Status.choices)
    message_key = serializers.CharField(help_text="Current stage, e.g. PARSING_PDF, EMBEDDING.")
    pages_done = serializers.IntegerField()
    pages_total = serializers.IntegerField()
    chunks_done = serializers.IntegerField()
    chunks_total = serializers.IntegerField()
    error = serializers.CharField()
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class DocumentOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    collection = serializers.SlugField(source="collection.slug")
    title = serializers.CharField()
    original_name = serializers.CharField()
    media_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    sha256 = serializers.CharField()
    pages = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Document.Status.choices)
    error = serializers.CharField()
    year = serializers.SerializerMethodField(help_text="Publication year: set by an editor or read from an arXiv identifier.")
    tags = serializers.SerializerMethodField(help_text="Tags an editor set (search filters).")
    metadata = serializers.JSONField(help_text="Everything known: year, tags, arxiv_id, arxiv_category, edited.")
    progress = serializers.SerializerMethodField(help_text="Fraction done of the latest job, 0..1.")
    job = serializers.SerializerMethodField(help_text="The latest ingestion job, null if none.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    url = serializers.SerializerMethodField()
    file_url = serializers.SerializerMethodField()

    @staticmethod
    def _job(obj: Document) -> IngestJob | None:
        jobs = getattr(obj, "latest_jobs", None)
        if jobs is not None:
            return jobs[0] if jobs else None
        return obj.jobs.order_by("-created_at", "-pk").first()

    def get_year(self, obj: Document) -> int | None:
        return (obj.metadata or {}).get("year")

    def get_tags(self, obj: Document) -> list[str]:
        return list((obj.metadata or {}).get("tags", []))

    def get_progress(self, obj: Document) -> float:
        if obj.status == Document.Status.READY:
            return 1.0
        job = self._job(obj)
        if job is None:
            return 0.0
        # Pages are parsed first, then chunks embedded: each counts for half.
        pages = job.pages_done / job.pages_total if job.pages_total else 0.0
        chunks = job.chunks_done / job.chunks_total if job.chunks_total else 0.0
        return round(min(1.0, 0.5 * pages + 0.5 * chunks), 3)

    @extend_schema_field(JobOutputSerializer(allow_null=True))
    def get_job(self, obj: Document) -> dict[str, Any] | None:
        job = self._job(obj)
        return JobOutputSerializer(job).data if job else None

    def get_url(self, obj: Document) -> str:
        return reverse("api:document_detail", kwargs={"pk": obj.pk}, request=self.context["request"])

    def get_file_url(self, obj: Document) -> str:
        return reverse("api:document_file", kwargs={"pk": obj.pk}, request=self.context["request"])


def _documents_with_jobs(queryset: QuerySet[Document]) -> QuerySet[Document]:
    jobs = IngestJob.objects.order_by("-created_at", "-pk")
    return queryset.select_related("collection").prefetch_related(
        Prefetch("jobs", jobs, to_attr="latest_jobs")
    )


class DocumentListApi(APIView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="DocumentListFilter")
    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=Document.Status.choices, required=False)
        q = serializers.CharField(required=False, max_length=200, help_text="Part of the title or file name.")
        ordering = ordering_field("title", "created_at", "status", "size_bytes", default="title")

    @extend_schema_serializer(component_name="DocumentUpload")
    class InputSerializer(serializers.Serializer):
        file = serializers.FileField(help_text="PDF, Markdown, plain text or HTML.")

    @extend_schema(
        operation_id="documents_list",
        summary="Documents of a collection, with ingestion status and progress (any member)",
        parameters=[FilterSerializer, *PAGE_PARAMETERS],
        responses={200: page_of(DocumentOutputSerializer), **error_responses(400, 404)},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug)
        filters = parse_filters(self.FilterSerializer, request)
        queryset = selectors.document_list(user=request.user, collection=collection)
        if filters.get("status"):
            queryset = queryset.filter(status=filters["status"])
        if filters.get("q"):
            queryset = queryset.filter(
                Q(title__icontains=filters["q"]) | Q(original_name__icontains=filters["q"])
            )
        queryset = _documents_with_jobs(queryset.order_by(filters["ordering"], "pk"))
        return paginated(self, request, queryset, DocumentOutputSerializer)

    @extend_schema(
        operation_id="documents_upload",
        summary="Upload a file (editor); ingestion runs in the background",
        description=(
            "Multipart upload in the field `file`. 201 with the new document (status `queued`); 200 "
            "with the existing one when the same file (by sha256) is already in the collection. "
            "Poll the document's URL until `status` is `ready` or `failed`."
        ),
        request={"multipart/form-data": InputSerializer},
        responses={
            201: DocumentOutputSerializer,
            200: OpenApiResponse(DocumentOutputSerializer, description="Already in the collection."),
            **error_responses(400, 403, 404, 413, 415),
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = selectors.collection_get(user=request.user, slug=slug, minimum=Role.EDITOR)
        data = parse_input(self.InputSerializer, request)
        document, created = services.document_upload(
            collection=collection, user=request.user, uploaded_file=data["file"]
        )
        document = _documents_with_jobs(Document.objects.filter(pk=document.pk)).get()
        body = DocumentOutputSerializer(document, context={"request": request}).data
        return Response(
            body,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
            headers={"Location": body["url"]},
        )


class DocumentDetailApi(APIView):
    @extend_schema_serializer(component_name="DocumentUpdate")
    class InputSerializer(serializers.Serializer):
        title = serializers.CharField(required=False, max_length=500)
        year = serializers.IntegerField(required=False, allow_null=True, min_value=YEAR_MIN, max_value=YEAR_MAX,
                                        help_text="Publication year; null clears it.")
        tags = serializers.ListField(
            child=serializers.CharField(max_length=MAX_TAG_CHARS), required=False, max_length=MAX_TAGS,
            help_text="Replaces the document's tags; [] clears them.",
        )

    def _out(self, request: Request, document: Document) -> Response:
        document = _documents_with_jobs(Document.objects.filter(pk=document.pk)).get()
        return Response(DocumentOutputSerializer(document, context={"request": request}).data)

    @extend_schema(
        operation_id="documents_retrieve",
        summary="A document with its ingestion status and progress (any member)",
        responses={200: DocumentOutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, pk: int) -> Response:
        document, _ = selectors.document_get(user=request.user, pk=pk)
        return self._out(request, document)

    @extend_schema(
        operation_id="documents_update",
        summary="Correct a document's title, or set its year and tags (editor)",
        request=InputSerializer,
        responses={200: DocumentOutputSerializer, **error_responses(400, 403, 404)},
    )
    def patch(self, request: Request, pk: int) -> Response:
        document, _ = selectors.document_get(user=request.user, pk=pk, minimum=Role.EDITOR)
        services.document_update(document=document, **parse_input(self.InputSerializer, request))
        return self._out(request, document)

    @extend_schema(
        operation_id="documents_destroy",
        summary="Delete a document, its chunks and its place in the index (editor)",
        responses={204: None, **error_responses(403, 404)},
    )
    def delete(self, request: Request, pk: int) -> Response:
        document, _ = selectors.document_get(user=request.user, pk=pk, minimum=Role.EDITOR)
        services.document_delete(document=document)
        return Response(status=status.HTTP_204_NO_CONTENT)


# What knowledge.sniff accepts; HTML and rows without a type go out as octet-stream.
DOWNLOAD_MEDIA_TYPES = ("application/pdf", "text/markdown", "text/plain", "application/octet-stream")


class DocumentFileApi(APIView):
    @extend_schema(
        operation_id="documents_file",
        summary="Download the uploaded file (any member)",
        description="The file as uploaded, with its sniffed media type, as an attachment.",
        responses={
            **{
                (200, media_type): OpenApiResponse(OpenApiTypes.BINARY, description="The file.")
                for media_type in DOWNLOAD_MEDIA_TYPES
            },
            **error_responses(404),
        },
    )
    def get(self, request: Request, pk: int) -> FileResponse:
        document, _ = selectors.document_get(user=request.user, pk=pk)
        if not document.file or not default_storage.exists(document.file):
            raise NotFound("The file of this document is no longer stored.")
        response = FileResponse(
            default_storage.open(document.file, "rb"),
            as_attachment=True,
            filename=document.original_name or f"document-{document.pk}",
            # Uploaded HTML is never served as HTML: it must not run script on our origin.
            content_type="application/octet-stream"
            if document.media_type in ("", "text/html")
            else document.media_type,
        )
        # The file is a user's upload: never let a browser sniff it into something executable.
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "sandbox"
        return response


class DocumentRetryApi(APIView):
    @extend_schema(
        operation_id="documents_retry",
        summary="Retry the failed ingestion of a document (editor)",
        request=None,
        responses={202: DocumentOutputSerializer, **error_responses(403, 404, 409)},
    )
    def post(self, request: Request, pk: int) -> Response:
        document, _ = selectors.document_get(user=request.user, pk=pk, minimum=Role.EDITOR)
        services.ingest_job_retry(document=document)
        document = _documents_with_jobs(Document.objects.filter(pk=document.pk)).get()
        return Response(DocumentOutputSerializer(document, context={"request": request}).data, status=202)


# ---------------------------------------------------------------------------
# Search
# ---------------------------------------------------------------------------


# A search response carries up to 50 chunks' texts; chunking caps a chunk at 4,000
# characters (knowledge.chunking.DEFAULT_MAX_CHARS), and this bounds the body even for
# chunks stored before that cap existed (a 19 MB chunk once made a 19 MB response).
SEARCH_TEXT_MAX_CHARS = 8000


class SearchHitOutputSerializer(serializers.Serializer):
    chunk_id = serializers.IntegerField()
    score = serializers.FloatField(help_text="Fused score (higher is better).")
    ranks = serializers.DictField(
        child=serializers.IntegerField(allow_null=True),
        help_text="1-based rank per retriever (e.g. bm25, dense); null when outside its candidate pool.",
    )
    scores = serializers.DictField(
        child=serializers.FloatField(allow_null=True), help_text="Score per retriever."
    )
    document_id = serializers.IntegerField()
    document_title = serializers.CharField()
    page_start = serializers.IntegerField()
    page_end = serializers.IntegerField()
    section_title = serializers.CharField()
    text = serializers.CharField(help_text=f"The chunk's text, at most {SEARCH_TEXT_MAX_CHARS:,} characters.")
    text_truncated = serializers.BooleanField(help_text="Whether `text` was cut to that length.")


class SearchApi(APIView):
    @extend_schema_serializer(component_name="SearchQuery")
    class FilterSerializer(serializers.Serializer):
        q = serializers.CharField(max_length=2000, help_text="The query.")
        k = serializers.IntegerField(min_value=1, max_value=50, default=10)
        mode = serializers.ChoiceField(
            choices=["rrf", "minmax", "bm25", "dense"],
            default="rrf",
            help_text="rrf: reciprocal rank fusion; minmax: weighted min-max fusion; or one retriever alone.",
        )
        # The LLM reranker is not offered here: a web request must not wait on the LLM (three
        # slow calls held every gunicorn worker). It runs only inside runs, on the worker.
        rerank = serializers.ChoiceField(
            choices=["sentence"],
            required=False,
            help_text="Rerank the fused pool by best-sentence similarity (offline). LLM reranking "
            "runs only inside a question's run (POST /api/v1/runs/).",
            error_messages={
                "invalid_choice": '"{input}" is not a reranker of this endpoint: use rerank=sentence. '
                "LLM reranking runs only inside a question's run (POST /api/v1/runs/), on the worker."
            },
        )
        document = serializers.ListField(
            child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
            required=False,
            help_text="Only these document ids.",
        )
        title = serializers.CharField(required=False, max_length=500, help_text="Only documents whose title contains this.")
        year = serializers.CharField(required=False, max_length=20, help_text="Only documents of this year (2021) or range (2019-2021).")
        tag = serializers.CharField(required=False, max_length=MAX_TAG_CHARS, help_text="Only documents with this tag.")

        def validate_year(self, value: str) -> tuple[int, int]:
            try:
                return parse_year_range(value)
            except MetadataError as exc:
                raise serializers.ValidationError(str(exc)) from exc

    @extend_schema(
        operation_id="search",
        summary="Ranked chunks for a query, with each retriever's rank (any member)",
        parameters=[FilterSerializer],
        responses={
            200: inline_serializer("SearchResult", {"results": SearchHitOutputSerializer(many=True)}),
            **error_responses(400, 404, 503),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        from knowledge.embeddings import EmbeddingUnavailable, bounded_calls

        collection, _ = selectors.collection_get(user=request.user, slug=slug)
        filters = self.FilterSerializer(
            data={**request.query_params.dict(), "document": request.query_params.getlist("document")}
        )
        filters.is_valid(raise_exception=True)
        params = filters.validated_data
        try:
            # The query may be embedded by a remote service: bounded, since this is a web process.
            with bounded_calls(settings.WEB_OUTBOUND_TIMEOUT_SECONDS):
                hits = self._search(collection, params)
        except EmbeddingUnavailable as exc:
            raise UpstreamUnavailable(str(exc)) from exc
        return Response({"results": SearchHitOutputSerializer(self._results(collection, hits), many=True).data})

    @staticmethod
    def _search(collection: Collection, params: dict[str, Any]) -> list:
        from knowledge.indexing import index_search

        return index_search(
            collection=collection,
            query=params["q"],
            k=params["k"],
            mode=params["mode"],
            document_ids=params.get("document") or None,
            rerank=params.get("rerank"),
            filters={key: params[key] for key in ("title", "year", "tag") if params.get(key)} or None,
        )

    @staticmethod
    def _results(collection: Collection, hits: list) -> list[dict[str, Any]]:
        from knowledge.models import Chunk

        chunks = Chunk.objects.select_related("document").in_bulk([h.chunk_id for h in hits])
        results = []
        for hit in hits:
            chunk = chunks.get(hit.chunk_id)
            # A chunk deleted between the index read and this query is simply left out.
            if chunk is None or chunk.document.collection_id != collection.pk:
                continue
            results.append(
                {
                    "chunk_id": hit.chunk_id,
                    "score": hit.score,
                    "ranks": dict(hit.ranks),
                    "scores": dict(hit.scores),
                    "document_id": chunk.document_id,
                    "document_title": chunk.document.title,
                    "page_start": chunk.page_start,
                    "page_end": chunk.page_end,
                    "section_title": chunk.section_title,
                    "text": chunk.text[:SEARCH_TEXT_MAX_CHARS],
                    "text_truncated": len(chunk.text) > SEARCH_TEXT_MAX_CHARS,
                }
            )
        return results
