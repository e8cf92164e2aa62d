"""Log records with their context, as JSON lines or as text (LOG_FORMAT, tutor.settings.logs).

- `ContextFilter`, on the handler: puts the current log context's fields (core.request_id:
  request_id, user_id, conversation_id, turn_id, and task_name and task_id in a worker) on each
  record that passes, whichever logger made it: the project's, Django's, uvicorn's, Celery's.
- `JsonFormatter` (python-json-logger): one JSON object per line, with `timestamp` (ISO 8601,
  UTC), `level`, `logger`, `message`, the context's fields that are set, `status_code` where
  Django gives one, and `exc_info` for an exception. Nothing else from the record: the extra
  data some libraries attach to their records (Celery's task arguments, Django's request) is
  left out, so that a line holds what its message says and ids.
- `TextFormatter`: `time level logger message`, then the context's fields as `key=value`.

Messages themselves hold ids, counts and reasons, never a message's text, a title or a memory's
content (docs/operations.md, Logs).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

from core.request_id import FIELDS, context_fields

__all__ = ["ContextFilter", "JsonFormatter", "TextFormatter"]

# Record attributes copied into a JSON line when a record has them.
_EXTRA = ("status_code",)


class ContextFilter(logging.Filter):
    """Sets each field of the log context on the record (None where unset); passes every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = context_fields()
        for name in FIELDS:
            if getattr(record, name, None) is None:
                setattr(record, name, fields.get(name))
        return True


class JsonFormatter(_JsonFormatter):
    """A record as one JSON object: the fields the module docstring lists, in that order."""

    def add_fields(self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]) -> None:
        log_data["timestamp"] = datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds")
        log_data["level"] = record.levelname
        log_data["logger"] = record.name
        log_data["message"] = record.message
        for name in (*FIELDS, *_EXTRA):
            value = getattr(record, name, None)
            if value is not None:
                log_data[name] = value
        for name in ("exc_info", "stack_info"):
            if message_dict.get(name):
                log_data[name] = message_dict[name]


class TextFormatter(logging.Formatter):
    """`time level logger message`, and the context's fields that are set, as `key=value`."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = " ".join(f"{n}={v}" for n in FIELDS if (v := getattr(record, n, None)) is not None)
        if not fields:
            return text
        # The fields go on the message's line, before a traceback's lines.
        first, newline, rest = text.partition("\n")
        return f"{first} [{fields}]{newline}{rest}"
