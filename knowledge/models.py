from __future__ import annotations

from django.conf import settings
from django.db import models

from accounts.models import Team


class Role(models.TextChoices):
    """A role on a collection. Higher roles include everything the lower ones may do."""

    VIEWER = "viewer", "Viewer"
    REVIEWER = "reviewer", "Reviewer"
    EDITOR = "editor", "Editor"
    OWNER = "owner", "Owner"


ROLE_RANK = {Role.VIEWER: 1, Role.REVIEWER: 2, Role.EDITOR: 3, Role.OWNER: 4}


class Collection(models.Model):
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Bumped every time the chunks of the collection change; the on-disk index of a
    # version is immutable, so a process holding an older version knows to reload.
    index_version = models.PositiveIntegerField(default=0)
    # The embedding model all vectors in this collection's index come from. Changing it is
    # an explicit re-embed (knowledge.services.collection_reembed), never a silent mix.
    embedding_model = models.CharField(max_length=200, blank=True)
    # The owner's switch for the web search path (docs/web-search.md); it only matters
    # where a web search provider is configured.
    web_search_enabled = models.BooleanField(default=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="collection_memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["collection", "user"], name="unique_collection_member")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} of collection {self.collection_id}"


class TeamAccess(models.Model):
    """A team's role on a collection: every member of the team holds at least this role."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="team_accesses")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="accesses")
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["collection", "team"], name="unique_collection_team")
        ]

    def __str__(self) -> str:
        return f"team {self.team_id} {self.role} of collection {self.collection_id}"


class Document(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        PROCESSING = "processing", "Processing"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="documents")
    title = models.CharField(max_length=500)
    # The name the file was uploaded under (sanitised); benchmark sets match on its stem.
    original_name = models.CharField(max_length=255)
    # Stored under its sha256 (see knowledge.services); never under a public URL.
    file = models.CharField(max_length=500)
    sha256 = models.CharField(max_length=64)
    media_type = models.CharField(max_length=100)
    size_bytes = models.BigIntegerField(default=0)
    pages = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    parser = models.CharField(max_length=100, blank=True)
    parser_version = models.CharField(max_length=50, blank=True)
    chunking = models.JSONField(default=dict, blank=True)
    metadata = models.JSONField(default=dict, blank=True)  # year, tags, authors where known
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["title"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "sha256"], name="unique_document_per_collection")
        ]

    def __str__(self) -> str:
        return self.title


class Chunk(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    section_title = models.CharField(max_length=300, blank=True)
    page_start = models.PositiveIntegerField()
    page_end = models.PositiveIntegerField()
    # Offsets into the cleaned text of page_start (see knowledge.extract.CleanPage).
    char_start = models.PositiveIntegerField()
    char_end = models.PositiveIntegerField()
    token_count = models.PositiveIntegerField()
    is_reference = models.BooleanField(default=False)
    embedding_model = models.CharField(max_length=200)
    # Filled once embedded: the chunk's text hash into EmbeddingCache.
    text_hash = models.CharField(max_length=64, blank=True)
    # Where its sentences sit on the PDF page, for the viewer (knowledge.pdf_boxes):
    # [[start, end, [[page, x0, y0, x1, y1], ...]], ...]; [] for text sources or when not found.
    boxes = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["document_id", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["document", "ordinal"], name="unique_chunk_ordinal")
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.ordinal}"


class EmbeddingCache(models.Model):
    """Content-addressed vectors: key = sha256(model id + normalised text)."""

    key = models.CharField(max_length=64, primary_key=True)
    model = models.CharField(max_length=200)
    dim = models.PositiveIntegerField()
    vector = models.BinaryField()  # float32 little-endian
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.model}:{self.key[:12]}"


class ExtractedText(models.Model):
    """Cleaned pages of a file, keyed by its sha256 and the parser that produced them.

    Shared between collections: the same paper uploaded twice is parsed once.
    """

    sha256 = models.CharField(max_length=64)
    parser = models.CharField(max_length=100)
    parser_version = models.CharField(max_length=50)
    pages = models.JSONField()  # list of {"number", "text", "sections": [...]}
    # What the raw text said before cleaning (knowledge.extract.Extracted.metadata).
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["sha256", "parser", "parser_version"], name="unique_extracted_text"
            )
        ]

    def __str__(self) -> str:
        return f"{self.sha256[:12]} ({self.parser} {self.parser_version})"


class IngestJob(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    FINAL = (Status.DONE, Status.FAILED)

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="jobs")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    message_key = models.CharField(max_length=40, blank=True)
    pages_done = models.PositiveIntegerField(default=0)
    pages_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "updated_at"])]

    def __str__(self) -> str:
        return f"IngestJob {self.pk} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL


class Invitation(models.Model):
    """An owner's invitation, sent by e-mail, to join a collection with a role.

    The link carries a signed random secret; only the secret's sha256 is stored, so the
    database never holds a usable link. `used_at` makes it single use (claimed by a
    conditional UPDATE in knowledge.invitations.invitation_accept).
    """

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.VIEWER)
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} as {self.role} of collection {self.collection_id}"
