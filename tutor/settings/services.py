"""The services every process shares: the database (a bounded pool per process on PostgreSQL,
an embedded SQLite file by default) and the cache (Redis, else files under var/)."""

from __future__ import annotations

import dj_database_url

from .django import VAR_DIR
from .env import SettingsError, env_bool, env_float, env_int, env_str, env_url

# --- Database -------------------------------------------------------------------------------
# DATABASE_URL selects PostgreSQL in production; the default is an embedded SQLite file.
DATABASE_URL = env_str("DATABASE_URL", secret=True) or f"sqlite:///{VAR_DIR / 'tutor.sqlite3'}"
try:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0, conn_health_checks=False)}
except (ValueError, KeyError) as _exc:
    raise SettingsError(
        "DATABASE_URL must be a database URL such as postgres://user:password@host:5432/name "
        f"or sqlite:////path ({type(_exc).__name__})"
    ) from None
DB_POOL_MIN_SIZE = env_int("DB_POOL_MIN_SIZE", 1, minimum=0)
DB_POOL_MAX_SIZE = env_int("DB_POOL_MAX_SIZE", 6, minimum=1)
DB_POOL_TIMEOUT_SECONDS = env_float("DB_POOL_TIMEOUT_SECONDS", 10.0, minimum=0)
# The hot statements (core.db.server_cursor: the chat turn's, memory search's) are bound on the
# server and prepared once per connection. Turn off behind a pooler that does not keep prepared
# statements across transactions (pgbouncer in transaction mode before 1.21, or without
# max_prepared_statements): they are then bound on the server but never prepared.
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A bounded pool per process (psycopg_pool). A request or a chat-turn step borrows a
    # connection and gives it back when it ends: a turn holds none while the model thinks, so
    # PostgreSQL sees at most DB_POOL_MAX_SIZE connections per process whatever the concurrency.
    DATABASES["default"]["OPTIONS"] = {
        "pool": {
            "min_size": DB_POOL_MIN_SIZE,
            "max_size": DB_POOL_MAX_SIZE,
            # A request that finds the pool empty this long answers 503 (retry_safe).
            "timeout": DB_POOL_TIMEOUT_SECONDS,
        },
        # psycopg prepares a statement of a server-binding cursor the first time it runs (0), or
        # never (None, Django's default). Django's own cursors bind on the client and never prepare.
        "prepare_threshold": 0 if DB_PREPARED_STATEMENTS else None,
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

# Threads per process that run the chat turn's database steps (core.db): as many as the
# process may hold connections. 0: each request's own thread.
DB_STEP_THREADS = env_int("DB_STEP_THREADS", DB_POOL_MAX_SIZE, minimum=0)

# --- Cache (throttles) --------------------------------------------------------------------------
# Shared by every process: Redis when REDIS_URL is set, else files under var/ (the embedded default).
# While Redis is unreachable, reads are misses and writes are dropped (core.cache): requests go
# on, except sign-in, which is refused (503) while its attempts cannot be counted.
_REDIS = ("redis", "rediss")
REDIS_URL = env_url("REDIS_URL", schemes=_REDIS, secret=True)
CACHE_URL = env_url("CACHE_URL", REDIS_URL, schemes=_REDIS, secret=True)
if CACHE_URL:
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
