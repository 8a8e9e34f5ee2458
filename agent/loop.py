"""The agent loop: plan -> retrieve (concurrently) -> audit -> bounded retry -> generate -> verify.

Pure Python over the role interfaces (agent.roles) and a Retriever; the Django side
(agent.services.run_execute) passes callbacks that write RunStep rows and progress as each
step finishes, so a user watching the run sees it move.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from agent.configs import Roles, RunConfig
from agent.local.candidates import gate_anchors, gate_coverage
from agent.local.text import term_set
from agent.roles import Retriever
from agent.steps import (
    AuditStep,
    GenerateStep,
    PlanStep,
    ReformulateStep,
    RetrieveStep,
    RouteDecision,
    RouteStep,
    SourceBrief,
    Step,
    VerifyStep,
)
from agent.types import Answer, AuditResult, Complexity, Plan, Source, SupportLabel, Usage, Verdict

if TYPE_CHECKING:
    from agent.web.evidence import WebRoute


class Stage(StrEnum):
    """Progress message keys (templates translate them)."""

    PLANNING = "PLANNING"
    RETRIEVING = "RETRIEVING"
    AUDITING = "AUDITING"
    REFORMULATING = "REFORMULATING"
    GENERATING = "GENERATING"
    VERIFYING = "VERIFYING"
    SEARCHING_WEB = "SEARCHING_WEB"


@dataclass
class StepRecord:
    step: Step  # the typed record; step.KIND is the RunStep.Kind value
    attempt: int
    duration_ms: int
    usage: Usage = field(default_factory=Usage)

    @property
    def kind(self) -> str:
        return self.step.KIND


@dataclass
class LoopResult:
    answer: Answer
    plan: Plan
    audit: AuditResult | None
    sources: list[Source]  # the context handed to the generator, in marker order
    queries: list[str]
    retries: int
    usage: Usage
    steps: list[StepRecord]
    web_searched: bool = False  # the route sent this run to the web (agent.web)

    @property
    def verdict(self) -> str:
        return self.audit.verdict.value if self.audit else ""


def names_of(query: str, source: Source, share: float) -> bool:
    """Whether a chunk (with its paper's title and its section) names at least `share` of the
    query's names: its anchor terms less cited authors (agent.local.candidates.gate_anchors,
    the candidate document gate's). False when the query names nothing or `share` is 0."""
    if share <= 0 or not gate_anchors(query):
        return False
    return gate_coverage(query, term_set(f"{source.document_title} {source.section} {source.text}")) >= share


class AgentLoop:
    # How much deeper than top_k a retry's queries read (their best chunks not yet known are
    # kept). On the devbench calibration half (bench/calibrate_sufficiency.py --loop) reading
    # twice as deep changed no outcome for the better and one for the worse, against one
    # better at depth 1, so it stays 1 (docs/benchmarks.md).
    retry_depth = 1

    def __init__(self, config: RunConfig, roles: Roles, retriever: Retriever, *,
                 on_step: Callable[[StepRecord], None] | None = None,
                 on_stage: Callable[[Stage], None] | None = None,
                 concurrent: bool = True, retrieval_usage: Callable[[], Usage] | None = None,
                 web: WebRoute | None = None) -> None:
        self.config = config
        self.roles = roles
        self.retriever = retriever
        # The LLM usage of the retriever's searches since it was last asked (an LLM reranker
        # calls the model inside retrieval); recorded on the retrieve step.
        self.retrieval_usage = retrieval_usage
        self.on_step = on_step
        self.on_stage = on_stage
        self.concurrent = concurrent
        # None where no web search provider is configured: then no route step exists at all.
        self.web = web
        self.web_searched = False
        self.steps: list[StepRecord] = []
        self.usage = Usage()

    def _record(self, step: Step, attempt: int, started: float, usage: Usage | None = None) -> None:
        usage = usage or Usage()
        record = StepRecord(step, attempt, int((time.perf_counter() - started) * 1000), usage)
        self.steps.append(record)
        self.usage = self.usage + usage
        if self.on_step:
            self.on_step(record)

    def _stage(self, stage: Stage) -> None:
        if self.on_stage:
            self.on_stage(stage)

    def _retrieve(self, queries: list[str], attempt: int, known: frozenset[int] = frozenset(),
                  deep: bool = False, premises: list[str] | None = None) -> list[Source]:
        """Each query's top k, concurrently; merged round-robin so every query's best is near
        the top. With `known` (a retry), each query's k are the best chunks not already known,
        read from deeper: a reformulated query mostly finds the chunks the first pass had,
        which add nothing to the audit (`retry_depth`). With `deep`, each query also reads
        down to RunConfig.pool and the retriever's sentence search gives the chunks of its
        RunConfig.sentence_pool best sentences, BM25 and the dense search each give their own
        RunConfig.heads best (from the papers of the top k, or naming the query's names:
        RunConfig.head_names), and the chunks next to each
        query's RunConfig.neighbours best join: those come after every top k, marked `pool`
        (the auditor may choose an answering sentence from them, the premise check does not
        read them). With `premises` (RunConfig.premise_search), last, each presupposition's
        own search (_premise_search)."""
        self._stage(Stage.RETRIEVING)
        started = time.perf_counter()
        cfg = self.config
        k = cfg.top_k
        pool = max(k, cfg.pool) if deep else k
        depth = self.retry_depth * k if known else pool
        sentences = getattr(self.retriever, "retrieve_sentences", None) if deep and cfg.sentence_pool else None
        heads = getattr(self.retriever, "retrieve_heads", None) if deep and cfg.heads else None
        neighbours = getattr(self.retriever, "neighbours", None) if deep and cfg.neighbours else None

        def search(query: str) -> tuple[list[Source], list[Source], list[Source]]:
            hits = self.retriever.retrieve(query, k=depth)
            extra = sentences(query, k=cfg.sentence_pool) if sentences else []
            own = heads(query, k=cfg.heads) if heads else []
            return hits, extra, own

        if self.concurrent and len(queries) > 1:
            with ThreadPoolExecutor(max_workers=len(queries)) as workers:
                found = list(workers.map(search, queries))
        else:
            found = [search(q) for q in queries]
        results = [hits for hits, _, _ in found]
        if known:
            results = [[h for h in hits if h.chunk_id not in known][:k] for hits in results]
        merged: list[Source] = []
        seen: set[int] = set()

        def add(query: str, hit: Source, wide: bool) -> None:
            if hit.chunk_id not in seen:
                seen.add(hit.chunk_id)
                merged.append(hit.model_copy(update={"query": query, "pool": wide}))

        for rank in range(k):
            for q, hits in zip(queries, results):
                if rank < len(hits):
                    add(q, hits[rank], False)
        # A retriever's own best chunk joins from a paper the fused top k already found, or
        # from any paper when it names the query's names (RunConfig.head_names): another
        # paper's head is mostly on-topic noise that outranks the answering sentence, but one
        # naming what the query names is the paper asked about, which RRF can leave out of
        # its top k when one list ranks it first and the other lower.
        papers = {s.document_id for s in merged}
        extras = [[*extra, *(h for h in own if h.document_id in papers or names_of(q, h, cfg.head_names))]
                  for q, (_, extra, own) in zip(queries, found)]
        # Then the deeper pools, the sentence search's and the retrievers' own chunks, round-robin too.
        deeper = [hits[k:] for hits in results] + extras
        owners = [*queries, *queries]
        for rank in range(max(map(len, deeper), default=0)):
            for q, hits in zip(owners, deeper):
                if rank < len(hits):
                    add(q, hits[rank], True)
        if neighbours:
            # Last, the chunks next to each query's best RunConfig.neighbours chunks.
            tops = [hits[rank] for rank in range(cfg.neighbours) for hits in results if rank < len(hits)]
            for near in neighbours(tops):
                add(near.query, near, True)
        per_query = {q: [SourceBrief.of(s) for s in [*hits, *extra]] for q, hits, extra in zip(queries, results, extras)}
        for query, hits in self._premise_search(premises or [], merged):
            per_query.setdefault(query, [SourceBrief.of(s) for s in hits])
            for hit in hits:
                if hit.chunk_id not in seen:
                    seen.add(hit.chunk_id)
                    merged.append(hit.model_copy(update={"query": query, "pool": True, "premise_search": True}))
        usage = self.retrieval_usage() if self.retrieval_usage else Usage()
        self._record(RetrieveStep(queries=list(queries), k=k, per_query=per_query), attempt, started, usage)
        return merged

    def _premise_search(self, premises: list[str], found: list[Source]) -> list[tuple[str, list[Source]]]:
        """For each presupposition, one search for the sentence that states what it
        presupposes, without the value it gives, in the papers it names
        (agent.local.premise_check.premise_search): the question's own searches run on its
        topic, and the sentence that contradicts its premise ("The default configuration is
        MEAN." against "Why is MAX pooling SBERT's default?") is often not among their top k."""
        from agent.local.premise_check import premise_search, premise_statement

        search = getattr(self.retriever, "retrieve_within", None)
        # And the premise's own retrieval (RunConfig.premise_sentences): the chunks of the
        # sentences closest to the premise as stated, in the same papers.
        closest = getattr(self.retriever, "retrieve_sentences_within", None) if self.config.premise_sentences else None
        out = []
        for premise in premises:
            query, documents = premise_search(premise, found)
            if query and search is not None:
                out.append((query, search(query, k=self.config.top_k, document_ids=documents)))
            statement, documents = premise_statement(premise, found) if closest is not None else ("", None)
            if statement:
                out.append((statement, closest(statement, k=self.config.premise_sentences, document_ids=documents)))
        return out

    def run(self, question: str) -> LoopResult:
        cfg, roles = self.config, self.roles
        # 1. Plan (baselines: the question itself is the only query and the only fact).
        if cfg.plan:
            self._stage(Stage.PLANNING)
            started = time.perf_counter()
            plan = roles.planner.plan(question)
            self._record(PlanStep(question=question, **dict(plan)), 0, started, plan.usage)
        else:
            plan = Plan(complexity=Complexity.SIMPLE, facts=[question], sub_queries=[question])
        queries = list(plan.sub_queries)
        # 2. Retrieve.
        # With an auditor that chooses sentences from a wider pool (the local one), each search
        # goes deeper (RunConfig.pool, RunConfig.sentence_pool); an LLM auditor would only
        # read a longer prompt.
        deep = cfg.audit and getattr(roles.auditor, "reads_pool", False)
        sources = self._retrieve(queries, 0, deep=deep,
                                 premises=plan.premises if deep and cfg.premise_search else None)
        audit: AuditResult | None = None
        retries = 0
        # 3-4. Audit, and retry with reformulated queries while the auditor asks for it.
        if cfg.audit:
            while True:
                self._stage(Stage.AUDITING)
                started = time.perf_counter()
                can_retry = retries < cfg.max_retries
                audit = roles.auditor.audit(question, plan, sources, can_retry=can_retry)
                self._record(AuditStep(sources=[s.chunk_id for s in sources], can_retry=can_retry, **dict(audit)),
                             retries, started, audit.usage)
                if audit.verdict != Verdict.INSUFFICIENT_RETRY:
                    break
                if not can_retry:
                    # An auditor that asks for a retry it cannot have answers with what it has.
                    audit = audit.model_copy(update={"verdict": _final_verdict(audit)})
                    break
                self._stage(Stage.REFORMULATING)
                started = time.perf_counter()
                reform = roles.reformulator.reformulate(question, plan, audit, queries)
                new = [q for q in reform.sub_queries if q.strip() and q not in queries][:3]
                self._record(ReformulateStep(missing=audit.missing, tried=list(queries), sub_queries=new),
                             retries + 1, started, reform.usage)
                retries += 1
                if not new:
                    # Nothing new to search for: the next audit is the last.
                    retries = cfg.max_retries
                    continue
                queries.extend(new)
                # Evidence from earlier passes is kept; new chunks are appended after it.
                # A chunk of the deeper pool that a reformulated query ranks in its top k is
                # evidence like any other from now on.
                known = {s.chunk_id for s in sources if not s.pool}
                found = self._retrieve(new, retries, known=frozenset(known))
                again = {s.chunk_id for s in found}
                # A chunk only the premise search had joins as the retry's own, in the place
                # it would have without that search.
                sources = [s.model_copy(update={"pool": False}) if s.chunk_id in again else s
                           for s in sources if not (s.premise_search and s.chunk_id in again)]
                have = {s.chunk_id for s in sources}
                sources = _premise_last(sources + [s for s in found if s.chunk_id not in have])
        # 4b. Still short after the retries: the route may add web evidence (agent.web).
        if self.web is not None and audit is not None:
            sources, audit = self._route_web(question, plan, sources, audit, retries)
        # 5. Generate from the evidence, then verify every citation.
        self._stage(Stage.GENERATING)
        started = time.perf_counter()
        draft = roles.generator.generate(question, sources, audit)
        self._record(GenerateStep(sources=[s.chunk_id for s in sources], verdict=audit.verdict if audit else None,
                                  **dict(draft)), retries, started, draft.usage)
        self._stage(Stage.VERIFYING)
        started = time.perf_counter()
        # The cited documents' whole text decides a word a line break cut (knowledge.vocabulary).
        answer = roles.verifier.verify(draft, sources, question=question,
                                       vocabulary=getattr(self.retriever, "vocabulary", None))
        self._record(VerifyStep(sentences=len(draft.sentences), kept=len(answer.sentences), dropped=answer.dropped,
                                citations=answer.citations), retries, started)
        return LoopResult(answer=answer, plan=plan, audit=audit, sources=sources, queries=queries,
                          retries=retries, usage=self.usage, steps=self.steps, web_searched=self.web_searched)

    def _route_web(self, question: str, plan: Plan, sources: list[Source], audit: AuditResult,
                   attempt: int) -> tuple[list[Source], AuditResult]:
        """Record the KB-only/web decision; on web, search with the planner's sub-queries and
        audit the collection's and the web's evidence together, as one last pass."""
        from agent.web.evidence import route_decision

        web = self.web
        assert web is not None
        started = time.perf_counter()
        decision, reason = route_decision(audit.verdict, enabled_for_collection=web.enabled_for_collection,
                                          allowed_for_question=web.allowed_for_question, on_partial=web.on_partial)
        self._record(RouteStep(verdict=audit.verdict, enabled_for_collection=web.enabled_for_collection,
                               allowed_for_question=web.allowed_for_question, decision=decision, reason=reason),
                     attempt, started)
        if decision != RouteDecision.WEB:
            return sources, audit
        self.web_searched = True
        self._stage(Stage.SEARCHING_WEB)
        started = time.perf_counter()
        step, found = web.evidence.gather(list(plan.sub_queries), k=self.config.top_k)
        self._record(step, attempt, started)
        if not found:
            return sources, audit
        sources = _premise_last(sources + found)
        self._stage(Stage.AUDITING)
        started = time.perf_counter()
        audit = self.roles.auditor.audit(question, plan, sources, can_retry=False)
        if audit.verdict == Verdict.INSUFFICIENT_RETRY:
            audit = audit.model_copy(update={"verdict": _final_verdict(audit)})
        self._record(AuditStep(sources=[s.chunk_id for s in sources], can_retry=False, **dict(audit)),
                     attempt, started, audit.usage)
        return sources, audit


def _premise_last(sources: list[Source]) -> list[Source]:
    """The chunks only the premise search found after all others: a chunk's place among the
    sources is a feature of the answer's selection (agent.local.selection, chunk_rank), which
    must not move for a chunk it never reads."""
    return [s for s in sources if not s.premise_search] + [s for s in sources if s.premise_search]


def _final_verdict(audit: AuditResult) -> Verdict:
    usable = (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)
    if any(s.label in usable for f in audit.facts for s in f.sentences):
        return Verdict.PARTIALLY_SUFFICIENT
    return Verdict.INSUFFICIENT_REFUSE
