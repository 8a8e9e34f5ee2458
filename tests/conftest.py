"""Shared fixtures: users alice (owner), bob (member), charlie (no access); paths to ../shared."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

# API fixtures (a user per role on one collection): api_world.
pytest_plugins = ["tests.api_support"]

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("GROUNDED_SHARED_DATA", ROOT.parent / "shared" / "data"))
PAPERS = SHARED_DATA / "papers"


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test with the reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs {path} (../shared/data is absent on this machine)")
    return path


def paper(name: str) -> Path:
    """A PDF of ../shared/data/papers by file name stem, or skip."""
    return shared_path("papers", f"{name}.pdf")


@pytest.fixture(autouse=True)
def _isolated_files(settings, tmp_path):
    """Every test writes uploads and indexes under its own tmp_path."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INDEX_ROOT = tmp_path / "index"
    settings.MEDIA_ROOT.mkdir()
    settings.INDEX_ROOT.mkdir()
    # An index change queues a background merge; in tests it would land in the checkout's
    # broker folder, for a collection of the test database (tests that want it set it).
    settings.INDEX_MERGE_QUEUE = False


@pytest.fixture(autouse=True)
def _fast_passwords(settings):
    """MD5 instead of PBKDF2 for the passwords tests set and check (Django's advice for tests).

    PBKDF2's 1,000,000 rounds cost a quarter of a CPU second per hash, and nearly every test
    makes alice and bob and logs one of them in: that was a large share of the suite's time.
    No test is about the hash; PBKDF2 stays second, so a password hashed before this fixture
    ran (a module-scoped fixture) is still checked."""
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
    ]


# The local model's vector of each text it embedded in this process (by truncation length
# and text), for _embed_each_text_once.
_EMBEDDED: dict[tuple[int, str], object] = {}


@pytest.fixture(autouse=True, scope="session")
def _embed_each_text_once():
    """The local embedding model runs once per text per test session.

    Embedding was nine tenths of ingesting a real paper in-process (22 of 26 s for the
    doc2query paper), and many tests ingest the same papers and documents again, each in a
    fresh database whose EmbeddingCache table is empty. The vectors are the model's own,
    computed in the first call that saw the text; only the repeated model runs go. Tests of
    the model itself (marker `real_embedder`) get the unwrapped method (_real_embedder_when_marked).
    """
    import numpy as np

    from knowledge.embeddings import LocalEmbedder

    real = LocalEmbedder.embed

    def embed(self, texts):
        if not texts:
            return real(self, texts)
        missing = [t for t in dict.fromkeys(texts) if (self.max_tokens, t) not in _EMBEDDED]
        if missing:
            _EMBEDDED.update(zip([(self.max_tokens, t) for t in missing], real(self, missing), strict=True))
        # A fresh array: a caller that changes its rows must not change the stored ones.
        return np.stack([_EMBEDDED[(self.max_tokens, t)] for t in texts])

    LocalEmbedder.embed = embed
    yield real
    LocalEmbedder.embed = real


@pytest.fixture(autouse=True)
def _real_embedder_when_marked(request, monkeypatch, _embed_each_text_once):
    if request.node.get_closest_marker("real_embedder"):
        from knowledge.embeddings import LocalEmbedder

        monkeypatch.setattr(LocalEmbedder, "embed", _embed_each_text_once)


@pytest.fixture(autouse=True)
def _isolated_cache(settings, tmp_path):
    """A private in-memory cache per test: throttles and lock-outs never leak between tests."""
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": str(tmp_path)}
    }


@pytest.fixture
def password() -> str:
    return "correct-horse-battery-staple"


@pytest.fixture
def alice(django_user_model, password):
    return django_user_model.objects.create_user("alice", "alice@example.org", password)


@pytest.fixture
def bob(django_user_model, password):
    return django_user_model.objects.create_user("bob", "bob@example.org", password)


@pytest.fixture
def charlie(django_user_model, password):
    return django_user_model.objects.create_user("charlie", "charlie@example.org", password)


@pytest.fixture
def collection(alice, bob):
    """A collection owned by alice, with bob as a viewer."""
    from knowledge import services
    from knowledge.models import Role

    c = services.collection_create(name="Retrieval papers", user=alice)
    services.membership_set(collection=c, user=bob, role=Role.VIEWER)
    return c


def require_all() -> bool:
    """In CI (GROUNDED_REQUIRE_ALL=1) a missing browser, worker or data set fails the test."""
    return os.environ.get("GROUNDED_REQUIRE_ALL") == "1"


def skip_or_fail(reason: str) -> None:
    if require_all():
        pytest.fail(f"{reason} (GROUNDED_REQUIRE_ALL=1: required in CI)")
    pytest.skip(reason)


def _reset_celery_connections(app) -> None:
    """Drop pooled broker connections so the next publish uses the current transport options.

    kombu also keeps process-wide connection and producer pools keyed by connection;
    `pools.reset()` closes and forgets them, so none is reused closed.
    """
    from kombu import pools

    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None
    pools.reset()


@contextlib.contextmanager
def subprocess_env(settings, tmp_path):
    """Environment for Celery/Django processes started by a test, against the test database.

    The broker is Redis when PORTAL_REDIS_URL is set (CI), else kombu's filesystem transport
    in a private folder that this process publishes to as well (restored on exit).
    """
    from django.db import connection

    env = dict(os.environ)
    env["PORTAL_DEBUG"] = "1"
    env["PORTAL_MEDIA_ROOT"] = str(settings.MEDIA_ROOT)
    env["PORTAL_INDEX_ROOT"] = str(settings.INDEX_ROOT)
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        env["PORTAL_DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        env["PORTAL_DATABASE_URL"] = (
            f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
        )
    original_transport_options = dict(settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    if not env.get("PORTAL_REDIS_URL"):
        env["PORTAL_VAR_DIR"] = str(tmp_path / "var")
        broker = tmp_path / "var" / "broker"
        settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
            **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
            "data_folder_in": str(broker / "out"),
            "data_folder_out": str(broker / "out"),
            "processed_folder": str(broker / "processed"),
            "control_folder": str(broker / "control"),
        }
        for sub in ("out", "processed", "control"):
            (broker / sub).mkdir(parents=True, exist_ok=True)
        # The web side publishes with the same folders as the worker.
        from portal.celery import app

        app.conf.broker_transport_options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
        _reset_celery_connections(app)
    try:
        yield env
    finally:
        if not env.get("PORTAL_REDIS_URL"):
            from portal.celery import app

            app.conf.broker_transport_options = original_transport_options
            _reset_celery_connections(app)


@pytest.fixture
def celery_worker_process(settings, tmp_path):
    """A real `celery worker` process, consuming both queues, against the test database.

    Use it from a `transaction=True` test: the worker is another process and only sees
    committed rows. The broker is Redis when PORTAL_REDIS_URL is set (CI), else kombu's
    filesystem transport in a private folder. Yields a function `wait(predicate, timeout)`
    with `.kill()` (SIGKILL the worker's process group), `.start()` (a new worker with the
    same settings), `.process` (the current one) and `.log` (their output).
    """
    import signal
    import subprocess
    import sys
    import time

    env_context = subprocess_env(settings, tmp_path)
    env = env_context.__enter__()
    log = tmp_path / "worker.log"
    command = [
        sys.executable, "-m", "celery", "-A", "portal", "worker", "-Q", "ingest,answer",
        "--concurrency", "1", "--pool", "prefork", "--loglevel", "INFO", "--without-heartbeat",
        "--without-gossip", "--without-mingle",
    ]
    procs: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT, start_new_session=True
        )
        procs.append(proc)
        wait.process = proc  # type: ignore[attr-defined]
        return proc

    def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
        try:
            if sig == signal.SIGKILL:
                os.killpg(proc.pid, sig)
            else:
                # To the main process only, as a service manager would: it stops its pool
                # child itself. A SIGTERM to the whole group killed the child under it, and the
                # warm shutdown then hung until the SIGKILL below, 15 s per worker test.
                os.kill(proc.pid, sig)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        # Whatever is left of the group (nothing after a clean stop).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)

    def wait(predicate, timeout: float = 60.0, interval: float = 0.1):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            if procs[-1].poll() is not None:
                raise AssertionError(f"celery worker exited early:\n{log.read_text()[-4000:]}")
            time.sleep(interval)
        raise AssertionError(f"timed out after {timeout}s; worker log:\n{log.read_text()[-4000:]}")

    def kill() -> None:
        """kill -9 the worker and its pool children, as a crash or an OOM killer would."""
        stop(procs[-1], signal.SIGKILL)

    wait.log = log  # type: ignore[attr-defined]
    wait.start = start  # type: ignore[attr-defined]
    wait.kill = kill  # type: ignore[attr-defined]
    start()
    try:
        yield wait
    finally:
        for proc in procs:
            if proc.poll() is None:
                stop(proc)
        env_context.__exit__(None, None, None)


def upload_paper(collection, user, name: str):
    """Upload a paper of ../shared/data/papers (or skip) through the real service."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from knowledge import services

    path = paper(name)
    document, _ = services.document_upload(
        collection=collection, user=user,
        uploaded_file=SimpleUploadedFile(path.name, path.read_bytes(), content_type="application/pdf"),
    )
    return document


def ingest_markdown(collection, user, name: str, text: str):
    """Upload a Markdown file through the real service and ingest it in-process; the fresh row."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from knowledge import services
    from knowledge.ingest import job_run

    document, _ = services.document_upload(
        collection=collection, user=user, uploaded_file=SimpleUploadedFile(name, text.encode(), "text/markdown"))
    job_run(job_id=document.jobs.latest("pk").pk)
    document.refresh_from_db()
    return document


@pytest.fixture
def ready_collection(collection, alice):
    """`collection` holding the small doc2query paper, ingested in-process (no worker)."""
    from knowledge.ingest import job_run
    from knowledge.models import Document, IngestJob

    document = upload_paper(collection, alice, "1904.08375v2_doc2query")
    job_run(job_id=IngestJob.objects.filter(document=document).latest("pk").pk)
    assert Document.objects.get(pk=document.pk).status == Document.Status.READY
    return collection
