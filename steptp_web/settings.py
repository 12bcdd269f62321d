"""Django settings for steptp, read from the environment.

Defaults give a local demo that needs no servers: SQLite under ``var/``, a filesystem Celery broker
under ``var/celery/`` and ``DEBUG`` on. Production sets ``DEBUG=0``, ``SECRET_KEY``, ``ALLOWED_HOSTS``,
``DATABASE_URL`` (Postgres via psycopg 3) and ``CELERY_BROKER_URL`` (Redis or RabbitMQ); the HTTPS
hardening then defaults to on. Every variable is listed in docs/operations.md.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

from steptp_web.env import env_bool, env_int, env_list, security_settings

BASE_DIR = Path(__file__).resolve().parent.parent
#: Everything the app writes at run time (SQLite file, embedded broker, collected static files).
VAR_DIR = Path(os.environ.get("STEPTP_VAR_DIR", BASE_DIR / "var")).resolve()
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", True)

#: Development-only key. Its ``django-insecure-`` prefix makes ``check --deploy`` flag it, and it is
#: refused outright when DEBUG is off, so it can never sign production sessions.
_DEV_SECRET_KEY = "django-insecure-steptp-local-demo-key-do-not-use-in-production"
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = _DEV_SECRET_KEY

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

globals().update(security_settings(DEBUG))
#: Load balancers probe /healthz over plain HTTP; it must answer rather than redirect.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
X_FRAME_OPTIONS = "DENY"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "curation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "steptp_web.urls"
WSGI_APPLICATION = "steptp_web.wsgi.application"
ASGI_APPLICATION = "steptp_web.asgi.application"

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
                "curation.views.access.roles_context",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        env="DATABASE_URL",
        default=f"sqlite:///{VAR_DIR / 'steptp.sqlite3'}",
        conn_max_age=env_int("CONN_MAX_AGE", 60),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # a file, not SQLite's in-memory default: the worker-process tests share the test database
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
#: Independent reviews a step's current version needs before it is approved or rejected (the overlap
#: policy, ``curation.services.reviews``); 1 for a team of one. A curator can settle any step at once.
STEPTP_REVIEWS_REQUIRED = env_int("STEPTP_REVIEWS_REQUIRED", 2)
if STEPTP_REVIEWS_REQUIRED < 1:
    raise ImproperlyConfigured(f"STEPTP_REVIEWS_REQUIRED must be at least 1, not {STEPTP_REVIEWS_REQUIRED}")
#: Seconds the health checks wait for the database and the broker before reporting them down.
STEPTP_HEALTH_TIMEOUT = float(os.environ.get("STEPTP_HEALTH_TIMEOUT", "2"))
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Without it a dead server makes every request (and /healthz) hang for the OS TCP timeout.
    _db_options = DATABASES["default"].setdefault("OPTIONS", {})
    _db_options.setdefault("connect_timeout", env_int("DB_CONNECT_TIMEOUT", 5))
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "staticfiles"))

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # token first, so an unauthenticated script gets 401 with a WWW-Authenticate challenge
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["curation.api.permissions.RolePermission"],
    # token clients (scripts) are throttled; people in the browser are not
    "DEFAULT_THROTTLE_CLASSES": ["curation.api.throttles.TokenClientThrottle"],
    "DEFAULT_THROTTLE_RATES": {"token": os.environ.get("STEPTP_API_TOKEN_RATE", "600/min")},
}
SPECTACULAR_SETTINGS = {
    "TITLE": "steptp API",
    "DESCRIPTION": "Workloads, LEIR states, steps, verifications, reviews, exports and tuner runs.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # the browsable UI's JavaScript and CSS come from the installed sidecar package, not a CDN
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "ENUM_NAME_OVERRIDES": {
        "WorkloadOriginEnum": "curation.models.Origin",
        "StepOriginEnum": "curation.models.StepOrigin",
        "GenerationStatusEnum": "curation.models.GenerationStatus",
        "TranslationStatusEnum": "curation.models.TranslationStatus",
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

# --- Celery (read by steptp_web/celery.py through the CELERY_ namespace) -------------------------------

#: Seconds between a worker's heartbeats; a worker silent for three of them counts as gone.
STEPTP_HEARTBEAT_SECONDS = float(os.environ.get("STEPTP_HEARTBEAT_SECONDS", "5"))
#: The work queues; a GPU node serves only ``verify.cuda`` (see docs/operations.md).
STEPTP_QUEUES: tuple[str, ...] = ("generate", "verify.cpu", "verify.cuda", "export", "tune")

#: The host part means nothing to the filesystem transport; naming one keeps kombu from warning about it.
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://localhost/")
if CELERY_BROKER_URL.startswith("filesystem://"):
    # Embedded broker: messages are files under var/celery, shared by the web app and a local worker.
    _broker_dir = Path(os.environ.get("STEPTP_BROKER_DIR", VAR_DIR / "celery")).resolve()
    #: Where the embedded broker keeps its messages (``STEPTP_BROKER_DIR``, default ``var/celery``).
    STEPTP_BROKER_DIR = _broker_dir
    for _sub in ("queue", "control"):
        (_broker_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
    }
else:
    # Redis redelivers unacknowledged messages after this many seconds; it must outlast the hard limit.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}

#: One direct exchange per queue, named like it, so a queue's bindings read the same on every broker.
CELERY_TASK_QUEUES = tuple(
    Queue(name, Exchange(name, type="direct"), routing_key=name) for name in STEPTP_QUEUES
)
CELERY_TASK_DEFAULT_QUEUE = "verify.cpu"
CELERY_TASK_CREATE_MISSING_QUEUES = False
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 900)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", CELERY_TASK_SOFT_TIME_LIMIT + 60)
if CELERY_TASK_TIME_LIMIT <= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("CELERY_TASK_TIME_LIMIT must exceed CELERY_TASK_SOFT_TIME_LIMIT")
#: Tasks write their outcome to the database; there is deliberately no result backend.
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
