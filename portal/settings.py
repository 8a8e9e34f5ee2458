"""Grounded settings. Everything comes from PORTAL_* environment variables; see .env.example."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from portal.env import env_bool, env_choice, env_float, env_int, env_list, env_secret, env_str

# One BLAS thread per process, set before anything imports numpy: web and worker processes
# serve requests concurrently on few cores, and OpenBLAS's spinning threads made a 10k-row
# dense search 100x slower on a busy 2-core machine (docs/benchmarks.md, "Retrieval").
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# ---------------------------------------------------------------------------
# Paths and core
# ---------------------------------------------------------------------------

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("PORTAL_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("PORTAL_DEBUG", False)
SECRET_KEY = env_secret("PORTAL_SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "PORTAL_SECRET_KEY (or PORTAL_SECRET_KEY_FILE) must be set when PORTAL_DEBUG is off."
        )
    SECRET_KEY = "insecure-development-key-only-for-PORTAL_DEBUG"

ALLOWED_HOSTS = env_list("PORTAL_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("PORTAL_CSRF_TRUSTED_ORIGINS", [])
SITE_URL = env_str("PORTAL_SITE_URL", "http://localhost:8000")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "accounts",
    "knowledge",
    "agent",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Content-Security-Policy on every response (CONTENT_SECURITY_POLICY below).
    "csp.middleware.CSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

if not DEBUG:
    # Static files straight from gunicorn in production; runserver serves them in DEBUG.
    MIDDLEWARE.insert(1, "whitenoise.middleware.WhiteNoiseMiddleware")

ROOT_URLCONF = "portal.urls"
WSGI_APPLICATION = "portal.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# ---------------------------------------------------------------------------
# Database: SQLite in var/ unless PORTAL_DATABASE_URL points elsewhere
# ---------------------------------------------------------------------------

DATABASE_URL = env_str("PORTAL_DATABASE_URL", f"sqlite:///{VAR_DIR / 'grounded.sqlite3'}")
try:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
except ValueError as exc:
    raise ImproperlyConfigured(f"PORTAL_DATABASE_URL={DATABASE_URL!r} is not a database URL: {exc}") from None
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A fresh checkout has no var/ yet; SQLite creates the file but not its folder.
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # Web and worker share the file: wait for the other writer instead of failing at once.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    DATABASES["default"]["OPTIONS"]["init_command"] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
    # A file, not memory, so a worker process started by the tests sees the same data.
    _suffix = env_str("GROUNDED_TEST_DB_SUFFIX", "")
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-grounded{_suffix}.sqlite3")}
elif env_str("GROUNDED_TEST_DB_SUFFIX"):
    # Parallel developers on one PostgreSQL server each get their own test database.
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{env_str('GROUNDED_TEST_DB_SUFFIX')}"}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "knowledge:collection_list"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("PORTAL_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# ---------------------------------------------------------------------------
# Files: uploads are never under a public URL; they are served by a permission-checked view
# ---------------------------------------------------------------------------

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("PORTAL_STATIC_ROOT", str(VAR_DIR / "static")))
MEDIA_ROOT = Path(env_str("PORTAL_MEDIA_ROOT", str(VAR_DIR / "media")))
INDEX_ROOT = Path(env_str("PORTAL_INDEX_ROOT", str(VAR_DIR / "index")))
# After an index change, queue the merge of its segments (knowledge.merge_index, `sweep`
# queue). Off only in tests (tests/conftest.py).
INDEX_MERGE_QUEUE = True
# Threads one search may use on a large index (50k chunks and up): the exact dense product
# in row blocks, with BM25 beside them. Idle ones sleep, so this is safe under load.
SEARCH_THREADS = env_int("PORTAL_SEARCH_THREADS", min(4, os.cpu_count() or 1), minimum=1)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

UPLOAD_MAX_BYTES = env_int("PORTAL_UPLOAD_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
# Django buffers uploads above this size to a temp file instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
PDF_MAX_PAGES = env_int("PORTAL_PDF_MAX_PAGES", 2000, minimum=1)
# Bound on extracted text, so a decompression bomb cannot exhaust a worker's memory.
EXTRACT_MAX_CHARS = env_int("PORTAL_EXTRACT_MAX_CHARS", 20_000_000, minimum=1000)
# Bound on one inflated PDF stream: a decompression bomb is refused before it costs more.
PDF_MAX_STREAM_BYTES = env_int("PORTAL_PDF_MAX_STREAM_BYTES", 25_000_000, minimum=1_000_000)
QUESTION_MAX_CHARS = env_int("PORTAL_QUESTION_MAX_CHARS", 2000, minimum=10)

# ---------------------------------------------------------------------------
# Celery: Redis when PORTAL_REDIS_URL is set, else kombu's filesystem transport in var/broker
# ---------------------------------------------------------------------------

REDIS_URL = env_str("PORTAL_REDIS_URL", "")
BROKER_DIR = VAR_DIR / "broker"
INGEST_SOFT_TIME_LIMIT = env_int("PORTAL_INGEST_SOFT_TIME_LIMIT", 900, minimum=1)
INGEST_TIME_LIMIT = env_int("PORTAL_INGEST_TIME_LIMIT", 960, minimum=1)
ANSWER_SOFT_TIME_LIMIT = env_int("PORTAL_ANSWER_SOFT_TIME_LIMIT", 240, minimum=1)
ANSWER_TIME_LIMIT = env_int("PORTAL_ANSWER_TIME_LIMIT", 300, minimum=1)
_LONGEST_TASK = max(INGEST_TIME_LIMIT, ANSWER_TIME_LIMIT)

if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    # A task whose worker was killed outright is redelivered after visibility_timeout:
    # keep it just above the longest hard time limit so no live task is delivered twice.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("PORTAL_VISIBILITY_TIMEOUT", _LONGEST_TASK + 60, minimum=1)
    }
else:
    # The host name means nothing to this transport, but without one kombu warns
    # "No hostname was supplied" at every connection.
    CELERY_BROKER_URL = "filesystem://localhost/"
    # kombu's filesystem transport with atomic message files (see portal/celery.py).
    CELERY_BROKER_TRANSPORT = "portal.celery:WholeMessageFilesystemTransport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "out"),
        "data_folder_out": str(BROKER_DIR / "out"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The database rows are the truth about jobs; we never read a result backend.
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "answer"
CELERY_TASK_SOFT_TIME_LIMIT = ANSWER_SOFT_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = ANSWER_TIME_LIMIT
CELERY_TASK_ALWAYS_EAGER = False
# Bounded publish retries, so a web request with Redis down returns promptly; the sweeper
# re-sends what was not delivered.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}
CELERY_BROKER_CONNECTION_TIMEOUT = 2
# The sweeper makes sure every job and run ends even when a message was lost (agent.sweeper).
SWEEP_INTERVAL = env_int("PORTAL_SWEEP_INTERVAL", 60, minimum=5)
CELERY_BEAT_SCHEDULE = {
    "sweep-stuck-jobs-and-runs": {
        "task": "agent.sweep",
        "schedule": float(SWEEP_INTERVAL),
    }
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("PORTAL_WORKER_MAX_MEMORY_KB", 1_500_000, minimum=10_000)

# ---------------------------------------------------------------------------
# Embeddings and LLM
# ---------------------------------------------------------------------------

# In portal/settings_llm.py (its __all__ lists them): EMBEDDING_*, LLM_*, OPENAI_API_KEY, OPENAI_BASE_URL.
from portal.settings_llm import *  # noqa: E402, F403  (here, so the sections apply in this order)

# Bound on one outbound call made inside a web request (the query embedding of a search with
# the openai embeddings backend): one attempt, then a 503, so a slow service cannot hold
# every web worker. Workers keep PORTAL_LLM_TIMEOUT_SECONDS and the retries.
WEB_OUTBOUND_TIMEOUT_SECONDS = env_float("PORTAL_WEB_OUTBOUND_TIMEOUT_SECONDS", 10.0, minimum=0.1)
DEFAULT_RUN_CONFIG = env_str("PORTAL_DEFAULT_RUN_CONFIG", "agentic")

# Web search (issue 18, docs/web-search.md): off unless a provider is named. With no
# provider the feature does not exist: no setting, checkbox, route step or API field.
WEB_SEARCH_PROVIDER = env_choice("PORTAL_WEB_SEARCH_PROVIDER", "", ("", "searxng"))
WEB_SEARCH_URL = env_str("PORTAL_WEB_SEARCH_URL", "").strip()  # SearxNG's base URL
if WEB_SEARCH_PROVIDER == "searxng" and not WEB_SEARCH_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured("PORTAL_WEB_SEARCH_PROVIDER=searxng needs PORTAL_WEB_SEARCH_URL=http(s)://host:port.")
WEB_SEARCH_TIMEOUT_SECONDS = env_float("PORTAL_WEB_SEARCH_TIMEOUT_SECONDS", 10.0, minimum=0.1)
WEB_SEARCH_PAGES = env_int("PORTAL_WEB_SEARCH_PAGES", 3, minimum=1)  # pages fetched per run
# A partial verdict (the collection covers part of the question) also goes to the web.
WEB_SEARCH_ON_PARTIAL = env_bool("PORTAL_WEB_SEARCH_ON_PARTIAL", True)
WEB_SEARCH_FETCH_MAX_BYTES = env_int("PORTAL_WEB_SEARCH_FETCH_MAX_BYTES", 2_000_000, minimum=1024)
WEB_SEARCH_FETCH_TIMEOUT_SECONDS = env_float("PORTAL_WEB_SEARCH_FETCH_TIMEOUT_SECONDS", 10.0, minimum=0.1)
WEB_SEARCH_FETCH_MAX_REDIRECTS = env_int("PORTAL_WEB_SEARCH_FETCH_MAX_REDIRECTS", 3, minimum=0)
WEB_SEARCH_USER_AGENT = env_str("PORTAL_WEB_SEARCH_USER_AGENT", "") or f"GroundedBot/1.0 (+{SITE_URL})"
# Tests only: lets the fetcher reach 127.0.0.1 (the fake web). Refused outside DEBUG, here
# and by the system check agent.web.checks (a settings override cannot slip it through).
WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS = env_bool("PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS", False)
if WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS and not DEBUG:
    raise ImproperlyConfigured("PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS is for tests only; it needs PORTAL_DEBUG=1.")
# Wiring, not configuration: the factory of the grader knowledge's rerank="llm" uses, so
# knowledge searches with the agent's LLM without importing agent.
RERANK_LLM_SCORER = "agent.llm_roles.llm_scorer_from_settings"

# ---------------------------------------------------------------------------
# REST framework
# ---------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.api_auth.HashedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    # Atomic in the shared cache, so concurrent clients cannot outrun them (knowledge.api_throttle).
    "DEFAULT_THROTTLE_CLASSES": [
        "knowledge.api_throttle.AtomicAnonRateThrottle",
        "knowledge.api_throttle.AtomicUserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("PORTAL_THROTTLE_ANON", "60/min"),
        "user": env_str("PORTAL_THROTTLE_USER", "600/min"),
    },
    "EXCEPTION_HANDLER": "knowledge.api_errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Grounded API",
    "DESCRIPTION": "Evidence-checked question answering over your team's papers.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # Several models have a "status"; give each choice set its own stable enum name.
    "ENUM_NAME_OVERRIDES": {
        "DocumentStatusEnum": "knowledge.models.Document.Status",
        # Ingest jobs and runs share one set of states.
        "JobStatusEnum": "knowledge.models.IngestJob.Status",
        "RunOutcomeEnum": "agent.models.OUTCOME_CHOICES",
        "RoleEnum": "knowledge.models.Role",
        "ReviewGradeEnum": "agent.models.Review.Grade",
    },
}

# Shared by every web process, so API throttles and login lock-outs hold across gunicorn
# workers: Redis when configured, else files in var/cache (the laptop default).
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": str(VAR_DIR / "cache")}
    }
# Login attempts before a lock-out of LOGIN_LOCKOUT_SECONDS (accounts.lockout): per account
# from one client address, per account from all addresses, per address over all accounts.
LOGIN_MAX_FAILURES = env_int("PORTAL_LOGIN_MAX_FAILURES", 10, minimum=1)
LOGIN_MAX_FAILURES_PER_USER = env_int("PORTAL_LOGIN_MAX_FAILURES_PER_USER", 100, minimum=1)
LOGIN_MAX_FAILURES_PER_ADDRESS = env_int("PORTAL_LOGIN_MAX_FAILURES_PER_ADDRESS", 100, minimum=1)
LOGIN_LOCKOUT_SECONDS = env_int("PORTAL_LOGIN_LOCKOUT_SECONDS", 900, minimum=1)
# Every login form (ours, the admin's) reaches the lock-out through authenticate().
AUTHENTICATION_BACKENDS = ["accounts.lockout.LockoutModelBackend"]
# Joining (knowledge.invitations): an owner's invitation link is valid this long and once;
# open sign-up (anyone may create an account, with no collection) is off unless switched on.
# Each client address may post the sign-up and invitation forms SIGNUP_MAX_PER_ADDRESS times
# per LOGIN_LOCKOUT_SECONDS, like the login lock-out.
INVITATION_MAX_AGE_SECONDS = env_int("PORTAL_INVITATION_MAX_AGE_SECONDS", 7 * 24 * 3600, minimum=60)
OPEN_SIGNUP = env_bool("PORTAL_OPEN_SIGNUP", False)
SIGNUP_MAX_PER_ADDRESS = env_int("PORTAL_SIGNUP_MAX_PER_ADDRESS", 20, minimum=1)
# E-mail (invitations): printed to the console unless an SMTP host is configured.
EMAIL_HOST = env_str("PORTAL_EMAIL_HOST", "")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("PORTAL_EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("PORTAL_EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = env_secret("PORTAL_EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("PORTAL_EMAIL_USE_TLS", True)
EMAIL_USE_SSL = env_bool("PORTAL_EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("PORTAL_EMAIL_TIMEOUT_SECONDS", 10, minimum=1)
DEFAULT_FROM_EMAIL = env_str("PORTAL_EMAIL_FROM", "Grounded <grounded@localhost>")
if EMAIL_USE_TLS and EMAIL_USE_SSL:
    raise ImproperlyConfigured("PORTAL_EMAIL_USE_TLS and PORTAL_EMAIL_USE_SSL exclude each other: set one to 0.")
# Reverse proxies (addresses or networks) whose X-Forwarded-For is believed; see
# accounts.ratelimit.client_address. Empty: the TCP peer is the client.
TRUSTED_PROXIES = env_list("PORTAL_TRUSTED_PROXIES", [])
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError:
        raise ImproperlyConfigured(f"PORTAL_TRUSTED_PROXIES item {_proxy!r} is not an address or network.") from None

# ---------------------------------------------------------------------------
# Production hardening (DEBUG off): `manage.py check --deploy` is clean
# ---------------------------------------------------------------------------

SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Pages load scripts, styles and images from this origin only, and never run inline script
# (templates have none; tests/portal/test_security_headers.py keeps it so). data: images are
# the icons inside the Swagger UI stylesheet.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("PORTAL_SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("PORTAL_HSTS_SECONDS", 31_536_000, minimum=0)
    # Both on by default (check --deploy clean); turn off when other hosts under this domain
    # cannot serve https, since browsers remember the rule for SECURE_HSTS_SECONDS.
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("PORTAL_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("PORTAL_HSTS_PRELOAD", True)
    SECURE_CONTENT_TYPE_NOSNIFF = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("PORTAL_LOG_LEVEL", "INFO")},
    "loggers": {"pypdf": {"level": "ERROR"}},
}
