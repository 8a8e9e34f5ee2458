"""Web pages as evidence: search, fetch safely, extract like an upload, rank transiently.

The loop calls `WebEvidence.gather(queries, k=...)` with the planner's sub-queries once
the collection has fallen short and the route allows the web (agent.loop). Each page goes
through the same text path as an uploaded HTML file (knowledge.extract.extract_text, then
knowledge.chunking), and its passages are ranked per sub-query by BM25 and, when an
embedder is given, dense cosine, fused by RRF, exactly the retrievers of a collection;
vectors live only for this run (nothing is written to the index or the embedding cache).
The passages come back as Sources with negative chunk ids, the page's URL and fetch time,
and the loop audits them like any other evidence.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from agent.steps import RouteDecision, SourceBrief, WebPageBrief, WebSearchStep
from agent.types import Source, Verdict
from agent.web.fetch import FetchedPage, FetchRefused, SafeFetcher
from agent.web.search import WebResult, WebSearchError, WebSearchProvider

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
# Verdicts after which the collection is "still insufficient" (the retries are spent).
ROUTE_ON = (Verdict.INSUFFICIENT_REFUSE, Verdict.INSUFFICIENT_RETRY)


def route_decision(verdict: Verdict | None, *, enabled_for_collection: bool, allowed_for_question: bool,
                   on_partial: bool = True) -> tuple[RouteDecision, str]:
    """KB only or web, and why, in words for the run page.

    `on_partial` (PORTAL_WEB_SEARCH_ON_PARTIAL): a partial verdict, where the collection
    covers only part of the question, counts as falling short too (docs/web-search.md).
    """
    partial = on_partial and verdict == Verdict.PARTIALLY_SUFFICIENT
    if verdict not in ROUTE_ON and not partial:
        why = f"the collection's evidence was enough to go on ({verdict.value if verdict else 'no audit'})"
        return RouteDecision.KB_ONLY, why
    short = "the collection covers only part of the question" if partial else "the collection falls short"
    if not enabled_for_collection:
        return RouteDecision.KB_ONLY, f"{short}, but its owner has not enabled web search"
    if not allowed_for_question:
        return RouteDecision.KB_ONLY, f"{short}, but the asker did not allow web search"
    return RouteDecision.WEB, f"{short} after the retries, and web search is allowed"


def page_title(page: FetchedPage, fallback: str) -> str:
    match = _TITLE.search(page.text()[:200_000]) if page.content_type != "text/plain" else None
    title = html.unescape(re.sub(r"\s+", " ", match.group(1))).strip() if match else ""
    return (title or fallback or page.final_url)[:300]


def page_passages(page: FetchedPage) -> list[str]:
    """The page's passages, by the text path of an uploaded file of the same type."""
    from knowledge import extract
    from knowledge.chunking import chunk_pages

    media_type = "text/plain" if page.content_type == "text/plain" else "text/html"
    try:
        extracted = extract.extract_text(page.text(), media_type=media_type, max_chars=2_000_000)
    except extract.ExtractError:
        return []
    return [c.text for c in chunk_pages(extracted.pages) if c.text.strip() and not c.is_reference]


def rank_passages(query: str, texts: Sequence[str], *, k: int,
                  embed: Callable[[list[str]], np.ndarray] | None = None) -> list[tuple[int, float]]:
    """(position, score) of the k best passages for the query: BM25 and dense fused by RRF."""
    from knowledge.retrieval.bm25 import BM25Index, top_k
    from knowledge.retrieval.fusion import Ranked, pool_size, rrf
    from knowledge.retrieval.tokenize import tokenize

    if not texts:
        return []
    pool = pool_size(k)
    index = BM25Index.build([tokenize(t) for t in texts])
    positions, scores = index.matching(tokenize(query))
    ranked = {"bm25": Ranked(*top_k(positions, scores, pool))}
    if embed is not None:
        vectors = embed([query, *texts])
        sims = vectors[1:] @ vectors[0]
        order = np.argsort(-sims)[:pool]
        ranked["dense"] = Ranked(order.astype(np.int64), sims[order])
    return [(hit.position, hit.score) for hit in rrf(ranked)[:k]]


class WebEvidence:
    """Search -> fetch -> extract -> rank; remembers what it fetched so a citation can keep the bytes."""

    def __init__(self, provider: WebSearchProvider, fetcher: SafeFetcher, *, pages: int = 3,
                 embed: Callable[[list[str]], np.ndarray] | None = None) -> None:
        self.provider = provider
        self.fetcher = fetcher
        self.pages = pages
        self.embed = embed
        self.fetched: dict[str, FetchedPage] = {}  # url -> page, of the pages that were fetched

    def _search(self, queries: list[str], errors: list[str]) -> list[tuple[str, WebResult]]:
        """Up to `pages` results, taken round-robin over the queries' lists, each URL once."""
        lists = []
        for q in queries:
            try:
                lists.append((q, self.provider.search(q, limit=self.pages)))
            except WebSearchError as exc:
                errors.append(f"{q}: {exc}")
        chosen: list[tuple[str, WebResult]] = []
        seen: set[str] = set()
        for rank in range(self.pages):
            for q, results in lists:
                if rank < len(results) and results[rank].url not in seen and len(chosen) < self.pages:
                    seen.add(results[rank].url)
                    chosen.append((q, results[rank]))
        return chosen

    def _fetch(self, url: str) -> FetchedPage | FetchRefused:
        try:
            return self.fetcher.fetch(url)
        except FetchRefused as exc:
            return exc
        except Exception as exc:  # one odd page must not fail the run; the step says what happened
            return FetchRefused(url, f"the fetch failed ({exc.__class__.__name__}: {exc})")

    def gather(self, queries: list[str], *, k: int) -> tuple[WebSearchStep, list[Source]]:
        errors: list[str] = []
        chosen = self._search(queries, errors)
        with ThreadPoolExecutor(max_workers=max(1, min(4, len(chosen)))) as pool:
            outcomes = list(pool.map(self._fetch, [r.url for _, r in chosen]))
        briefs: list[WebPageBrief] = []
        passages: list[tuple[str, int, FetchedPage]] = []  # (text, page brief index, page)
        for (query, result), outcome in zip(chosen, outcomes):
            if isinstance(outcome, FetchRefused):
                briefs.append(WebPageBrief(url=result.url, title=result.title, query=query, reason=outcome.reason))
                continue
            texts = page_passages(outcome)
            title = page_title(outcome, result.title)
            self.fetched[outcome.url] = outcome
            briefs.append(WebPageBrief(
                url=result.url, title=title, query=query, fetched=True, final_url=outcome.final_url,
                address=outcome.address, bytes=len(outcome.body), sha256=hashlib.sha256(outcome.body).hexdigest(),
                fetched_at=outcome.fetched_at.isoformat(), passages=len(texts),
                reason="" if texts else "no text in the page",
            ))
            passages += [(t, len(briefs) - 1, outcome) for t in texts]
        sources: list[Source] = []
        seen: set[int] = set()
        per_query = [rank_passages(q, [p[0] for p in passages], k=k, embed=self.embed) for q in queries]
        # Round-robin over the queries, like the collection's retrieval, so each query's best is near the top.
        for rank in range(k):
            for q, hits in zip(queries, per_query):
                if rank >= len(hits) or hits[rank][0] in seen:
                    continue
                position, score = hits[rank]
                seen.add(position)
                text, brief_at, page = passages[position]
                brief = briefs[brief_at]
                sources.append(Source(
                    chunk_id=-(position + 1), document_title=brief.title, file_name=page.final_url, page=1,
                    page_end=1, text=text, score=float(score), query=q, url=page.url,
                    fetched_at=brief.fetched_at,
                ))
        step = WebSearchStep(queries=list(queries), provider=self.provider.name, errors=errors, pages=briefs,
                             sources=[SourceBrief.of(s) for s in sources])
        return step, sources


class WebRoute:
    """What the loop needs to route one run: the two permissions and the evidence gatherer."""

    def __init__(self, evidence: WebEvidence, *, enabled_for_collection: bool, allowed_for_question: bool,
                 on_partial: bool = True) -> None:
        self.evidence = evidence
        self.enabled_for_collection = enabled_for_collection
        self.allowed_for_question = allowed_for_question
        self.on_partial = on_partial
