"""Writes for collections, memberships, team access and documents.

Teams themselves are accounts.services; the ingestion pipeline is knowledge.ingest.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from accounts.models import Team
from accounts.slugs import unique_slug
from knowledge.models import Collection, Membership, Role, TeamAccess


@transaction.atomic
def collection_create(*, name: str, user: AbstractBaseUser, description: str = "") -> Collection:
    """Create a collection; its creator becomes its owner."""
    name = name.strip()
    collection = Collection(name=name, description=description.strip(), created_by=user)
    collection.slug = unique_slug(Collection, name)
    collection.full_clean()
    collection.save()
    Membership.objects.create(collection=collection, user=user, role=Role.OWNER)
    return collection


def collection_update(*, collection: Collection, name: str | None = None, description: str | None = None,
                      web_search_enabled: bool | None = None) -> Collection:
    if name is not None:
        collection.name = name.strip()
    if description is not None:
        collection.description = description.strip()
    if web_search_enabled is not None:
        collection.web_search_enabled = bool(web_search_enabled)
    collection.full_clean()
    collection.save(update_fields=["name", "description", "web_search_enabled"])
    return collection



def collection_delete(*, collection: Collection) -> None:
    """Delete a collection with its memberships, documents, chunks and runs.

    Stored files are content-addressed and may be shared with other collections, so they
    are left on disk; the collection's index folder is derived data and goes with it.
    """
    import shutil

    from django.conf import settings

    index_dir = Path(settings.INDEX_ROOT) / str(collection.pk)
    collection.delete()
    shutil.rmtree(index_dir, ignore_errors=True)


def _owner_count(collection: Collection) -> int:
    return collection.memberships.filter(role=Role.OWNER).count()


@transaction.atomic
def membership_set(*, collection: Collection, user: AbstractBaseUser, role: Role | str) -> Membership:
    """Add a member or change their role. The last owner cannot be demoted."""
    role = Role(role)
    # Lock the collection's memberships so two concurrent demotions cannot both pass the check.
    list(Membership.objects.select_for_update().filter(collection=collection))
    membership = Membership.objects.filter(collection=collection, user=user).first()
    if membership is None:
        return Membership.objects.create(collection=collection, user=user, role=role)
    if membership.role == Role.OWNER and role != Role.OWNER and _owner_count(collection) <= 1:
        raise ValidationError("A collection needs at least one owner: make someone else owner first.")
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, collection: Collection, user: AbstractBaseUser) -> None:
    list(Membership.objects.select_for_update().filter(collection=collection))
    membership = Membership.objects.filter(collection=collection, user=user).first()
    if membership is None:
        return
    if membership.role == Role.OWNER and _owner_count(collection) <= 1:
        raise ValidationError("The last owner cannot be removed: make someone else owner first.")
    membership.delete()


def team_access_set(
    *, collection: Collection, team: Team, role: Role | str, user: AbstractBaseUser | None = None
) -> TeamAccess:
    """Give a team a role on a collection. `user`, the granting owner, must be in the team:
    otherwise anyone could push their collection into strangers' lists."""
    if user is not None and not team.memberships.filter(user=user).exists():
        raise ValidationError("You can give access only to teams you belong to.")
    access, _ = TeamAccess.objects.update_or_create(collection=collection, team=team, defaults={"role": Role(role)})
    return access


def team_access_remove(*, collection: Collection, team: Team) -> None:
    TeamAccess.objects.filter(collection=collection, team=team).delete()


# ---------------------------------------------------------------------------
# Documents (the pipeline itself is knowledge.ingest, run by knowledge.tasks)
# ---------------------------------------------------------------------------


def _enqueue_ingest(job_id: int) -> None:
    from knowledge.dispatch import send_task_on_commit
    from knowledge.tasks import ingest_document

    # After commit: the worker must find the rows this transaction wrote. A broker that is
    # down loses only the nudge; the sweeper re-sends it for the QUEUED row.
    send_task_on_commit(ingest_document, job_id)


def _store_upload(uploaded_file) -> tuple[str, str, int, bytes]:
    """Copy an upload to MEDIA_ROOT/files/<sha[:2]>/<sha>; returns (relative path, sha256, size, head).

    Streams through a temporary file, so a 50 MB upload never sits in memory, and renames it
    into place: a file under its final name is always complete.
    """
    import hashlib
    import os
    import tempfile
    from pathlib import Path

    from django.conf import settings

    root = Path(settings.MEDIA_ROOT) / "files"
    root.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    head = b""
    fd, tmp_name = tempfile.mkstemp(dir=root, prefix=".upload-")
    try:
        with os.fdopen(fd, "wb") as out:
            for piece in uploaded_file.chunks():
                size += len(piece)
                if size > settings.UPLOAD_MAX_BYTES:
                    raise ValidationError(_too_large_message(settings.UPLOAD_MAX_BYTES), code="too_large")
                if len(head) < 8192:
                    head += piece[: 8192 - len(head)]
                digest.update(piece)
                out.write(piece)
        sha = digest.hexdigest()
        relative = f"files/{sha[:2]}/{sha}"
        target = Path(settings.MEDIA_ROOT) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        Path(tmp_name).replace(target)
        return relative, sha, size, head
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _too_large_message(limit: int) -> str:
    return f"The file is larger than the {limit / 1024 / 1024:.0f} MB limit for one upload."


def _safe_name(raw: str) -> str:
    """The file's own name, safe to store and show.

    Browsers and scripts send all sorts: Windows paths, "../../etc/passwd", NUL bytes
    (which PostgreSQL text refuses), terminal escape sequences, newlines. Keep the last
    path component, drop control characters, normalise Unicode.
    """
    import unicodedata

    name = unicodedata.normalize("NFC", raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C").strip()
    return name[:255] if name.strip(".") else "upload"


def _title_from_name(name: str) -> str:
    from pathlib import PurePath

    stem = PurePath(name).stem or "Untitled"
    return stem.replace("_", " ").strip()[:500] or "Untitled"


def document_upload(*, collection: Collection, user: AbstractBaseUser, uploaded_file) -> tuple:
    """Store an upload and queue its ingestion; returns (Document, created).

    Editors and owners only. The type is decided by content (knowledge.sniff). The same
    file (sha256) already in the collection is returned with created=False and not ingested
    again. Raises ValidationError with code "too_large" or "unsupported_type".
    """
    from pathlib import Path

    from django.conf import settings

    from knowledge import selectors, sniff
    from knowledge.models import Document, IngestJob

    selectors.collection_get(user=user, slug=collection.slug, minimum=Role.EDITOR)
    name = _safe_name(getattr(uploaded_file, "name", ""))
    if (getattr(uploaded_file, "size", 0) or 0) > settings.UPLOAD_MAX_BYTES:
        raise ValidationError(_too_large_message(settings.UPLOAD_MAX_BYTES), code="too_large")
    relative, sha, size, head = _store_upload(uploaded_file)
    path = Path(settings.MEDIA_ROOT) / relative
    whole = path.read_bytes() if size <= 2 * 1024 * 1024 and b"%PDF-" not in head[:1024] else None
    found = sniff.sniff(head, name=name, whole=whole)
    if found.media_type is None:
        if not Document.objects.filter(sha256=sha).exists():
            path.unlink(missing_ok=True)
        raise ValidationError(found.reason, code="unsupported_type")
    existing = Document.objects.filter(collection=collection, sha256=sha).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            document = Document.objects.create(
                collection=collection, title=_title_from_name(name), original_name=name, file=relative,
                sha256=sha, media_type=found.media_type, size_bytes=size, uploaded_by=user,
                status=Document.Status.QUEUED,
            )
            job = IngestJob.objects.create(document=document, owner=user, message_key="QUEUED")
            _enqueue_ingest(job.pk)
    except IntegrityError:
        # Two uploads of the same file raced; the other one won.
        return Document.objects.get(collection=collection, sha256=sha), False
    return document, True


def document_reingest(*, document, user: AbstractBaseUser | None = None):
    """Queue extraction and chunking again (a changed parser or chunker). Returns the IngestJob."""
    from knowledge.models import IngestJob

    with transaction.atomic():
        job = IngestJob.objects.create(document=document, owner=user, message_key="QUEUED")
        _enqueue_ingest(job.pk)
    return job


def ingest_job_retry(*, document, user: AbstractBaseUser | None = None):
    """Queue a new job for a document whose last ingestion failed. Returns the IngestJob."""
    from knowledge.models import Document, IngestJob

    document.refresh_from_db(fields=["status"])
    latest = document.jobs.order_by("-created_at", "-pk").first()
    if latest is not None and not latest.is_final:
        raise ValidationError("This document is still being ingested.", code="busy")
    if document.status == Document.Status.READY and (latest is None or latest.status == IngestJob.Status.DONE):
        raise ValidationError("This document is ready; there is nothing to retry.", code="not_failed")
    with transaction.atomic():
        Document.objects.filter(pk=document.pk).exclude(status=Document.Status.READY).update(
            status=Document.Status.QUEUED, error=""
        )
        job = IngestJob.objects.create(document=document, owner=user or (latest and latest.owner), message_key="QUEUED")
        _enqueue_ingest(job.pk)
    document.refresh_from_db()
    return job


_UNCHANGED: object = object()


def document_update(*, document, title: str | None = None, year: object = _UNCHANGED,
                    tags: object = _UNCHANGED):
    """An editor corrects a document's title, or sets its year and tags (search filters).

    `year=None` or `tags=[]` clears them. A field set here is marked edited, so ingesting the
    file again does not replace it with what ingestion infers (knowledge.metadata).
    Raises ValidationError with a message for a person.
    """
    from knowledge import metadata as meta

    changes = dict(document.metadata or {})
    edited = set(changes.get("edited", []))
    try:
        for key, value, clean in (("year", year, meta.clean_year), ("tags", tags, meta.clean_tags)):
            if value is _UNCHANGED:
                continue
            cleaned = clean(value)
            if cleaned in (None, []):
                changes.pop(key, None)
            else:
                changes[key] = cleaned
            edited.add(key)
    except meta.MetadataError as exc:
        raise ValidationError(str(exc), code="invalid") from exc
    retitled = False
    if title is not None:
        title = " ".join(title.split())
        if not title:
            raise ValidationError("A document needs a title.", code="invalid")
        retitled = title != document.title
        document.title = title
        if retitled:
            # Ingesting the file again must not replace it with the title read from the file.
            edited.add("title")
    changes["edited"] = sorted(edited)
    document.metadata = changes
    document.full_clean(exclude=["file", "collection", "uploaded_by"])
    document.save(update_fields=["title", "metadata", "updated_at"])
    if retitled and document.status == document.Status.READY:
        # BM25 indexes the title with every chunk (knowledge.indexing.rows.bm25_text).
        from knowledge.ingest import index_after_change

        index_after_change(document.collection)
    return document


def document_delete(*, document) -> None:
    """Delete a document, its chunks and (unless another collection holds it) its file,
    then rebuild the collection's index so search no longer returns it."""
    from pathlib import Path

    from django.conf import settings

    from knowledge.ingest import index_after_change
    from knowledge.models import Document

    collection = document.collection
    with transaction.atomic():
        document.delete()
        shared = Document.objects.filter(file=document.file).exists()
    if not shared:
        (Path(settings.MEDIA_ROOT) / document.file).unlink(missing_ok=True)
    index_after_change(collection)


def collection_reembed(*, collection: Collection, embedder=None) -> int:
    """Switch the collection to another embedding model: embed every chunk with it (through
    the cache), record the model, rebuild the index. Returns the number of chunks."""
    from django.utils import timezone

    from knowledge.embedding_cache import default_embedder, embed_with_cache
    from knowledge.embeddings import cache_key
    from knowledge.ingest import index_after_change
    from knowledge.models import Chunk, Document

    embedder = embedder or default_embedder()
    chunks = list(Chunk.objects.filter(document__collection=collection).only("pk", "text"))
    embed_with_cache([c.text for c in chunks], embedder=embedder)
    with transaction.atomic():
        for c in chunks:
            c.embedding_model = embedder.model_id
            c.text_hash = cache_key(embedder.model_id, c.text)
        Chunk.objects.bulk_update(chunks, ["embedding_model", "text_hash"], batch_size=500)
        # A document's chunk rows change only with its updated_at (the index's signatures).
        Document.objects.filter(collection=collection).update(updated_at=timezone.now())
        Collection.objects.filter(pk=collection.pk).update(embedding_model=embedder.model_id)
    collection.embedding_model = embedder.model_id
    index_after_change(collection)
    return len(chunks)
