"""Writes for runs: create (validated, queued after commit) and execute (the loop, recorded)."""

from __future__ import annotations

import logging
import time
import unicodedata
from collections.abc import Sequence
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agent.models import Citation, Run, RunStep, Thread, WebPage
from knowledge import jobs
from knowledge.jobs import JobKind
from knowledge.models import Chunk, Collection

logger = logging.getLogger(__name__)

_ALLOWED_CONTROL = {"\n", "\r", "\t"}


def question_clean(question: str) -> str:
    """The question stripped, or ValidationError saying what is wrong with it."""
    if not isinstance(question, str):
        raise ValidationError("The question must be text.", code="invalid")
    if "\x00" in question or any(
        unicodedata.category(ch) in ("Cc", "Cs", "Co") and ch not in _ALLOWED_CONTROL for ch in question
    ):
        raise ValidationError(
            "The question contains control or binary characters; type or paste plain text.", code="binary"
        )
    question = question.strip()
    if not question:
        raise ValidationError("Type a question first.", code="empty")
    limit = settings.QUESTION_MAX_CHARS
    if len(question) > limit:
        raise ValidationError(
            f"The question is {len(question)} characters long; the limit is {limit}. Shorten it.", code="too_long"
        )
    return question


def _enqueue(run_id: int) -> None:
    from agent.tasks import answer_run
    from knowledge.dispatch import send_task_on_commit

    # A broker that is down loses only the nudge; the sweeper re-sends it for the QUEUED row.
    send_task_on_commit(answer_run, run_id)


def run_create(*, collection: Collection, user, question: str, config_name: str | None = None,
               benchmark_run=None, benchmark_question=None, enqueue: bool = True,
               extra_collections: Sequence[Collection] = (), thread: Thread | None = None,
               web_allowed: bool = False, documents: Sequence[int] = ()) -> Run:
    """Validate the question and configuration, save a QUEUED Run and queue it after commit.

    enqueue=False leaves it queued for the caller to execute in-process (run_execute).
    `extra_collections` are searched too (the caller checked that the user may read them);
    `thread` makes the run a follow-up, rewritten into a standalone question by the worker.
    `web_allowed` (the asker's "may search the web") is kept only where a web search
    provider is configured. `documents` (ids) limits the run to those documents of its
    collections (a rephrasing picked after CLARIFY asks its paper only); one that is not in
    them is a ValidationError.
    """
    from agent.configs import config_hash, config_record, get_config
    from agent.web.search import web_search_available

    question = question_clean(question)
    config_name = config_name or settings.DEFAULT_RUN_CONFIG
    try:
        config = get_config(config_name)
    except ValueError as exc:
        raise ValidationError(str(exc), code="unknown_config") from None
    record = config_record(config, backend=settings.LLM_BACKEND, model=settings.LLM_MODEL,
                           answer_by=settings.LLM_ANSWER_BY)
    run = Run(
        collection=collection, user=user, question=question, config_name=config.name,
        config=record, config_hash=config_hash(record), index_version=collection.index_version,
        benchmark_run=benchmark_run, benchmark_question=benchmark_question, thread=thread,
        web_allowed=bool(web_allowed) and web_search_available(),
    )
    # A run from `manage.py ask` has no user; everything else must be valid.
    run.full_clean(exclude=["user"] if user is None else None)
    extra = [c for c in dict.fromkeys(extra_collections) if c.pk != collection.pk]
    scope = _scope_documents(documents, [collection, *extra])
    with transaction.atomic():
        run.save()
        if extra:
            run.extra_collections.set(extra)
        if scope:
            run.documents.set(scope)
        if thread is not None:
            Thread.objects.filter(pk=thread.pk).update(updated_at=timezone.now())
        if enqueue:
            _enqueue(run.pk)
    return run


def _scope_documents(ids: Sequence[int], collections: Sequence[Collection]) -> list:
    """The documents a run is limited to, or ValidationError naming an id that is not one of
    the collections' (a stranger's document is as unknown as a missing one)."""
    from knowledge.models import Document

    wanted = list(dict.fromkeys(int(i) for i in ids))
    found = list(Document.objects.filter(pk__in=wanted, collection__in=collections))
    missing = sorted(set(wanted) - {d.pk for d in found})
    if missing:
        raise ValidationError(f"No such document in the collections asked: {', '.join(map(str, missing))}.",
                              code="unknown_document")
    return found


THREAD_TITLE_CHARS = 300


@transaction.atomic
def follow_up_create(*, run: Run, user, question: str) -> Run:
    """Ask `question` as a follow-up of `run`: a new run in the run's thread (started here when
    the run has none), with the same configuration and the same collections.

    The caller has checked that the user may read the run (agent.selectors.run_get); every
    member who may read a run may follow it up, as every member may ask.
    """
    question = question_clean(question)
    thread = run.thread
    if thread is None:
        thread = Thread.objects.create(collection=run.collection, user=run.user or user,
                                       title=run.question[:THREAD_TITLE_CHARS])
        Run.objects.filter(pk=run.pk).update(thread=thread)
    return run_create(collection=run.collection, user=user, question=question, config_name=run.config_name,
                      extra_collections=list(run.extra_collections.all()), thread=thread,
                      documents=list(run.documents.values_list("pk", flat=True)))


def _thread_history(run: Run) -> list:
    """The turns of the run's thread before it, oldest first, as agent.threads.Turn."""
    from agent.threads import HISTORY_TURNS, Turn

    # A failed turn answered nothing (its retry is a later turn of its own): it is no context.
    earlier = list(Run.objects.filter(thread_id=run.thread_id, pk__lt=run.pk).exclude(
        status=Run.Status.FAILED).order_by("-pk")[:HISTORY_TURNS])
    titles: dict[int, list[str]] = {}
    for run_id, title in Citation.objects.filter(run__in=earlier).order_by("marker").values_list(
            "run_id", "document_title"):
        if title not in titles.setdefault(run_id, []):
            titles[run_id].append(title)
    return [Turn(question=r.question, searched_as=r.search_question, answer=r.answer,
                 titles=tuple(titles.get(r.pk, ()))) for r in reversed(earlier)]


def _run_reset(run_id: int) -> None:
    # The next attempt writes a clean trace: the steps of a dead one are removed.
    RunStep.objects.filter(run_id=run_id).delete()
    Citation.objects.filter(run_id=run_id).delete()
    WebPage.objects.filter(run_id=run_id).delete()


# The lifecycle of a Run row (knowledge.jobs): claim, progress, end, sweep.
RUN_JOB = JobKind(
    name="runs", model=Run, task="agent.tasks.answer_run", time_limit_setting="ANSWER_TIME_LIMIT",
    doing="while answering", claimed={"stage": "PLANNING", "progress_current": 0, "answer_preview": ""},
    stopped={"stage": ""},
    requeued={"progress_current": 0}, reset=_run_reset,
)


def run_claim(run_id: int) -> Run | None:
    """Claim the run (knowledge.jobs.claim: QUEUED, or a dead attempt past its hard time
    limit, becomes RUNNING; after MAX_ATTEMPTS it ends FAILED); None when another delivery
    has it, or it is final or gone."""
    if not jobs.claim(RUN_JOB, run_id):
        return None
    return Run.objects.select_related("collection").get(pk=run_id)


def run_fail(*, run_id: int, error: str, usage=None) -> None:
    """End a run that is not final as FAILED with a reason (never touches a final run).

    The LLM calls, tokens and cost spent before the failure are kept: the steps that
    finished, plus `usage` of the call that failed (LLMError.usage), since they were billed.
    """
    from django.db.models import Sum

    spent = RunStep.objects.filter(run_id=run_id).aggregate(
        calls=Sum("llm_calls"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), cost=Sum("cost_usd")
    )
    jobs.fail(
        RUN_JOB, run_id, error,
        llm_calls=(spent["calls"] or 0) + (usage.calls if usage else 0),
        prompt_tokens=(spent["prompt"] or 0) + (usage.prompt_tokens if usage else 0),
        completion_tokens=(spent["completion"] or 0) + (usage.completion_tokens if usage else 0),
        cost_usd=(spent["cost"] or Decimal(0)) + Decimal(str(round(usage.cost_usd, 6) if usage else 0)),
    )


def _web_route(run: Run, web_evidence=None):
    """The run's web route (agent.web), or None where no provider is configured."""
    from agent.web.evidence import WebEvidence, WebRoute
    from agent.web.fetch import FetchPolicy, SafeFetcher
    from agent.web.search import provider_from_settings

    if web_evidence is None:
        provider = provider_from_settings()
        if provider is None:
            return None

        def embed(texts):
            from knowledge.embeddings import get_embedder

            # Transient: the vectors of web passages live for this run only.
            return get_embedder("local").embed(texts)

        web_evidence = WebEvidence(provider, SafeFetcher(FetchPolicy.from_settings()),
                                   pages=settings.WEB_SEARCH_PAGES, embed=embed)
    return WebRoute(web_evidence, enabled_for_collection=run.collection.web_search_enabled,
                    allowed_for_question=run.web_allowed, on_partial=settings.WEB_SEARCH_ON_PARTIAL)


def run_execute(*, run_id: int, roles=None, retriever=None, rewriter=None, web_evidence=None) -> Run | None:
    """Claim the run and answer it; returns None if another delivery already has it.

    Writes a RunStep per step as it finishes, stage/progress as the loop moves, then the
    outcome, answer and Citation rows in one transaction. Errors propagate to the caller
    (the task), which marks the run FAILED with a reason.
    """
    from agent.configs import RunConfig, build_roles
    from agent.llm_roles import streaming_answer
    from agent.loop import AgentLoop, Stage, StepRecord
    from agent.retrieval import CollectionRetriever, MultiCollectionRetriever, ThreadRetriever, portal_embed
    from agent.steps import STEP_SCHEMA_VERSION

    run = run_claim(run_id)
    if run is None:
        logger.info("run %s is gone, final or taken by another delivery", run_id)
        return None
    known = {f.name for f in RunConfig.__dataclass_fields__.values()}
    config = RunConfig(**{k: v for k, v in run.config.items() if k in known})
    backend = run.config.get("backend", settings.LLM_BACKEND)
    scope = sorted(run.documents.values_list("pk", flat=True)) or None
    roles = roles or build_roles(config, backend, embed=portal_embed(), documents=scope)
    retrieval_usage = None
    rewrite_usage = None
    if run.thread_id and not run.search_question:
        # A follow-up: search for its standalone form, and show it ("Searched as: ...").
        from agent.threads import build_rewriter

        rewritten = (rewriter or build_rewriter(backend)).rewrite(run.question, _thread_history(run))
        run.search_question = rewritten.question
        rewrite_usage = rewritten.usage
        Run.objects.filter(pk=run.pk).update(search_question=run.search_question, updated_at=timezone.now())
    collections = [run.collection, *run.extra_collections.order_by("pk")]
    if retriever is None:
        inner = (MultiCollectionRetriever(collections, mode=config.retrieval_mode, rerank=config.rerank,
                                          document_ids=scope)
                 if len(collections) > 1 else
                 CollectionRetriever(run.collection, mode=config.retrieval_mode, rerank=config.rerank,
                                     document_ids=scope))
        retrieval_usage = inner.take_usage
        concurrent = inner.thread_safe
        retriever = ThreadRetriever(inner) if concurrent else inner
    else:
        concurrent = getattr(retriever, "thread_safe", True)
    ordinal = [0]
    max_progress = 6 + 3 * config.max_retries

    def on_step(step: StepRecord) -> None:
        ordinal[0] += 1
        data_in, data_out = step.step.columns()
        RunStep.objects.create(
            run=run, ordinal=ordinal[0], kind=step.kind, attempt=step.attempt, input=data_in,
            output=data_out, schema_version=STEP_SCHEMA_VERSION, duration_ms=step.duration_ms,
            llm_calls=step.usage.calls,
            prompt_tokens=step.usage.prompt_tokens, completion_tokens=step.usage.completion_tokens,
            cost_usd=Decimal(str(round(step.usage.cost_usd, 6))),
        )
        jobs.heartbeat(RUN_JOB, run.pk, progress_current=min(ordinal[0], max_progress), progress_max=max_progress)

    def on_stage(stage: Stage) -> None:
        jobs.heartbeat(RUN_JOB, run.pk, stage=stage.value)

    started = time.perf_counter()
    web = _web_route(run, web_evidence)
    loop = AgentLoop(config, roles, retriever, on_step=on_step, on_stage=on_stage, concurrent=concurrent,
                     retrieval_usage=retrieval_usage, web=web)
    sink = _preview_writer(run.pk) if backend != "local" and settings.LLM_STREAM else None
    # The preview joins line-break hyphens by the same evidence as the verifier (agent.llm.stream).
    with streaming_answer(sink, vocabulary=getattr(retriever, "vocabulary", None)):
        result = loop.run(run.asked_as)
    if rewrite_usage is not None:
        result.usage = result.usage + rewrite_usage
    latency = int((time.perf_counter() - started) * 1000)
    _save_result(run, result, latency, fetched=web.evidence.fetched if web else None)
    run.refresh_from_db()
    return run


# The preview is written at most this often: a model streams tens of tokens a second, and
# the page polls once a second.
PREVIEW_WRITE_SECONDS = 0.4


def _preview_writer(run_id: int):
    """A sink for agent.llm_roles.streaming_answer: the answer so far into Run.answer_preview.

    Touches updated_at, so the run page's polling cursor changes and it re-renders.
    """
    last = [0.0]

    def write(text: str) -> None:
        now = time.monotonic()
        if now - last[0] < PREVIEW_WRITE_SECONDS:
            return
        last[0] = now
        Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(
            answer_preview=text[:20000], updated_at=timezone.now())

    return write


@transaction.atomic
def _save_result(run: Run, result, latency_ms: int, fetched: dict | None = None) -> None:
    answer = result.answer
    by_id = {s.chunk_id: s for s in result.sources}
    live = dict(Chunk.objects.filter(pk__in=[c.chunk_id for c in answer.citations]).values_list(
        "pk", "document__collection_id"))
    for ref in answer.citations:
        source = by_id[ref.chunk_id]
        Citation.objects.create(
            run=run, marker=ref.marker, chunk_id=ref.chunk_id if ref.chunk_id in live else None,
            collection_id=live.get(ref.chunk_id),
            document_title=source.document_title[:500], page=source.page, chunk_text=source.text,
            quote=ref.quote, quote_start=ref.quote_start, verified=ref.verified,
            **_web_citation_fields(run, source, fetched or {}),
        )
    usage = result.usage
    jobs.finish(
        RUN_JOB, run.pk, outcome=answer.outcome.value, verdict=result.verdict,
        answer=answer.text, missing_evidence=answer.missing_note, suggestions=answer.suggestions,
        suggestion_documents=answer.suggestion_documents,
        retries=result.retries,
        llm_calls=usage.calls, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
        cost_usd=Decimal(str(round(usage.cost_usd, 6))), latency_ms=latency_ms,
        context_chunk_ids=[s.chunk_id for s in result.sources if s.chunk_id > 0], used_web=result.web_searched,
        progress_current=F("progress_max"),
    )


def _web_citation_fields(run: Run, source, fetched: dict) -> dict:
    """A web citation's URL, fetch time and the page's bytes (one WebPage row per page and run)."""
    import hashlib
    from datetime import datetime

    if not source.from_web:
        return {}
    fields = {"source_url": source.url[:2000],
              "fetched_at": datetime.fromisoformat(source.fetched_at) if source.fetched_at else None}
    page = fetched.get(source.url)
    if page is not None:
        fields["web_page"], _ = WebPage.objects.get_or_create(
            run=run, sha256=hashlib.sha256(page.body).hexdigest(),
            defaults={"url": page.url[:2000], "final_url": page.final_url[:2000], "title": source.document_title[:300],
                      "content_type": page.content_type, "charset": page.charset[:40], "body": page.body,
                      "fetched_at": page.fetched_at},
        )
    return fields


def citation_save_to_collection(*, citation: Citation, user) -> tuple:
    """Add a web citation's page to the run's collection; returns (Document, created).

    Editors and owners only (knowledge.services.document_upload checks the role). The
    fetched bytes become the file, so the normal pipeline ingests exactly what was cited;
    the same page twice (same sha256) is reported as already there. The document keeps the
    page's URL and fetch time in its metadata.
    """
    from django.core.files.base import ContentFile
    from django.utils.text import slugify

    from knowledge import services as knowledge_services

    page = citation.web_page
    if page is None:
        raise ValidationError("Only a web citation whose page was kept can be added to the collection.",
                              code="not_web")
    extension = ".txt" if page.content_type == "text/plain" else ".html"
    name = (slugify(page.title)[:80] or "web-page") + extension
    document, created = knowledge_services.document_upload(
        collection=citation.run.collection, user=user, uploaded_file=ContentFile(bytes(page.body), name=name),
    )
    if created:
        document.title = (page.title or page.final_url)[:500]
        document.metadata = {**document.metadata, "source_url": page.final_url or page.url,
                             "fetched_at": page.fetched_at.isoformat()}
        document.save(update_fields=["title", "metadata", "updated_at"])
    return document, created


def web_preference_get(*, user) -> bool:
    from agent.models import WebSearchPreference

    return WebSearchPreference.objects.filter(user=user).values_list("may_search_web", flat=True).first() or False


def web_preference_set(*, user, may_search_web: bool) -> None:
    """The asker's last choice becomes the default of their next question."""
    from agent.models import WebSearchPreference

    WebSearchPreference.objects.update_or_create(user=user, defaults={"may_search_web": bool(may_search_web)})
