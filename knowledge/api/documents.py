"""REST API: documents, their files and their ingestion."""

from __future__ import annotations

from typing import Any

from django.core.files.storage import default_storage
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser, MultiPartParser
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
from knowledge.metadata import MAX_TAG_CHARS, MAX_TAGS, YEAR_MAX, YEAR_MIN
from knowledge.models import Document, IngestJob, Role


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
        queryset = selectors.document_search(
            user=request.user, collection=collection, status=filters.get("status", ""), q=filters.get("q", ""),
            ordering=filters["ordering"],
        )
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
        body = serialized(DocumentOutputSerializer, selectors.document_with_jobs(pk=document.pk), request)
        return saved(body, created=created, location=True)


@extend_schema_serializer(component_name="DocumentUpdate")
class DocumentUpdateSerializer(serializers.Serializer):
    title = serializers.CharField(required=False, max_length=500)
    year = serializers.IntegerField(required=False, allow_null=True, min_value=YEAR_MIN, max_value=YEAR_MAX,
                                    help_text="Publication year; null clears it.")
    tags = serializers.ListField(
        child=serializers.CharField(max_length=MAX_TAG_CHARS), required=False, max_length=MAX_TAGS,
        help_text="Replaces the document's tags; [] clears them.",
    )


@detail_schema(
    "documents",
    DocumentOutputSerializer,
    DocumentUpdateSerializer,
    get="A document with its ingestion status and progress (any member)",
    patch="Correct a document's title, or set its year and tags (editor)",
    delete="Delete a document, its chunks and its place in the index (editor)",
)
class DocumentDetailApi(DetailApi):
    output_serializer = DocumentOutputSerializer
    input_serializer = DocumentUpdateSerializer
    editor = Role.EDITOR

    def find(self, *, user: Any, minimum: Role, pk: int) -> Document:
        return selectors.document_get(user=user, pk=pk, minimum=minimum)[0]

    def shown(self, obj: Document) -> Document:
        return selectors.document_with_jobs(pk=obj.pk)

    def change(self, obj: Document, data: dict[str, Any]) -> None:
        services.document_update(document=obj, **data)

    def remove(self, obj: Document) -> None:
        services.document_delete(document=obj)


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
        document = selectors.document_with_jobs(pk=document.pk)
        return Response(serialized(DocumentOutputSerializer, document, request), status=202)
