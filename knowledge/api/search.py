"""REST API: ranked chunks for a query."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from knowledge import selectors
from knowledge.api_common import MAX_ID
from knowledge.api_errors import UpstreamUnavailable, error_responses
from knowledge.metadata import MAX_TAG_CHARS, MetadataError, parse_year_range
from knowledge.models import Collection

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
        from knowledge.indexing.search import index_search

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
