"""Django itself: paths, the secret key and debug, apps, middleware, templates, languages, static
files (logging: .logs)."""

from __future__ import annotations

from pathlib import Path

from .env import env_bool, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("TUTOR_VAR_DIR") or BASE_DIR / "var")
# Runtime files (SQLite database, filesystem broker, beat schedule) live here.
VAR_DIR.mkdir(parents=True, exist_ok=True)

# The development key is public on purpose; production.py refuses to start with it.
DEV_SECRET_KEY = "dev-insecure-key-do-not-use-in-production"  # noqa: S105
SECRET_KEY = env_str("DJANGO_SECRET_KEY", DEV_SECRET_KEY, secret=True)
DEBUG = env_bool("DJANGO_DEBUG", True)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")
# seed_demo writes demo accounts only where this is on (DEBUG by default).
ALLOW_DEMO_DATA = env_bool("ALLOW_DEMO_DATA", DEBUG)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "corsheaders",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "accounts",
    "audit",
    "llm",
    "conversations",
    "memory",
    "learning",
    "safety",
    "insights",
    "privacy",
    "webhooks",
    "retention",
    "lti_tool",
    "lti",
    "sso",
    "web",
]

MIDDLEWARE = [
    # The request id (X-Request-ID) and the log context of each request (core.request_id).
    "core.request_id.RequestIdMiddleware",
    # /health/live, /health/ready and /metrics, answered before the HTTPS redirect, the host check,
    # sessions, CSRF and authentication (core.health; docs/operations.md#health-and-metrics).
    "core.health.OperationsEndpoints",
    # Responses counted by URL pattern name and status (core.metrics_views).
    "core.metrics_views.ResponsesByRoute",
    # core.middleware: Django's own middleware (and django-csp's), their hooks on the event loop
    # under ASGI where they do no I/O.
    "core.middleware.SecurityMiddleware",
    # The Content-Security-Policy header (django-csp; CONTENT_SECURITY_POLICY in .security).
    "core.middleware.CSPMiddleware",
    # Answers cross-origin preflights before authentication (CORS_* in .security).
    "corsheaders.middleware.CorsMiddleware",
    "core.middleware.SessionMiddleware",
    # Chooses the language of messages: the user's `language`, else Accept-Language (tutor.i18n).
    "core.middleware.LocaleMiddleware",
    "core.middleware.CommonMiddleware",
    "core.middleware.CsrfViewMiddleware",
    "core.middleware.AuthenticationMiddleware",
    "core.middleware.MessageMiddleware",
    "core.middleware.XFrameOptionsMiddleware",
    "core.errors.ErrorsAsJson",
    # Last, so that it sees the response first: the LMS platforms may frame the pages they
    # launch (lti.frames).
    "lti.frames.PlatformFrames",
]

ROOT_URLCONF = "tutor.urls"
WSGI_APPLICATION = "tutor.wsgi.application"
AUTH_USER_MODEL = "accounts.User"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
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

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("fr", "Français")]
TIME_ZONE = "UTC"
USE_I18N = True
# The project's own French messages; Django's and DRF's ship with them.
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
# The ASGI application serves /static/ itself (tutor.asgi); 0 when a proxy or CDN serves it.
SERVE_STATIC = env_bool("SERVE_STATIC", True)
