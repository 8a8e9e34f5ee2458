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
from typing import Any

from agent.configs import Roles, RunConfig
from agent.roles import Retriever
from agent.types import Answer, AuditResult, Complexity, Plan, Source, SupportLabel, Usage, Verdict


class Stage(StrEnum):
    """Progress message keys (templates translate them)."""

    PLANNING = "PLANNING"
    RETRIEVING = "RETRIEVING"
    AUDITING = "AUDITING"
    REFORMULATING = "REFORMULATING"
    GENERATING = "GENERATING"
    VERIFYING = "VERIFYING"


@dataclass
class StepRecord:
    kind: str  # RunStep.Kind value
    attempt: int
    input: dict[str, Any]
    output: dict[str, Any]
    duration_ms: int
    usage: Usage = field(default_factory=Usage)


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

    @property
    def verdict(self) -> str:
        return self.audit.verdict.value if self.audit else ""


def _dump(model: Any) -> dict[str, Any]:
    data = model.model_dump(mode="json")
    data.pop("usage", None)
    return data


def _source_brief(s: Source) -> dict[str, Any]:
    return {"chunk_id": s.chunk_id, "document": s.file_name or s.document_title, "page": s.page,
            "score": round(s.score, 4), "query": s.query}


class AgentLoop:
    def __init__(self, config: RunConfig, roles: Roles, retriever: Retriever, *,
                 on_step: Callable[[StepRecord], None] | None = None,
                 on_stage: Callable[[Stage], None] | None = None,
                 concurrent: bool = True) -> None:
        self.config = config
        self.roles = roles
        self.retriever = retriever
        self.on_step = on_step
        self.on_stage = on_stage
        self.concurrent = concurrent
        self.steps: list[StepRecord] = []
        self.usage = Usage()

    def _record(self, kind: str, attempt: int, inp: dict, out: dict, started: float, usage: Usage | None = None) -> None:
        usage = usage or Usage()
        step = StepRecord(kind, attempt, inp, out, int((time.perf_counter() - started) * 1000), usage)
        self.steps.append(step)
        self.usage = self.usage + usage
        if self.on_step:
            self.on_step(step)

    def _stage(self, stage: Stage) -> None:
        if self.on_stage:
            self.on_stage(stage)

    def _retrieve(self, queries: list[str], attempt: int) -> list[Source]:
        """Each query's top k, concurrently; merged round-robin so every query's best is near the top."""
        self._stage(Stage.RETRIEVING)
        started = time.perf_counter()
        k = self.config.top_k
        if self.concurrent and len(queries) > 1:
            with ThreadPoolExecutor(max_workers=len(queries)) as pool:
                results = list(pool.map(lambda q: self.retriever.retrieve(q, k=k), queries))
        else:
            results = [self.retriever.retrieve(q, k=k) for q in queries]
        merged: list[Source] = []
        seen: set[int] = set()
        for rank in range(k):
            for q, hits in zip(queries, results):
                if rank < len(hits) and hits[rank].chunk_id not in seen:
                    seen.add(hits[rank].chunk_id)
                    merged.append(hits[rank].model_copy(update={"query": q}))
        self._record("retrieve", attempt, {"queries": list(queries), "k": k},
                     {"per_query": {q: [_source_brief(s) for s in hits] for q, hits in zip(queries, results)}},
                     started)
        return merged

    def run(self, question: str) -> LoopResult:
        cfg, roles = self.config, self.roles
        # 1. Plan (baselines: the question itself is the only query and the only fact).
        if cfg.plan:
            self._stage(Stage.PLANNING)
            started = time.perf_counter()
            plan = roles.planner.plan(question)
            self._record("plan", 0, {"question": question}, _dump(plan), started, plan.usage)
        else:
            plan = Plan(complexity=Complexity.SIMPLE, facts=[question], sub_queries=[question])
        queries = list(plan.sub_queries)
        # 2. Retrieve.
        sources = self._retrieve(queries, 0)
        audit: AuditResult | None = None
        retries = 0
        # 3-4. Audit, and retry with reformulated queries while the auditor asks for it.
        if cfg.audit:
            while True:
                self._stage(Stage.AUDITING)
                started = time.perf_counter()
                can_retry = retries < cfg.max_retries
                audit = roles.auditor.audit(question, plan, sources, can_retry=can_retry)
                self._record("audit", retries, {"sources": [s.chunk_id for s in sources], "can_retry": can_retry},
                             _dump(audit), started, audit.usage)
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
                self._record("reformulate", retries + 1, {"missing": audit.missing, "tried": list(queries)},
                             {"sub_queries": new}, started, reform.usage)
                retries += 1
                if not new:
                    # Nothing new to search for: the next audit is the last.
                    retries = cfg.max_retries
                    continue
                queries.extend(new)
                # Evidence from earlier passes is kept; new chunks are appended after it.
                known = {s.chunk_id for s in sources}
                sources = sources + [s for s in self._retrieve(new, retries) if s.chunk_id not in known]
        # 5. Generate from the evidence, then verify every citation.
        self._stage(Stage.GENERATING)
        started = time.perf_counter()
        draft = roles.generator.generate(question, sources, audit)
        self._record("generate", retries, {"sources": [s.chunk_id for s in sources],
                                           "verdict": audit.verdict.value if audit else None},
                     _dump(draft), started, draft.usage)
        self._stage(Stage.VERIFYING)
        started = time.perf_counter()
        answer = roles.verifier.verify(draft, sources, question=question)
        self._record("verify", retries, {"sentences": len(draft.sentences)},
                     {"kept": len(answer.sentences), "dropped": answer.dropped,
                      "citations": [c.model_dump() for c in answer.citations]}, started)
        return LoopResult(answer=answer, plan=plan, audit=audit, sources=sources, queries=queries,
                          retries=retries, usage=self.usage, steps=self.steps)


def _final_verdict(audit: AuditResult) -> Verdict:
    usable = (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)
    if any(s.label in usable for f in audit.facts for s in f.sentences):
        return Verdict.PARTIALLY_SUFFICIENT
    return Verdict.INSUFFICIENT_REFUSE
