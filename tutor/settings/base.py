"""Settings shared by every environment, read from the environment.

Every variable is listed in `.env.example` with a safe development value. This module is the
development default: it runs on an embedded SQLite database and a filesystem Celery broker, so
`make run` needs no external service. `tutor.settings.production` adds security settings and
refuses to start without a secret key.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal, InvalidOperation
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(os.environ.get("TUTOR_VAR_DIR", BASE_DIR / "var"))
# Runtime files (SQLite database, filesystem broker, beat schedule) live here.
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise RuntimeError(f"{name} must be an integer, got {raw!r}") from exc


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError as exc:
        raise RuntimeError(f"{name} must be a number, got {raw!r}") from exc


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    return raw in {"1", "true", "yes", "on"}


# The development key is public on purpose; production.py refuses to start with it.
DEV_SECRET_KEY = "dev-insecure-key-do-not-use-in-production"  # noqa: S105
SECRET_KEY = env_str("DJANGO_SECRET_KEY", DEV_SECRET_KEY)
DEBUG = env_bool("DJANGO_DEBUG", True)
ALLOWED_HOSTS = [h for h in env_str("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]

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
    "llm",
    "conversations",
    "memory",
    "learning",
    "privacy",
    "web",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # The Content-Security-Policy header (django-csp; CONTENT_SECURITY_POLICY below).
    "csp.middleware.CSPMiddleware",
    # Answers cross-origin preflights before authentication (tutor.settings: CORS_*).
    "corsheaders.middleware.CorsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Chooses the language of messages: the user's `language`, else Accept-Language (tutor.i18n).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.errors.ErrorsAsJson",
]

ROOT_URLCONF = "tutor.urls"
WSGI_APPLICATION = "tutor.wsgi.application"
AUTH_USER_MODEL = "accounts.User"

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

# --- Database -------------------------------------------------------------------------------
# DATABASE_URL selects PostgreSQL in production; the default is an embedded SQLite file.
DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'tutor.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0, conn_health_checks=False)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A bounded pool per process (psycopg_pool). A request or a chat-turn step borrows a
    # connection and gives it back when it ends: a turn holds none while the model thinks, so
    # PostgreSQL sees at most DB_POOL_MAX_SIZE connections per process whatever the concurrency.
    DATABASES["default"]["OPTIONS"] = {
        "pool": {
            "min_size": env_int("DB_POOL_MIN_SIZE", 1),
            "max_size": env_int("DB_POOL_MAX_SIZE", 6),
            # A request that finds the pool empty this long answers 503 (retry_safe).
            "timeout": env_float("DB_POOL_TIMEOUT_SECONDS", 10.0),
        }
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server read while the worker writes; the timeout waits for a writer
    # instead of failing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    # The test database must be a file: the Celery worker started by the tests is another process.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test_tutor.sqlite3")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

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

# Threads per process that run the chat turn's database steps (core.db): as many as the
# process may hold connections. 0: each request's own thread.
DB_STEP_THREADS = env_int("DB_STEP_THREADS", env_int("DB_POOL_MAX_SIZE", 6))

# --- Cache (throttles) --------------------------------------------------------------------------
# Shared by every process: Redis when REDIS_URL is set, else files under var/ (the embedded default).
# While Redis is unreachable, reads are misses and writes are dropped (core.cache): requests go
# on, except sign-in, which is refused (503) while its attempts cannot be counted.
CACHE_URL = env_str("CACHE_URL", env_str("REDIS_URL"))
if CACHE_URL.startswith("redis"):
    CACHES = {
        "default": {
            "BACKEND": "core.cache.RedisCache",
            "LOCATION": CACHE_URL,
            # An unreachable host costs a request this long, not the system's TCP timeout.
            "OPTIONS": {"socket_connect_timeout": 1.0, "socket_timeout": 1.0},
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
# Prefixed to every key: deployments (or test servers) that share one Redis keep apart.
CACHES["default"]["KEY_PREFIX"] = env_str("CACHE_KEY_PREFIX")

# --- REST framework -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.auth.TokenAuthentication",
        "core.auth.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "core.api.Pagination",
    "PAGE_SIZE": 20,
    "EXCEPTION_HANDLER": "core.errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "core.schema.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_CLASSES": [],
}
# JSON bodies nested deeper than this are refused with 400 (core.api.JSONParser).
JSON_MAX_DEPTH = env_int("JSON_MAX_DEPTH", 32)

# --- OpenAPI (drf-spectacular): /api/schema/, and /api/docs/ with assets served from here -------
SPECTACULAR_SETTINGS = {
    "TITLE": "Tutor API",
    "DESCRIPTION": (
        "A chat backend for tutoring apps with long-term memory. Every error answers "
        '`{"error": {"code", "message", "details", "retry_safe"}}`.'
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request and response bodies as separate components: `id`, `created_at` and the like are
    # required in responses and absent from requests, so a generated client types both exactly.
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Rules between fields (`{}` refused by a PATCH, one of two fields...): core.api.BODY_RULES.
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "core.api.schema_body_rules"],
    # No validator badge: Swagger UI would send the schema's URL to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # `<id:...>` in URLs (core.api.IdConverter): a positive 64-bit integer.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "format": "int64", "minimum": 1, "maximum": 9223372036854775807}
    },
    "ENUM_NAME_OVERRIDES": {
        "LanguageEnum": "accounts.models.User.Language",
        "UserRoleEnum": "accounts.models.User.Role",
        "ConversationStatusEnum": "conversations.models.Conversation.Status",
        "SummaryStatusEnum": "conversations.models.Conversation.SummaryStatus",
        "MessageRoleEnum": "conversations.models.Message.Role",
        "FileStatusEnum": "conversations.models.ConversationFile.Status",
        "FileReasonEnum": "conversations.models.ConversationFile.Reason",
        "MemoryKindEnum": "memory.models.AIMemory.Kind",
        "MemorySourceEnum": "memory.models.AIMemory.Source",
        "MemoryStatusEnum": "memory.models.AIMemory.Status",
        "MemoryVisibilityEnum": "memory.models.AIMemory.Visibility",
        "QuizStatusEnum": "learning.models.Quiz.Status",
        "QuestionKindEnum": "learning.models.Question.Kind",
        "AnswerResultEnum": "learning.models.Answer.Result",
        "TaskProgressEnum": "learning.models.TaskStatus.Status",
        "TaskStatusSourceEnum": "learning.models.TaskStatus.Source",
    },
}

# --- Content-Security-Policy (django-csp) on every response -------------------------------------
# The pages (web/, the admin, the API docs) load scripts, styles, fonts and images from this
# server only, and their scripts write text with textContent: no inline script anywhere. The API
# docs' pages add inline styles (web.views.DOCS_CSP). Django 5.2 has no CSP of its own (6.0 has).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "worker-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- Browsers: CORS for apps on other origins, sessions and CSRF for the web ---------------------
# Origins allowed to call the API from a browser, comma-separated (e.g. https://app.school.org).
CORS_ALLOWED_ORIGINS = [o for o in env_str("CORS_ALLOWED_ORIGINS").split(",") if o]
CORS_URLS_REGEX = r"^/api/.*$"
# Cookies (a session) cross-origin too; token clients need not.
CORS_ALLOW_CREDENTIALS = env_bool("CORS_ALLOW_CREDENTIALS", False)
CORS_EXPOSE_HEADERS = ["Retry-After"]
# Origins whose session-authenticated writes pass the CSRF check (defaults to the CORS origins).
CSRF_TRUSTED_ORIGINS = [o for o in env_str("CSRF_TRUSTED_ORIGINS", ",".join(CORS_ALLOWED_ORIGINS)).split(",") if o]
CSRF_FAILURE_VIEW = "core.errors.csrf_failure"

# Throttles (core.throttles), "<count>/<second|minute|hour|day>"; empty turns one off.
THROTTLE_SEND_RATE = env_str("THROTTLE_SEND_RATE", "30/minute")  # chat sends per user
# Memory writes per user, the API's and the MCP tools' together (memory.throttles).
THROTTLE_MEMORY_WRITE_RATE = env_str("THROTTLE_MEMORY_WRITE_RATE", "30/minute")
# Sign-in, every way in (the API's token and session logins, the admin: accounts.backends).
# Wrong passwords per username, and per client address, before every attempt answers 429 (even
# with the right password) until the window has passed; parallel attempts count before their
# password is checked, so no more than the limit are ever checked.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
LOGIN_FAILURE_WINDOW_SECONDS = env_int("LOGIN_FAILURE_WINDOW_SECONDS", 900)
# Sign-in attempts per client address, right or wrong, before any password is checked (empty: no limit).
LOGIN_ADDRESS_RATE = env_str("LOGIN_ADDRESS_RATE", "60/minute")
# Passwords hashed at once per process (a check takes about a second of CPU, holding no database
# connection); an attempt that waits longer than LOGIN_HASH_WAIT_SECONDS for its turn gets 503.
LOGIN_HASH_CONCURRENCY = env_int("LOGIN_HASH_CONCURRENCY", 2)
LOGIN_HASH_WAIT_SECONDS = env_float("LOGIN_HASH_WAIT_SECONDS", 10.0)
AUTHENTICATION_BACKENDS = ["accounts.backends.LockoutBackend"]

# --- Celery ---------------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
# The filesystem broker's URL names a host, which it ignores: without one kombu warns at every
# connection that it falls back to localhost.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or "filesystem://localhost/")
BROKER_DIR = VAR_DIR / "broker"
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    # kombu's filesystem transport: a broker that needs no server, for the embedded default.
    for _folder in ("out", "processed", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "out"),
        "data_folder_out": str(BROKER_DIR / "out"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
elif CELERY_BROKER_URL.startswith("redis"):
    # An unacknowledged task (worker killed mid-task) is redelivered after this many seconds.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600)}
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# A task is acknowledged after it ran, so a worker that dies mid-task loses nothing; every
# task is idempotent for that reason (see each task's docstring).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A prefork pool process whose resident memory passed this many KiB is replaced after its task,
# so that memory a task left behind goes back to the system (0: never). Well above what a pool
# process holds with the local embedder loaded (docs/operations.md).
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", 1536 * 1024) or None
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "tutor")
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "end-idle-conversations": {
        "task": "conversations.tasks.conversations_end_idle",
        "schedule": 60.0,
    },
    "sweep-pending-summaries": {
        "task": "memory.tasks.summaries_sweep",
        "schedule": 60.0,
    },
    "sweep-missing-embeddings": {
        "task": "memory.tasks.embeddings_sweep",
        "schedule": 600.0,
    },
}

# --- LLM ------------------------------------------------------------------------------------
# Any OpenAI-compatible endpoint: OpenAI (key only), Ollama, vLLM, llama.cpp server (base URL).
LLM_BASE_URL = env_str("LLM_BASE_URL")
LLM_API_KEY = env_str("LLM_API_KEY")
# Empty: the one model the server at LLM_BASE_URL lists (GET /v1/models), or gpt-4o-mini on
# OpenAI (llm.gateway.model_name).
LLM_MODEL = env_str("LLM_MODEL")
LLM_TIMEOUT_SECONDS = env_float("LLM_TIMEOUT_SECONDS", 60.0)
# Background jobs (summaries, compression) may use a cheaper model on another endpoint.
LLM_SUMMARY_BASE_URL = env_str("LLM_SUMMARY_BASE_URL", LLM_BASE_URL)
LLM_SUMMARY_API_KEY = env_str("LLM_SUMMARY_API_KEY", LLM_API_KEY)
LLM_SUMMARY_MODEL = env_str("LLM_SUMMARY_MODEL", LLM_MODEL)
LLM_SUMMARY_TIMEOUT_SECONDS = env_float("LLM_SUMMARY_TIMEOUT_SECONDS", 120.0)
# Context windows in tokens; 0: ask the server, else 128K (llm.windows).
# The summary model's is LLM_CONTEXT_WINDOW when it is the chat model (same base URL and model).
LLM_CONTEXT_WINDOW = env_int("LLM_CONTEXT_WINDOW", 0)
LLM_SUMMARY_CONTEXT_WINDOW = env_int("LLM_SUMMARY_CONTEXT_WINDOW", 0)
# Tokens kept free for the model's answer (at most a quarter of a small window).
LLM_REPLY_RESERVE_TOKENS = env_int("LLM_REPLY_RESERVE_TOKENS", 1024)
LLM_DISCOVERY_TIMEOUT_SECONDS = env_float("LLM_DISCOVERY_TIMEOUT_SECONDS", 3.0)
# How summaries ask for JSON: auto (json_schema, then json_object, then the prompt alone, each
# endpoint's choice remembered after a refusal), or one of json_schema, json_object, none.
LLM_SUMMARY_RESPONSE_FORMAT = env_str("LLM_SUMMARY_RESPONSE_FORMAT", "auto")
# Encoding used to count tokens for models tiktoken does not know (see llm/tokens.py).
TOKEN_ENCODING_FALLBACK = env_str("TOKEN_ENCODING_FALLBACK", "cl100k_base")

# --- Costs (llm.costs, docs/costs.md) -------------------------------------------------------------
# USD per million tokens, (input, output), by model name as configured (LLM_MODEL...): hosted
# models' list prices, defaults to check against the provider's page (docs/costs.md dates them).
# A model not listed costs 0 (a local one) unless LLM_PRICES prices it: JSON {"model": [input,
# output]}, merged over these. A dated snapshot (gpt-4o-mini-2024-07-18) takes its model's price.
LLM_PRICE_DEFAULTS: dict[str, tuple[Decimal, Decimal]] = {
    name: (Decimal(prompt), Decimal(completion))
    for name, prompt, completion in [
        ("gpt-4o-mini", "0.15", "0.60"),
        ("gpt-4o", "2.50", "10.00"),
        ("gpt-4.1", "2.00", "8.00"),
        ("gpt-4.1-mini", "0.40", "1.60"),
        ("gpt-4.1-nano", "0.10", "0.40"),
        ("gpt-5", "1.25", "10.00"),
        ("gpt-5-mini", "0.25", "2.00"),
        ("gpt-5-nano", "0.05", "0.40"),
        ("o3", "2.00", "8.00"),
        ("o3-mini", "1.10", "4.40"),
        ("o4-mini", "1.10", "4.40"),
        ("gpt-3.5-turbo", "0.50", "1.50"),
        ("text-embedding-3-small", "0.02", "0"),
        ("text-embedding-3-large", "0.13", "0"),
    ]
}


def env_decimal(name: str) -> Decimal:
    """A non-negative amount; empty is 0."""
    raw = os.environ.get(name, "").strip()
    try:
        value = Decimal(raw or "0")
    except InvalidOperation as exc:
        raise RuntimeError(f"{name} must be an amount in USD, got {raw!r}") from exc
    if not value.is_finite() or value < 0:
        raise RuntimeError(f"{name} must be a non-negative amount in USD, got {raw!r}")
    return value


def env_prices(name: str) -> dict[str, tuple[Decimal, Decimal]]:
    raw = os.environ.get(name, "").strip()
    try:
        table = json.loads(raw or "{}", parse_float=Decimal, parse_int=Decimal)
        prices = {str(model): (Decimal(pair[0]), Decimal(pair[1])) for model, pair in table.items()}
        if any(len(pair) != 2 for pair in table.values()):
            raise ValueError("two prices per model")
    except (ValueError, TypeError, AttributeError, IndexError, KeyError, InvalidOperation) as exc:
        expected = '{"model": [input, output]}, in USD per million tokens'
        raise RuntimeError(f"{name} must be JSON {expected}: {exc}") from exc
    if any(not p.is_finite() or p < 0 for pair in prices.values() for p in pair):
        raise RuntimeError(f"{name}: prices must be non-negative numbers")
    return prices


LLM_PRICES = {**LLM_PRICE_DEFAULTS, **env_prices("LLM_PRICES")}
# Spend budgets in USD, per UTC day and calendar month (UTC); 0 or empty: none. A classroom may
# override each for its students and itself (Classroom.budget_*). Past one, a new chat message is
# refused with 429 budget_exceeded until the period ends; background work is never refused.
BUDGET_STUDENT_DAILY = env_decimal("BUDGET_STUDENT_DAILY")
BUDGET_STUDENT_MONTHLY = env_decimal("BUDGET_STUDENT_MONTHLY")
BUDGET_CLASSROOM_DAILY = env_decimal("BUDGET_CLASSROOM_DAILY")
BUDGET_CLASSROOM_MONTHLY = env_decimal("BUDGET_CLASSROOM_MONTHLY")

# --- Tutor behaviour ------------------------------------------------------------------------
MESSAGE_MAX_CHARS = env_int("MESSAGE_MAX_CHARS", 20_000)
MEMORY_LOAD_COUNT = env_int("MEMORY_LOAD_COUNT", 10)
SAVE_MEMORY_MAX_PER_CONVERSATION = env_int("SAVE_MEMORY_MAX_PER_CONVERSATION", 5)
MAX_TOOL_ROUNDS = env_int("MAX_TOOL_ROUNDS", 3)
# A turn claims its conversation with a lease (conversations.turns): renewed every third of this
# while the model answers, so a crashed process blocks a conversation for at most this long.
TURN_LEASE_SECONDS = env_float("TURN_LEASE_SECONDS", 30.0)
# How long a send waits for the conversation's previous turn before answering 503 (not stored).
TURN_WAIT_SECONDS = env_float("TURN_WAIT_SECONDS", 120.0)
# The longest a whole turn (every model round) may take before it fails as unavailable.
TURN_DEADLINE_SECONDS = env_float("TURN_DEADLINE_SECONDS", 180.0)
COMPRESSION_THRESHOLD_TOKENS = env_int("COMPRESSION_THRESHOLD_TOKENS", 150_000)
KEEP_RECENT_MESSAGES = env_int("KEEP_RECENT_MESSAGES", 14)
CONVERSATION_IDLE_MINUTES = env_int("CONVERSATION_IDLE_MINUTES", 30)
SUMMARY_MAX_RETRIES = env_int("SUMMARY_MAX_RETRIES", 5)
SUMMARY_RETRY_BACKOFF_SECONDS = env_float("SUMMARY_RETRY_BACKOFF_SECONDS", 30.0)
# A pending summary untouched for this long is re-enqueued by the periodic sweep.
SUMMARY_SWEEP_AFTER_MINUTES = env_int("SUMMARY_SWEEP_AFTER_MINUTES", 15)
# A summary requested this long ago and never started (its message lost, or never sent because
# the broker was down) is re-enqueued by the next sweep (every minute).
SUMMARY_UNSTARTED_AFTER_SECONDS = env_int("SUMMARY_UNSTARTED_AFTER_SECONDS", 60)
SUMMARY_MAX_TRANSCRIPT_TOKENS = env_int("SUMMARY_MAX_TRANSCRIPT_TOKENS", 100_000)
# --- Recall (memory.search.recall) -----------------------------------------------------------------------
# Prompt: the MEMORY_LOAD_COUNT latest memories plus up to MEMORY_RELEVANT_COUNT recalled for the
# student's message, deduplicated, within MEMORY_TOKEN_BUDGET tokens for the whole memory block.
MEMORY_RELEVANT_COUNT = env_int("MEMORY_RELEVANT_COUNT", 10)
MEMORY_TOKEN_BUDGET = env_int("MEMORY_TOKEN_BUDGET", 2000)
# Defaults measured with `manage.py recall_eval` on the LoCoMo session set (docs/recall.md).
RECALL_LEXICAL_DEPTH = env_int("RECALL_LEXICAL_DEPTH", 50)
RECALL_SEMANTIC_DEPTH = env_int("RECALL_SEMANTIC_DEPTH", 50)
# PostgreSQL lexical search keeps a query's most selective terms (by document frequency).
RECALL_MAX_QUERY_TERMS = env_int("RECALL_MAX_QUERY_TERMS", 12)
# Fusion: weighted sum of z-scored signals (True), or weighted reciprocal rank fusion with
# RECALL_RRF_K (False; RRF was best at k=5 with a lexical weight of 1.2).
RECALL_SCORE_FUSION = env_bool("RECALL_SCORE_FUSION", True)
RECALL_RRF_K = env_float("RECALL_RRF_K", 5.0)
RECALL_LEXICAL_WEIGHT = env_float("RECALL_LEXICAL_WEIGHT", 0.8)
RECALL_SEMANTIC_WEIGHT = env_float("RECALL_SEMANTIC_WEIGHT", 1.0)
# Score fusion floors each of those two standardised signals at -FLOOR: a signal that misses a
# memory (a paraphrase lexically, a name semantically) cannot bury it below -FLOOR standard
# deviations; positive evidence counts in full. "inf" turns a floor off.
RECALL_LEXICAL_FLOOR = env_float("RECALL_LEXICAL_FLOOR", 0.4)
RECALL_SEMANTIC_FLOOR = env_float("RECALL_SEMANTIC_FLOOR", 0.3)
# A query naming a date (memory.search.query_dates) adds DATE_WEIGHT * exp(-days outside / SCALE) to each
# candidate (score fusion only; 0 turns it off); up to DATE_CANDIDATES memories of those dates
# join the candidates.
RECALL_DATE_WEIGHT = env_float("RECALL_DATE_WEIGHT", 3.0)
RECALL_DATE_SCALE_DAYS = env_float("RECALL_DATE_SCALE_DAYS", 7.0)
RECALL_DATE_CANDIDATES = env_int("RECALL_DATE_CANDIDATES", 20)
RECALL_RELATION_WEIGHT = env_float("RECALL_RELATION_WEIGHT", 0.1)
RECALL_RELATION_SEEDS = env_int("RECALL_RELATION_SEEDS", 3)
# Time decay of each signal before fusion: 0 turns it off; a memory's score is multiplied by
# floor + (1 - floor) * 0.5 ** (age_days / half_life).
RECALL_DECAY_HALF_LIFE_DAYS = env_float("RECALL_DECAY_HALF_LIFE_DAYS", 0.0)
RECALL_DECAY_FLOOR = env_float("RECALL_DECAY_FLOOR", 0.5)
# Semantic score = (1 - mix) * whole-memory similarity + mix * best-sentence similarity, for the
# RECALL_SENTENCE_SHORTLIST memories closest as a whole (0 = whole-memory vectors only).
RECALL_SENTENCE_MIX = env_float("RECALL_SENTENCE_MIX", 0.5)
RECALL_SENTENCE_SHORTLIST = env_int("RECALL_SENTENCE_SHORTLIST", 200)
# The topic signal: the query without the words found in at least TOPIC_COMMON_SHARE of the
# student's memories (their name, the subject every note mentions) is embedded too, and each
# candidate's best-sentence similarity to it is added with TOPIC_WEIGHT (0 turns it off). Only
# for students with at least TOPIC_MIN_MEMORIES memories.
RECALL_TOPIC_WEIGHT = env_float("RECALL_TOPIC_WEIGHT", 0.6)
RECALL_TOPIC_COMMON_SHARE = env_float("RECALL_TOPIC_COMMON_SHARE", 0.5)
RECALL_TOPIC_MIN_MEMORIES = env_int("RECALL_TOPIC_MIN_MEMORIES", 5)

# The memory lifecycle (docs/memory-lifecycle.md).
# Facts and approaches (the semantic and procedural tiers) extracted from each new episodic
# memory by the summary model, in the background; at most MEMORY_TIER_COUNT of them, the most
# confident first, open the prompt's memory block (within MEMORY_TOKEN_BUDGET).
MEMORY_EXTRACTION_ENABLED = env_bool("MEMORY_EXTRACTION_ENABLED", True)
MEMORY_FACT_MIN_CONFIDENCE = env_float("MEMORY_FACT_MIN_CONFIDENCE", 0.5)
MEMORY_TIER_COUNT = env_int("MEMORY_TIER_COUNT", 10)
# The model's supersession and merge decisions are applied at this confidence or more.
MEMORY_SUPERSEDE_MIN_CONFIDENCE = env_float("MEMORY_SUPERSEDE_MIN_CONFIDENCE", 0.7)
MEMORY_MERGE_MIN_CONFIDENCE = env_float("MEMORY_MERGE_MIN_CONFIDENCE", 0.7)
# Consolidation: active memories of one tier whose vectors are at least this similar (cosine)
# form a cluster the model is asked to merge; every MEMORY_CONSOLIDATION_INTERVAL_HOURS.
MEMORY_CONSOLIDATION_SIMILARITY = env_float("MEMORY_CONSOLIDATION_SIMILARITY", 0.92)
MEMORY_CONSOLIDATION_INTERVAL_HOURS = env_float("MEMORY_CONSOLIDATION_INTERVAL_HOURS", 24.0)
MEMORY_CONSOLIDATION_MAX_CLUSTER = env_int("MEMORY_CONSOLIDATION_MAX_CLUSTER", 20)
CELERY_BEAT_SCHEDULE["consolidate-memories"] = {
    "task": "memory.tasks.memories_consolidate_due",
    "schedule": MEMORY_CONSOLIDATION_INTERVAL_HOURS * 3600,
}

# --- Embeddings (memory.search.embeddings) ----------------------------------------------------------------
# auto: the local model if requirements-embeddings.txt is installed, else none (lexical recall).
EMBEDDINGS_BACKEND = env_str("EMBEDDINGS_BACKEND", "auto")
EMBEDDINGS_BASE_URL = env_str("EMBEDDINGS_BASE_URL")  # openai backend; Ollama http://127.0.0.1:11434/v1
EMBEDDINGS_API_KEY = env_str("EMBEDDINGS_API_KEY")
EMBEDDINGS_MODEL = env_str("EMBEDDINGS_MODEL", "text-embedding-3-small")  # Ollama: nomic-embed-text
# manage.py embeddings_server: EMBEDDINGS_MODEL=all-MiniLM-L6-v2 shares the local backend's vectors.
EMBEDDINGS_TIMEOUT_SECONDS = env_float("EMBEDDINGS_TIMEOUT_SECONDS", 5.0)
# torch threads of the local model per process. 1: on two threads a query waits for both cores,
# which a busy machine rarely has free (docs/recall.md). 0: torch's default, one per core.
EMBEDDINGS_LOCAL_THREADS = env_int("EMBEDDINGS_LOCAL_THREADS", 1)
# openai backend: texts per request; a larger batch is sent as several requests.
EMBEDDINGS_REQUEST_MAX_INPUTS = env_int("EMBEDDINGS_REQUEST_MAX_INPUTS", 128)
# Recent query vectors each process keeps (memory.search.embeddings.embed_queries; 0 = off).
EMBEDDINGS_QUERY_CACHE_SIZE = env_int("EMBEDDINGS_QUERY_CACHE_SIZE", 1024)
EMBEDDINGS_BATCH_SIZE = env_int("EMBEDDINGS_BATCH_SIZE", 64)
EMBEDDINGS_MAX_RETRIES = env_int("EMBEDDINGS_MAX_RETRIES", 5)
EMBEDDINGS_RETRY_BACKOFF_SECONDS = env_float("EMBEDDINGS_RETRY_BACKOFF_SECONDS", 30.0)
EMBEDDINGS_SWEEP_BATCH = env_int("EMBEDDINGS_SWEEP_BATCH", 500)
# SQLite only (memory.search.vector_cache): the bytes of decoded vectors the process keeps, least
# recently used student out. A 1,000-memory student takes about 13-16 MB with its sentences.
# PostgreSQL ranks vectors in the database and keeps none in the process.
EMBEDDINGS_CACHE_BYTES = env_int("EMBEDDINGS_CACHE_BYTES", 256 * 1024 * 1024)
# numpy's BLAS threads per process (memory.apps.limit_blas_threads); 0 leaves OpenBLAS's default
# (one per core), which makes recall's small products wait for every core on a loaded machine.
NUMPY_BLAS_THREADS = env_int("NUMPY_BLAS_THREADS", 1)

# --- Learning (learning/: quizzes, mastery per skill, homework tasks) -----------------------------
# Quizzes the create_quiz tool may store per conversation.
QUIZ_MAX_PER_CONVERSATION = env_int("QUIZ_MAX_PER_CONVERSATION", 3)
# The learning record block of the prompt: its token budget, and how much of the record it reads
# (open tasks, skills by latest result, weakest skills, of the LEARNING_RECORD_SKILL_SCAN latest;
# then the conversation's files: every name, and their text in what the budget leaves). On a
# small window the block takes at most a quarter of what the prompt leaves.
LEARNING_RECORD_TOKEN_BUDGET = env_int("LEARNING_RECORD_TOKEN_BUDGET", 2500)
LEARNING_RECORD_MAX_TASKS = 10
LEARNING_RECORD_MAX_SKILLS = 5
LEARNING_RECORD_WEAKEST = 3
LEARNING_RECORD_SKILL_SCAN = 100
# A skill estimated at least this mastered is never listed among the weakest.
LEARNING_MASTERED_ESTIMATE = 0.95
# Bayesian knowledge tracing (learning.mastery, docs/learning.md): tuning constants, not deployment
# choices. p_init P(L0), p_learn T, p_slip S, p_guess G; the estimate decays halfway back to
# p_init every half_life_days (0: never); the trend spans the last trend_window results.
LEARNING_MASTERY = {
    "p_init": 0.3,
    "p_learn": 0.1,
    "p_slip": 0.1,
    "p_guess": 0.2,
    "half_life_days": 60.0,
    "trend_window": 5,
}
# Grading short-text answers with the summary model (learning.tasks): retries of transient errors,
# and the sweep that enqueues again attempts still being graded this long after submission.
GRADING_MAX_RETRIES = env_int("GRADING_MAX_RETRIES", 5)
GRADING_RETRY_BACKOFF_SECONDS = env_float("GRADING_RETRY_BACKOFF_SECONDS", 30.0)
GRADING_SWEEP_AFTER_MINUTES = env_int("GRADING_SWEEP_AFTER_MINUTES", 30)
CELERY_BEAT_SCHEDULE["sweep-pending-grading"] = {"task": "learning.tasks.grading_sweep", "schedule": 300.0}

# --- Files (conversations.files): what students attach to a conversation ----------------------
# Checked on upload by content (magic bytes for PDF and images, UTF-8 for text), never by the
# client's name or content type alone. A wrong type or a larger file is a 400 naming the limit.
FILES_MAX_BYTES = env_int("FILES_MAX_BYTES", 10 * 1024 * 1024)
FILES_ALLOWED_TYPES = [
    t.strip()
    for t in env_str(
        "FILES_ALLOWED_TYPES",
        "application/pdf,text/plain,text/markdown,image/png,image/jpeg,image/webp,image/gif",
    ).split(",")
    if t.strip()
]
FILES_MAX_PER_CONVERSATION = env_int("FILES_MAX_PER_CONVERSATION", 20)
# Extracted text kept per file for the prompt (PDF pages are separated by a form feed).
FILES_MAX_TEXT_CHARS = env_int("FILES_MAX_TEXT_CHARS", 100_000)
# Extraction (conversations.tasks.file_extract): tries per file before it is marked unreadable
# (a file that keeps killing the worker must not be redelivered for ever), the first retry's
# delay (doubled each time, with jitter), and the time reading one file may take.
FILES_EXTRACT_MAX_ATTEMPTS = env_int("FILES_EXTRACT_MAX_ATTEMPTS", 5)
FILES_EXTRACT_RETRY_BACKOFF_SECONDS = env_float("FILES_EXTRACT_RETRY_BACKOFF_SECONDS", 10.0)
FILES_EXTRACT_TIME_LIMIT_SECONDS = env_int("FILES_EXTRACT_TIME_LIMIT_SECONDS", 120)
# A PDF is read in a process of its own (conversations.pdf_text), stopped past the time limit
# (the file is unreadable, `too_slow`), past this many bytes decompressed from all its streams
# together, or past this much memory (`too_large`): a few megabytes can expand to gigabytes.
FILES_EXTRACT_MAX_DECODED_BYTES = env_int("FILES_EXTRACT_MAX_DECODED_BYTES", 256 * 1024 * 1024)
FILES_EXTRACT_MAX_MEMORY_BYTES = env_int("FILES_EXTRACT_MAX_MEMORY_BYTES", 1024 * 1024 * 1024)
# A file still pending this long after its last try (a lost task message) is re-enqueued.
FILES_SWEEP_AFTER_SECONDS = env_int("FILES_SWEEP_AFTER_SECONDS", 300)
CELERY_BEAT_SCHEDULE["sweep-pending-files"] = {"task": "conversations.tasks.files_sweep", "schedule": 60.0}
# Whether the chat model accepts images (OpenAI-style image parts). Off: the tutor is told it
# cannot see the images a student attached; their names are still listed.
LLM_SUPPORTS_IMAGES = env_bool("LLM_SUPPORTS_IMAGES", False)
# With images on: the latest LLM_MAX_IMAGES images of the conversation go in each prompt, each
# counted as LLM_IMAGE_TOKENS tokens in the window's budget (OpenAI bills a 512-px tile 170 + 85).
LLM_MAX_IMAGES = env_int("LLM_MAX_IMAGES", 4)
LLM_IMAGE_TOKENS = env_int("LLM_IMAGE_TOKENS", 765)
# Storage: private files, never served by URL (the API returns their metadata only).
# FILES_STORAGE=local (default): MEDIA_ROOT/files on this machine, which every web and worker
# process must share. FILES_STORAGE=s3: django-storages' S3 backend (`pip install
# django-storages[s3]`; any S3-compatible service with AWS_S3_ENDPOINT_URL), credentials from
# boto3's own chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or an instance role). Any other
# value is a storage backend's dotted path, configured with FILES_STORAGE_OPTIONS (JSON).
MEDIA_ROOT = Path(env_str("MEDIA_ROOT") or VAR_DIR / "media")
FILES_STORAGE = env_str("FILES_STORAGE", "local")
_files_options = json.loads(env_str("FILES_STORAGE_OPTIONS") or "{}")
if FILES_STORAGE == "local":
    _files_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {
            "location": str(MEDIA_ROOT / "files"),
            "file_permissions_mode": 0o640,
            "directory_permissions_mode": 0o750,
            **_files_options,
        },
    }
elif FILES_STORAGE == "s3":
    _files_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": env_str("AWS_STORAGE_BUCKET_NAME"),
            "region_name": env_str("AWS_S3_REGION_NAME") or None,
            "endpoint_url": env_str("AWS_S3_ENDPOINT_URL") or None,
            "location": env_str("FILES_S3_PREFIX", "tutor-files"),
            "default_acl": "private",
            "querystring_auth": True,
            "file_overwrite": False,
            **_files_options,
        },
    }
else:
    _files_storage = {"BACKEND": FILES_STORAGE, "OPTIONS": _files_options}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    "tutor_files": _files_storage,
}

# seed_demo writes demo accounts only where this is on (DEBUG by default).
ALLOW_DEMO_DATA = env_bool("ALLOW_DEMO_DATA", DEBUG)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # httpx2 (the openai SDK's client) logs every request at INFO.
    "loggers": {name: {"level": "WARNING"} for name in ("django.db.backends", "httpx2", "httpx")},
}
