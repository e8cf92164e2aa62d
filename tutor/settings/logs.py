"""Logging: one handler on standard error for every logger (the project's, Django's, uvicorn's,
Celery's), each record with its context (core.logging, core.request_id), as JSON lines or text.

LOG_FORMAT: `text` by default (development, `make run`: a line to read), `json` by default in
production (tutor.settings.production: a line per object, for a log collector). LOG_LEVEL: the
root logger's level.
"""

from __future__ import annotations

from typing import Any

from .env import env_bool, env_choice

__all__ = ["LOGGING", "LOG_FORMAT", "LOG_FORMATS", "LOG_LEVEL", "WEB_ACCESS_LOG", "logging_config"]

LOG_FORMATS = ("json", "text")
LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
LOG_FORMAT = env_choice("LOG_FORMAT", "text", LOG_FORMATS)

# Noisy at INFO: SQL, and the openai SDK's HTTP client (httpx2), which logs every request.
_QUIET = ("django.db.backends", "httpx2", "httpx")
# uvicorn's access log (scripts/serve.sh): off unless WEB_ACCESS_LOG=1, since its lines hold each
# URL's query string (docs/operations.md, Logs). uvicorn turns it on when its logger has a handler.
WEB_ACCESS_LOG = env_bool("WEB_ACCESS_LOG", False)


def logging_config(log_format: str, level: str, access_log: bool = False) -> dict[str, Any]:
    """Django's LOGGING (logging.config.dictConfig) for this format and root level. uvicorn's
    loggers get the same handler and stop propagating (a line would be written twice); their
    level stays uvicorn's (--log-level); its access log has a handler only with `access_log`."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": "core.logging.ContextFilter"}},
        "formatters": {
            "json": {"()": "core.logging.JsonFormatter"},
            "text": {"()": "core.logging.TextFormatter"},
        },
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": log_format, "filters": ["context"]},
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Django's own handlers (its console's plain lines when DEBUG is on) are dropped: its
            # records reach the root's handler like every other.
            "django": {"handlers": [], "level": "INFO", "propagate": True},
            **{name: {"level": "WARNING"} for name in _QUIET},
            "uvicorn": {"handlers": ["console"], "propagate": False},
            "uvicorn.access": {"handlers": ["console"] if access_log else [], "propagate": False},
        },
    }


LOGGING = logging_config(LOG_FORMAT, LOG_LEVEL, WEB_ACCESS_LOG)
