"""The log context: the ids that say what a log line is about, kept for the work in progress.

A request begins a context (`RequestIdMiddleware`): its request id, the `X-Request-ID` header
when the client or the load balancer sent a sane one (`request_id_accepted`), else a new one,
and returned in the response's `X-Request-ID`. The user's id joins it once the request is
authenticated; the chat turn adds the conversation's id and its student message's (`turn_id`,
`context_bind`). core.logging puts these fields on every log record.

The context is one object per request, held in a contextvar: the copies of the context that the
database steps and the turn's own asyncio tasks run in share it, so what one of them binds is
seen by the others and by the request. A Celery task that the request enqueues carries the
fields in its message (`HEADER`, set by tutor.celery when the task is published) and runs with
them (`task_context_begin`), with its own name and id; the context ends with the task.

Only ids are kept: never a message's text, a title or a memory's content.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase
from django.utils.functional import SimpleLazyObject, empty

REQUEST_ID_HEADER = "X-Request-ID"
# The Celery message header that carries the fields to the task's worker.
HEADER = "log_context"
# What follows the work into a task; the task adds its own name and id.
CARRIED = ("request_id", "user_id", "conversation_id", "turn_id")
FIELDS = (*CARRIED, "task_name", "task_id")
# A request id accepted from a client: UUIDs, hex, base64 and haproxy's unique ids fit.
_SANE_ID = re.compile(r"[A-Za-z0-9._:+/=-]{1,128}")


class LogContext:
    """The fields of one unit of work (a request, a task); `request` lends its user's id once
    authentication has resolved it (never resolving it itself: that may query the database)."""

    __slots__ = ("fields", "request")

    def __init__(self, fields: dict[str, Any] | None = None, request: HttpRequest | None = None) -> None:
        self.fields: dict[str, Any] = {k: v for k, v in (fields or {}).items() if k in FIELDS and v is not None}
        self.request = request

    def values(self) -> dict[str, Any]:
        if "user_id" not in self.fields and self.request is not None:
            user_id = _authenticated_user_id(self.request)
            if user_id is not None:
                self.fields["user_id"] = user_id
        return self.fields


_current: ContextVar[LogContext | None] = ContextVar("log_context", default=None)


def _authenticated_user_id(request: HttpRequest) -> Any:
    # AuthenticationMiddleware sets a lazy user; DRF's authentication replaces it with the
    # user it found (Request.user's setter), or the lazy one gets evaluated by a view.
    user = request.__dict__.get("user")
    if isinstance(user, SimpleLazyObject):
        user = user._wrapped  # type: ignore[attr-defined]
        if user is empty:
            return None
    if user is not None and getattr(user, "is_authenticated", False):
        return user.pk
    return None


def request_id_accepted(value: str | None) -> str:
    """`value` when it is a sane request id (1-128 characters of letters, digits and
    `._:+/=-`), else a new one (32 hex digits)."""
    if value and _SANE_ID.fullmatch(value):
        return value
    return uuid.uuid4().hex


def context_begin(request: HttpRequest | None = None, **fields: Any) -> LogContext:
    """Begin a new context with these fields in the current one (a request, a task), replacing
    whatever this thread or task held before."""
    context = LogContext(fields, request)
    _current.set(context)
    return context


def context_bind(**fields: Any) -> None:
    """Add these fields (ids only) to the current context, seen by all the work of the same
    request or task; begins a context if there is none."""
    context = _current.get()
    if context is None:
        context_begin(**fields)
        return
    context.fields.update({k: v for k, v in fields.items() if k in FIELDS and v is not None})


def context_fields() -> dict[str, Any]:
    """The current context's fields (a copy); empty outside a request or a task."""
    context = _current.get()
    return dict(context.values()) if context is not None else {}


def context_end() -> None:
    """Leave the current context: later log lines of this thread or task carry no ids."""
    _current.set(None)


# --- Celery --------------------------------------------------------------------------------------


def task_headers() -> dict[str, Any]:
    """What a task sent now carries in its message's `HEADER`: the fields that follow the work."""
    fields = context_fields()
    return {k: fields[k] for k in CARRIED if k in fields}


def task_context_begin(*, carried: Any, task_name: str, task_id: str) -> None:
    """Begin a task's context: the fields its message carried (a mapping, or anything else
    ignored), and the task's name and id."""
    fields = {k: v for k, v in carried.items() if k in CARRIED} if isinstance(carried, dict) else {}
    context_begin(**fields, task_name=task_name, task_id=task_id)


# --- The middleware ------------------------------------------------------------------------------


class RequestIdMiddleware:
    """Begins each request's log context with its request id, and returns the id in the
    response's `X-Request-ID` header. First in MIDDLEWARE, so every line of the request has it."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        request_id = self._begin(request)
        response = self.get_response(request)
        assert isinstance(response, HttpResponseBase)
        response[REQUEST_ID_HEADER] = request_id
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        request_id = self._begin(request)
        response = await self.get_response(request)  # type: ignore[misc]
        response[REQUEST_ID_HEADER] = request_id
        return response

    @staticmethod
    def _begin(request: HttpRequest) -> str:
        request_id = request_id_accepted(request.headers.get(REQUEST_ID_HEADER))
        request.request_id = request_id  # type: ignore[attr-defined]
        context_begin(request, request_id=request_id)
        return request_id
