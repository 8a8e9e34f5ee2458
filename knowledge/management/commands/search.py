"""Search a collection from the shell and see why each chunk was chosen.

    manage.py search --collection SLUG "query" [--mode bm25|dense|rrf|minmax|rerank] [-k N] [--json]
                     [--document ID] [--year 2019-2021] [--tag TAG] [--title TEXT]
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from knowledge.metadata import MetadataError, parse_year_range

MODES = ("bm25", "dense", "rrf", "minmax", "rerank")


class Command(BaseCommand):
    help = "Print the fused ranking of a query over a collection, with each retriever's rank."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("query")
        parser.add_argument("--collection", required=True, help="collection slug")
        parser.add_argument("--mode", default="rrf", choices=MODES,
                            help="rerank = rrf + the reranker named by --reranker")
        parser.add_argument("--reranker", default="sentence", choices=("sentence", "llm"))
        parser.add_argument("-k", type=int, default=5)
        parser.add_argument("--document", type=int, action="append", dest="documents",
                            help="restrict to this document id (repeatable)")
        parser.add_argument("--year", default=None, help="YYYY or YYYY-YYYY")
        parser.add_argument("--tag", default=None)
        parser.add_argument("--title", default=None, help="title contains")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):  # type: ignore[no-untyped-def]
        from knowledge.indexing.search import index_search
        from knowledge.models import Chunk, Collection

        collection = Collection.objects.filter(slug=opts["collection"]).first()
        if collection is None:
            raise CommandError(f"No collection with slug {opts['collection']!r}.")
        filters: dict = {}
        if opts["year"]:
            try:
                filters["year"] = parse_year_range(opts["year"])
            except MetadataError as exc:
                raise CommandError(str(exc)) from exc
        if opts["tag"]:
            filters["tag"] = opts["tag"]
        if opts["title"]:
            filters["title"] = opts["title"]
        mode, rerank = ("rrf", opts["reranker"]) if opts["mode"] == "rerank" else (opts["mode"], None)
        hits = index_search(collection=collection, query=opts["query"], k=opts["k"], mode=mode, rerank=rerank,
                            document_ids=opts["documents"], filters=filters or None)
        chunks = Chunk.objects.select_related("document").in_bulk([h.chunk_id for h in hits])
        rows = []
        # A chunk deleted between the index read and this lookup is left out.
        for rank, hit in enumerate((h for h in hits if h.chunk_id in chunks), 1):
            chunk = chunks[hit.chunk_id]
            rows.append({
                "rank": rank, "chunk_id": hit.chunk_id, "score": round(hit.score, 6),
                "ranks": hit.ranks, "scores": {k: round(v, 6) for k, v in hit.scores.items()},
                "document_id": chunk.document_id, "document": chunk.document.title,
                "pages": [chunk.page_start, chunk.page_end], "section": chunk.section_title,
                "text": chunk.text,
            })
        if opts["json"]:
            self.stdout.write(json.dumps({"collection": collection.slug, "query": opts["query"], "mode": opts["mode"],
                                          "index_version": collection.index_version, "hits": rows}, indent=1))
            return
        if not rows:
            self.stdout.write("No matching chunks.")
            return
        for row in rows:
            why = "  ".join(f"{name}#{r} ({row['scores'][name]:.3f})" for name, r in row["ranks"].items())
            self.stdout.write(f"{row['rank']:>2}. {row['score']:.4f}  {row['document']} p.{row['pages'][0]}"
                              f"  chunk {row['chunk_id']}  [{why}]")
            snippet = " ".join(row["text"].split())
            self.stdout.write(f"    {snippet[:200]}{'...' if len(snippet) > 200 else ''}")
