from __future__ import annotations

import logging

from django.conf import settings
from django.db import models

from agent.steps import Step, step_read
from agent.types import Outcome
from knowledge.models import Chunk, Collection

logger = logging.getLogger(__name__)

OUTCOME_CHOICES = [(o.value, o.label) for o in Outcome]


class Thread(models.Model):
    """A conversation: a first question and its follow-ups, each an ordinary Run (`turns`).

    It belongs to the collection of its first run and is seen, like runs, by every member of
    that collection (and of every other collection its runs searched).
    """

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="threads")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="threads"
    )
    title = models.CharField(max_length=300)  # the first question, shortened
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]

    def __str__(self) -> str:
        return f"Thread {self.pk}: {self.title[:60]}"


class Run(models.Model):
    """One question answered by one configuration. The row is the truth a user sees."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    FINAL = (Status.DONE, Status.FAILED)

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="runs")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="runs"
    )
    question = models.TextField()
    # Collections searched besides `collection` (asking across collections); empty for the
    # usual one-collection run. Reading the run needs a role on every one of them.
    extra_collections = models.ManyToManyField(Collection, blank=True, related_name="cross_runs")
    thread = models.ForeignKey(Thread, null=True, blank=True, on_delete=models.CASCADE, related_name="turns")
    # A follow-up rewritten into a standalone question ("Searched as: ..."); the loop answers
    # this one. Empty for a first question, and until the worker has rewritten it.
    search_question = models.TextField(blank=True)
    config_name = models.CharField(max_length=50)
    config_hash = models.CharField(max_length=64)
    config = models.JSONField(default=dict)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=40, blank=True)  # message key of the current stage
    progress_current = models.PositiveIntegerField(default=0)
    progress_max = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=20, choices=OUTCOME_CHOICES, blank=True)
    verdict = models.CharField(max_length=40, blank=True)
    answer = models.TextField(blank=True)
    # The answer as the model writes it, before verification (streamed LLM backends only);
    # the run page shows it until `answer` replaces it.
    answer_preview = models.TextField(blank=True)
    missing_evidence = models.TextField(blank=True)
    # Rephrasings the user can pick when the question was too vague (CLARIFY) or asked for
    # something the backend cannot do.
    suggestions = models.JSONField(default=list, blank=True)
    # The ids of the documents each suggestion is about ({question: [document ids]}): asking it
    # from the run page or the API is limited to them (`documents`).
    suggestion_documents = models.JSONField(default=dict, blank=True)
    # Asked of these documents only (a rephrasing picked after CLARIFY); empty: every document
    # of the collections searched.
    documents = models.ManyToManyField("knowledge.Document", blank=True, related_name="scoped_runs")
    error = models.TextField(blank=True)
    retries = models.PositiveIntegerField(default=0)
    llm_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    index_version = models.PositiveIntegerField(null=True, blank=True)
    # Chunk ids handed to the generator, in order (what PQA records as context).
    context_chunk_ids = models.JSONField(default=list, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Web search (agent.web): the asker allowed it for this question; the route searched it.
    web_allowed = models.BooleanField(default=False)
    used_web = models.BooleanField(default=False, db_index=True)
    benchmark_run = models.ForeignKey(
        "BenchmarkRun", null=True, blank=True, on_delete=models.CASCADE, related_name="runs"
    )
    benchmark_question = models.ForeignKey(
        "BenchmarkQuestion", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["status", "updated_at"]),
            models.Index(fields=["collection", "user", "-created_at"]),
        ]

    def __str__(self) -> str:
        return f"Run {self.pk}: {self.question[:60]}"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL

    @property
    def stage_label(self) -> str:
        """The current stage as words: "SEARCHING_WEB" reads "Searching web"."""
        return self.stage.replace("_", " ").capitalize()

    @property
    def suggested(self) -> list[tuple[str, list[int]]]:
        """Each suggestion with the ids of the documents it is about (none: the whole collection)."""
        return [(s, list(self.suggestion_documents.get(s, []))) for s in self.suggestions]

    @property
    def searched_collections(self) -> list[Collection]:
        """Every collection the run searched: its own first, then the others asked across."""
        return [self.collection, *self.extra_collections.order_by("name")]

    @property
    def asked_as(self) -> str:
        """What the loop searched for: the standalone rewrite of a follow-up, else the question."""
        return self.search_question or self.question


class RunStep(models.Model):
    class Kind(models.TextChoices):
        PLAN = "plan", "Plan"
        RETRIEVE = "retrieve", "Retrieve"
        AUDIT = "audit", "Audit"
        REFORMULATE = "reformulate", "Reformulate"
        GENERATE = "generate", "Generate"
        VERIFY = "verify", "Verify"
        ROUTE = "route", "Route"
        WEB_SEARCH = "web_search", "Web search"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    ordinal = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=Kind.choices)
    attempt = models.PositiveIntegerField(default=0)  # 0 = first pass, 1..2 = retries
    # The JSON of one agent.steps.Step model (its INPUT fields / the rest), read back with
    # RunStep.record(); schema_version is agent.steps.STEP_SCHEMA_VERSION when it was written.
    input = models.JSONField(default=dict, blank=True)
    output = models.JSONField(default=dict, blank=True)
    schema_version = models.PositiveSmallIntegerField(default=1)
    duration_ms = models.PositiveIntegerField(default=0)
    llm_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "ordinal"]
        constraints = [models.UniqueConstraint(fields=["run", "ordinal"], name="unique_run_step")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.ordinal} {self.kind}"

    def record(self) -> Step | None:
        """The typed step, or None when no step model reads this row (logged).

        The one fallback for rows the models do not read: rows written before
        schema_version existed were given version 1 by the migration, which is the shape
        the loop has always written, so only a hand-edited row or one from a newer schema
        ends here. Readers then show the step's kind and timing without its details.
        """
        try:
            return step_read(self.kind, self.input, self.output, schema_version=self.schema_version)
        except ValueError as exc:
            logger.warning("run step %s (%s) is not readable: %s", self.pk, self.kind, exc)
            return None


class Citation(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="citations")
    marker = models.PositiveIntegerField()  # the n of [n] in the answer
    # Null once the chunk's document was deleted; the quoted text stays readable.
    chunk = models.ForeignKey(Chunk, null=True, on_delete=models.SET_NULL, related_name="citations")
    document_title = models.CharField(max_length=500)
    # The collection the cited passage came from (a run may search several).
    collection = models.ForeignKey(Collection, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    page = models.PositiveIntegerField()
    chunk_text = models.TextField()
    quote = models.TextField(blank=True)
    quote_start = models.IntegerField(default=-1)  # offset of quote in chunk_text, -1 if none
    verified = models.BooleanField(default=False)
    # A web citation: the page's URL, when it was fetched, and its bytes (to save it).
    source_url = models.URLField(max_length=2000, blank=True)
    fetched_at = models.DateTimeField(null=True, blank=True)
    web_page = models.ForeignKey("WebPage", null=True, blank=True, on_delete=models.SET_NULL, related_name="citations")

    class Meta:
        ordering = ["run_id", "marker"]
        constraints = [models.UniqueConstraint(fields=["run", "marker"], name="unique_citation_marker")]

    def __str__(self) -> str:
        return f"[{self.marker}] {self.document_title}, p. {self.page}"


class WebPage(models.Model):
    """The bytes of a web page a run cited, as fetched, so an editor can add it to the collection."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="web_pages")
    url = models.URLField(max_length=2000)
    final_url = models.URLField(max_length=2000)
    title = models.CharField(max_length=300, blank=True)
    content_type = models.CharField(max_length=100)
    charset = models.CharField(max_length=40, blank=True)
    sha256 = models.CharField(max_length=64)
    body = models.BinaryField()
    fetched_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "sha256"], name="unique_web_page_per_run")]

    def __str__(self) -> str:
        return self.url


class WebSearchPreference(models.Model):
    """A user's default for the ask form's "may search the web" box (their last choice)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="web_preference")
    may_search_web = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.user_id}: web {'on' if self.may_search_web else 'off'}"


class BenchmarkSet(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="benchmark_sets")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "name"], name="unique_benchmark_set_name")
        ]

    def __str__(self) -> str:
        return self.name


class BenchmarkQuestion(models.Model):
    class Expected(models.TextChoices):
        ANSWER = "ANSWER", "Answer"
        REFUSE_OUT_OF_SCOPE = "REFUSE_OUT_OF_SCOPE", "Refuse (out of scope)"
        DEBUNK_FALSE_PREMISE = "DEBUNK_FALSE_PREMISE", "Debunk false premise"

    benchmark_set = models.ForeignKey(BenchmarkSet, on_delete=models.CASCADE, related_name="questions")
    question_id = models.CharField(max_length=100)
    question = models.TextField()
    category = models.CharField(max_length=100)
    split = models.CharField(max_length=50, default="test")
    answerable = models.BooleanField(default=True)
    expected_behavior = models.CharField(max_length=40, choices=Expected.choices)
    expected_doc_ids = models.JSONField(default=list)
    expected_pages = models.JSONField(default=list)
    required_evidence_spans = models.JSONField(default=list)
    reference_answer = models.TextField(blank=True)
    acceptable_answer_criteria = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)  # unknown fields, kept as they came

    class Meta:
        ordering = ["benchmark_set_id", "question_id"]
        constraints = [
            models.UniqueConstraint(fields=["benchmark_set", "question_id"], name="unique_benchmark_question")
        ]

    def __str__(self) -> str:
        return f"{self.question_id}: {self.question[:60]}"


class BenchmarkRun(models.Model):
    """One configuration over one set (and split), made of ordinary Runs."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    benchmark_set = models.ForeignKey(BenchmarkSet, on_delete=models.CASCADE, related_name="runs")
    config_name = models.CharField(max_length=50)
    split = models.CharField(max_length=50, blank=True)
    label = models.CharField(max_length=100, blank=True)  # groups runs started together
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.benchmark_set_id}/{self.label or self.pk} {self.config_name}"


class Review(models.Model):
    class Grade(models.TextChoices):
        CORRECT = "correct", "Correct"
        PARTIAL = "partial", "Partially correct"
        INCORRECT = "incorrect", "Incorrect"

    GRADE_SCORE = {Grade.CORRECT: 1.0, Grade.PARTIAL: 0.5, Grade.INCORRECT: 0.0}

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviews")
    grade = models.CharField(max_length=20, choices=Grade.choices)
    citations_support = models.BooleanField(null=True, blank=True)
    refusal_appropriate = models.BooleanField(null=True, blank=True)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["run", "reviewer"], name="unique_review_per_reviewer")]

    def __str__(self) -> str:
        return f"Review of run {self.run_id}: {self.grade}"
