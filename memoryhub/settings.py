"""Django settings for memoryhub, read from environment variables with safe defaults.

``MEMORYHUB_ENV`` is ``production`` (the default), ``development`` (``make run``) or
``test`` (pytest). Production refuses to start without ``SECRET_KEY``.
"""

from __future__ import annotations

import logging
from importlib.metadata import version as package_version
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from memoryhub.conf import env, load_from_environment

BASE_DIR = Path(__file__).resolve().parent.parent
ENVIRONMENT = env("MEMORYHUB_ENV", "production", choices=("production", "development", "test"))

DEBUG = env("DEBUG", False)

SECRET_KEY = env("SECRET_KEY", "")
if not SECRET_KEY:
    if ENVIRONMENT == "production":
        raise ImproperlyConfigured("SECRET_KEY must be set when MEMORYHUB_ENV is production.")
    SECRET_KEY = f"insecure-{ENVIRONMENT}-key-do-not-use-in-production"

ALLOWED_HOSTS = env("ALLOWED_HOSTS", ["localhost", "127.0.0.1"])
CSRF_TRUSTED_ORIGINS = env("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "memoryhub",
    "facts",
    "filememory",
    "records",
    "threads",
    "panel",
    "hub",  # above the apps: the site's URLs, MCP, export/import, cross-app commands
]

MIDDLEWARE = [
    "memoryhub.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "panel.middleware.PanelMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "memoryhub.middleware.ApiGuardMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "hub.urls"
WSGI_APPLICATION = "memoryhub.wsgi.application"

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

DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/memoryhub"),
        conn_max_age=env("DB_CONN_MAX_AGE", 60),
    )
}
# Django turns psycopg's prepared statements off; memoryhub prepares the few statements
# every request runs (memoryhub.prepared). DB_PREPARED_STATEMENTS=0 turns them off again,
# for a connection pooler in transaction mode that cannot keep them (PgBouncer < 1.21).
# A request never waits longer than this for a connection to a PostgreSQL that is down or
# unreachable: it answers 503 (memoryhub.errors) instead of hanging.
DATABASES["default"].setdefault("OPTIONS", {})["connect_timeout"] = env("DB_CONNECT_TIMEOUT", 5)
DATABASES["default"]["OPTIONS"]["prepare_threshold"] = (
    5 if env("DB_PREPARED_STATEMENTS", True) else None
)
# memoryhub runs short queries only. PostgreSQL's JIT, set off by an overestimated cost,
# spent 12 ms compiling a 4 ms fact search: each new connection turns it off
# (memoryhub.apps). DB_JIT=1 leaves the server's own setting.
MEMORYHUB_DB_JIT = env("DB_JIT", False)
# Nor parallel workers: starting two cost 5 ms for a fact search of 0.3 ms, which the
# planner chose parallel when its statistics predated the agent's facts (issue 18, stale).
# DB_PARALLEL=1 leaves the server's own setting.
MEMORYHUB_DB_PARALLEL = env("DB_PARALLEL", False)
if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
    raise ImproperlyConfigured("memoryhub needs PostgreSQL: DATABASE_URL must be postgres://...")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = env("STATIC_ROOT", BASE_DIR / ".data" / "static")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = True

LOGIN_URL = "/admin/login/"

# Request bodies are read by memoryhub's own JSON parser, which enforces per-endpoint limits.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

# The proxies whose X-Forwarded-For names the client (memoryhub.middleware.client_address):
# the variable gunicorn and uvicorn read for the same trust; "*" trusts any sender.
FORWARDED_ALLOW_IPS = env("FORWARDED_ALLOW_IPS", ["127.0.0.1", "::1"])

# Counts every process must share (the panel's failed logins, panel.services.logins): Redis
# when REDIS_URL is set, as in production; otherwise files, shared by the processes of one
# machine.
REDIS_URL = env("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "memoryhub",
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": env("MEMORYHUB_CACHE_DIR", str(BASE_DIR / ".data" / "cache")),
        }
    }

# --- Celery -----------------------------------------------------------------
# Redis when REDIS_URL is set; otherwise kombu's filesystem transport, which needs no
# server and still hands tasks to a real worker process through a shared folder.
BROKER_DIR = env("MEMORYHUB_BROKER_DIR", BASE_DIR / ".data" / "broker")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict = {"socket_timeout": 5, "socket_connect_timeout": 5}
else:
    CELERY_BROKER_URL = "filesystem://"
    for _folder in ("queue", "processed", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
# A message the broker does not take is given up after one more try (at most about twice
# the socket timeouts above), never retried for long inside a request: what must be sent
# is in an outbox that beat's sweep sends again (records.services.purges).
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env("CELERY_TASK_ALWAYS_EAGER", False)
# Celery beat (`celery -A memoryhub beat`, one process per deployment) sends the periodic
# tasks. Every MEMORYHUB_PURGE_SWEEP_SECONDS it sends a try of each purge whose try is due
# and unclaimed, so a lost message never leaves a purge pending; an unconsumed sweep
# expires rather than pile up while no worker runs.
PURGE_SWEEP_SECONDS = env("MEMORYHUB_PURGE_SWEEP_SECONDS", 60.0)
# How long a purge's claim keeps other workers off its job. Far longer than one purge call
# can take (name resolution, then the provider's connect and read timeouts, at most 120 s
# each), so a claim runs out only when its worker has stopped (killed, or its machine
# lost); another worker then finishes the job, at most this long after.
PURGE_LEASE_SECONDS = env("MEMORYHUB_PURGE_LEASE_SECONDS", 600.0)
CELERY_BEAT_SCHEDULE = {
    "send-due-purges": {
        "task": "records.send_due_purges",
        "schedule": PURGE_SWEEP_SECONDS,
        "options": {"expires": PURGE_SWEEP_SECONDS},
    },
}

# --- REST framework -----------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["memoryhub.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["memoryhub.permissions.CanRead"],
    "DEFAULT_PARSER_CLASSES": ["memoryhub.parsers.StrictJSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "EXCEPTION_HANDLER": "memoryhub.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "memoryhub.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "memoryhub.api.pagination.Pagination",
    "UNAUTHENTICATED_USER": None,
    "PAGE_SIZE": 50,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "memoryhub API",
    "DESCRIPTION": "Memory for AI agents: facts (/v0/memory), file and record memories,"
    " thread mounts and runs (/api/v1).",
    "VERSION": package_version("memoryhub"),  # pyproject.toml's, as installed
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "GET_LIB_DOC_EXCLUDES": "memoryhub.schema.lib_doc_excludes",
}

# --- memoryhub ---------------------------------------------------------------
MEMORYHUB_SETTINGS = load_from_environment()
# Fernet key for provider credentials at rest; derived from SECRET_KEY unless given.
MEMORYHUB_CREDENTIAL_KEY = env("MEMORYHUB_CREDENTIAL_KEY", "")

LOG_LEVEL = env("LOG_LEVEL", "INFO", choices=logging.getLevelNamesMapping())
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "filters": {
        "route_not_path": {"()": "memoryhub.logs.RouteNotPath"},
        "no_traceback": {"()": "memoryhub.logs.ClientErrorNoTraceback"},
    },
    "loggers": {
        "django.request": {"level": "ERROR", "filters": ["route_not_path"]},
        "django.security.DisallowedHost": {"filters": ["no_traceback"]},
        # Django's 400 for a request it will not read (over DATA_UPLOAD_MAX_NUMBER_FIELDS or
        # _FILES, a malformed multipart body): the client's fault, one warning line.
        **{
            f"django.security.{name}": {"filters": ["no_traceback"]}
            for name in (
                "TooManyFieldsSent",
                "TooManyFilesSent",
                "RequestDataTooBig",
                "SuspiciousMultipartForm",
            )
        },
    },
}

# The panel's session and CSRF cookies go over HTTPS only in production, unless a deployment
# that serves plain HTTP on a private network says otherwise.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env("SECURE_COOKIES", ENVIRONMENT == "production")

if not DEBUG:
    SESSION_COOKIE_HTTPONLY = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    X_FRAME_OPTIONS = "DENY"
