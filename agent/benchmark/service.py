"""Benchmark sets, benchmark runs and their reports (the Django side).

The metrics themselves are pure (agent.benchmark.parse, .metrics, .report); this module turns
rows into the plain records they take, and writes BenchmarkSet / BenchmarkRun rows.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone
from django.utils.text import slugify

from agent import benchmark as bm
from agent.configs import CONFIG_NAMES
from agent.models import BenchmarkQuestion, BenchmarkRun, BenchmarkSet, Citation, Review, Run, RunStep
from agent.steps import RetrieveStep
from knowledge.models import Chunk, Collection

# ---------------------------------------------------------------------------
# Import
# ---------------------------------------------------------------------------


# Fields a BenchmarkQuestion row and a QuestionSpec hold the same way (the lists differ:
# JSON lists on the row, tuples in the frozen dataclass).
_PLAIN_FIELDS = (
    "question_id", "question", "category", "split", "answerable", "expected_behavior",
    "reference_answer", "acceptable_answer_criteria",
)


def _document_names(collection: Collection) -> list[str]:
    names: list[str] = []
    for original_name, title in collection.documents.values_list("original_name", "title"):
        names += [original_name, title]
    return names


@transaction.atomic
def benchmark_import(
    *,
    collection: Collection,
    user: AbstractBaseUser | None,
    name: str,
    text: str,
    description: str = "",
    allow_unknown_documents: bool = False,
) -> tuple[BenchmarkSet, list[str]]:
    """Import a benchmark file as a new set; returns the set and any warnings.

    All or nothing: a malformed file raises ValidationError("line N: reason") and writes no
    row. Expected documents are matched to the collection's documents by file name stem or
    title; unknown ones are refused (the report could not score them) unless
    `allow_unknown_documents`, when they come back as a warning.
    """
    name = name.strip()
    if not name:
        raise ValidationError("Give the benchmark set a name.")
    if BenchmarkSet.objects.filter(collection=collection, name=name).exists():
        raise ValidationError(f"This collection already has a benchmark set called {name!r}.")
    try:
        questions = bm.parse_benchmark(text)
    except bm.BenchmarkFormatError as exc:
        raise ValidationError(f"Nothing was imported: line {exc.line}: {exc.reason}") from None
    unknown = bm.unknown_doc_ids(questions, _document_names(collection))
    warnings: list[str] = []
    if unknown:
        message = (
            f"{len(unknown)} expected document(s) are not in this collection: {', '.join(unknown)}. "
            "Upload them (the file name without extension must match) or import anyway."
        )
        if not allow_unknown_documents:
            raise ValidationError("Nothing was imported: " + message)
        warnings.append(message)
    bset = BenchmarkSet(collection=collection, name=name, description=description.strip(), created_by=user)
    bset.full_clean()
    bset.save()
    BenchmarkQuestion.objects.bulk_create(
        [
            BenchmarkQuestion(
                benchmark_set=bset,
                **{name: getattr(q, name) for name in _PLAIN_FIELDS},
                expected_doc_ids=list(q.expected_doc_ids),
                expected_pages=[{"doc_id": p.doc_id, "page": p.page} for p in q.expected_pages],
                required_evidence_spans=list(q.required_evidence_spans),
                extra=q.extra,
            )
            for q in questions
        ]
    )
    return bset, warnings


def question_spec(q: BenchmarkQuestion) -> bm.QuestionSpec:
    return bm.QuestionSpec(
        **{name: getattr(q, name) for name in _PLAIN_FIELDS},
        expected_doc_ids=tuple(q.expected_doc_ids),
        expected_pages=tuple(bm.ExpectedPage(p["doc_id"], int(p["page"])) for p in q.expected_pages),
        required_evidence_spans=tuple(q.required_evidence_spans),
        extra=q.extra,
    )


# ---------------------------------------------------------------------------
# Start and follow
# ---------------------------------------------------------------------------


def _new_label() -> str:
    return timezone.now().strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(2)


@transaction.atomic
def benchmark_start(
    *,
    benchmark_set: BenchmarkSet,
    user: AbstractBaseUser,
    configs: Sequence[str],
    split: str = bm.DEFAULT_SPLIT,
    label: str = "",
    enqueue: bool = True,
) -> tuple[str, list[Run]]:
    """One BenchmarkRun per configuration, one ordinary Run per question x configuration.

    The Runs go through agent.services.run_create, so they are queued on the `answer`
    queue once this transaction commits, exactly like a question asked in the UI.
    With enqueue=False nothing is queued: the caller answers the runs itself
    (run_execute_in_process). Returns the label that groups them, and the runs.
    """
    from agent.services import run_create

    known = CONFIG_NAMES
    configs = list(dict.fromkeys(c.strip() for c in configs if c.strip()))
    bad = [c for c in configs if c not in known]
    if not configs:
        raise ValidationError("Choose at least one configuration.")
    if bad:
        raise ValidationError(f"Unknown configuration(s): {', '.join(bad)}. Known: {', '.join(known)}.")
    questions = list(benchmark_set.questions.filter(split=split).order_by("question_id"))
    if not questions:
        splits = sorted(set(benchmark_set.questions.values_list("split", flat=True)))
        raise ValidationError(f"The set has no questions in split {split!r} (it has: {', '.join(splits)}).")
    # The label is part of the report's URL.
    label = slugify(label)[:100] or _new_label()
    if BenchmarkRun.objects.filter(benchmark_set=benchmark_set, label=label).exists():
        raise ValidationError(f"A benchmark run labelled {label!r} already exists for this set.")
    runs: list[Run] = []
    for config in configs:
        brun = BenchmarkRun.objects.create(
            benchmark_set=benchmark_set, config_name=config, split=split, label=label, created_by=user
        )
        for q in questions:
            runs.append(
                run_create(
                    collection=benchmark_set.collection, user=user, question=q.question,
                    config_name=config, benchmark_run=brun, benchmark_question=q, enqueue=enqueue,
                )
            )
    return label, runs


def benchmark_runs(*, benchmark_set: BenchmarkSet, labels: Iterable[str]) -> QuerySet[BenchmarkRun]:
    return BenchmarkRun.objects.filter(benchmark_set=benchmark_set, label__in=list(labels)).order_by("id")


@dataclass(frozen=True)
class Progress:
    done: int
    total: int

    @property
    def finished(self) -> bool:
        return self.done >= self.total

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100


def benchmark_progress(*, brs: Iterable[BenchmarkRun]) -> Progress:
    counts = Run.objects.filter(benchmark_run__in=list(brs)).aggregate(
        total=Count("id"), done=Count("id", filter=Q(status__in=Run.FINAL))
    )
    return Progress(done=counts["done"], total=counts["total"])


def benchmark_labels(*, benchmark_set: BenchmarkSet) -> list[dict]:
    """Benchmark runs of a set grouped by label, newest first, with their configurations."""
    groups: dict[str, dict] = {}
    for br in BenchmarkRun.objects.filter(benchmark_set=benchmark_set).order_by("-created_at", "id"):
        g = groups.setdefault(br.label, {"label": br.label, "split": br.split, "created_at": br.created_at,
                                         "configs": [], "runs": []})
        g["configs"].append(br.config_name)
        g["runs"].append(br)
    for g in groups.values():
        g["progress"] = benchmark_progress(brs=g["runs"])
    return list(groups.values())


def run_execute_in_process(run: Run) -> None:
    """Answer a queued run in this process (the `benchmark --in-process` command, tests)."""
    from agent import tasks

    tasks.answer_run(run.pk)


# ---------------------------------------------------------------------------
# Records and report
# ---------------------------------------------------------------------------


def _retrieved_ids(run: Run, steps: list[RunStep]) -> list[int]:
    """The context handed to the generator, then every chunk the retrieve steps found."""
    ids: list[int] = list(run.context_chunk_ids)
    for row in steps:
        step = row.record()
        if isinstance(step, RetrieveStep):
            ids += step.chunk_ids()
    return list(dict.fromkeys(ids))


def run_records(*, runs: QuerySet[Run], config_key: Callable[[Run], str] | None = None) -> list[bm.RunRecord]:
    """Finished benchmark runs as plain records for agent.benchmark.metrics (queued/running ones are left out)."""
    runs = runs.filter(status__in=Run.FINAL, benchmark_question__isnull=False).select_related("benchmark_question")
    run_list = list(runs)
    ids = [r.pk for r in run_list]
    steps: dict[int, list[RunStep]] = {}
    for s in RunStep.objects.filter(run_id__in=ids, kind=RunStep.Kind.RETRIEVE).order_by("ordinal"):
        steps.setdefault(s.run_id, []).append(s)
    citations: dict[int, list[Citation]] = {}
    for c in Citation.objects.filter(run_id__in=ids).select_related("chunk", "chunk__document"):
        citations.setdefault(c.run_id, []).append(c)
    grades: dict[int, list[str]] = {}
    for run_id, grade in Review.objects.filter(run_id__in=ids).order_by("created_at", "id").values_list("run_id", "grade"):
        grades.setdefault(run_id, []).append(grade)
    retrieved = {r.pk: _retrieved_ids(r, steps.get(r.pk, [])) for r in run_list}
    all_chunks = {i for v in retrieved.values() for i in v}
    texts = dict(Chunk.objects.filter(pk__in=all_chunks).values_list("pk", "text"))
    specs: dict[int, bm.QuestionSpec] = {}
    records = []
    for r in run_list:
        q = r.benchmark_question
        spec = specs.get(q.pk) or specs.setdefault(q.pk, question_spec(q))
        cited = []
        for c in citations.get(r.pk, []):
            doc = c.chunk.document if c.chunk else None
            names = (doc.original_name, doc.title) if doc else (c.document_title,)
            lo = c.chunk.page_start if c.chunk else c.page
            hi = c.chunk.page_end if c.chunk else c.page
            cited.append(bm.CitedChunk(text=c.chunk_text, doc_names=names, page_start=lo, page_end=hi))
        outcome = r.outcome if r.status == Run.Status.DONE and r.outcome else bm.OUT_FAILED
        records.append(
            bm.RunRecord(
                run_id=r.pk,
                config_name=config_key(r) if config_key else r.config_name,
                question=spec,
                outcome=outcome,
                answer=r.answer,
                citations=cited,
                retrieved_texts=[texts[i] for i in retrieved[r.pk] if i in texts],
                latency_ms=r.latency_ms,
                llm_calls=r.llm_calls,
                prompt_tokens=r.prompt_tokens,
                completion_tokens=r.completion_tokens,
                cost_usd=float(r.cost_usd),
                grades=grades.get(r.pk, []),
            )
        )
    return records


def benchmark_report(*, brs: Sequence[BenchmarkRun]) -> bm.Report:
    """The report over some benchmark runs. A configuration run under several labels (a
    comparison across runs) is shown as "config (label)" so the rows stay apart."""
    brs = list(brs)
    names = [br.config_name for br in brs]
    repeated = {n for n in names if names.count(n) > 1}
    key_of = {br.pk: f"{br.config_name} ({br.label})" if br.config_name in repeated else br.config_name for br in brs}
    records = run_records(
        runs=Run.objects.filter(benchmark_run__in=brs), config_key=lambda r: key_of[r.benchmark_run_id]
    )
    return bm.compute_report(records, config_order=[key_of[br.pk] for br in brs])
