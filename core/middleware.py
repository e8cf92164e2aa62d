"""Django's middleware, with the hooks that touch only the request and the response in memory run
on the event loop under ASGI.

Under ASGI, Django's `MiddlewareMixin` sends every `process_request` and `process_response` to a
thread (asgiref's `sync_to_async`), whatever the hook does: two thread hand-offs per middleware
and request, more than the hooks themselves cost. The classes below are Django's, unchanged,
except that their hooks run on the loop, in the request's context, as a synchronous request runs
them in its thread. A hook that may reach the database, the cache or a file still runs in the
thread, and only then:

- `SessionMiddleware`: the response's hook when the session was modified (it saves it);
- `MessageMiddleware`: the response's hook when messages were read or added (it stores them,
  in the session too);
- `CsrfViewMiddleware`: the view's hook for an unsafe method to a view that is not
  csrf-exempt (it may parse a form body), and every hook with CSRF_USE_SESSIONS.

Everything else they do is headers, cookies, lazy objects, URL resolving and cached look-ups
(LocaleMiddleware checks a language code's catalogue on disk once per process, cached by
Django). Under WSGI and the test client (synchronous) they are exactly Django's.

MIDDLEWARE names these in place of Django's (and django-csp's); Django's deployment checks look
for its own names, and core.checks has them take these for Django's (`LIBRARY_NAMES`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from csp import middleware as csp_middleware
from django.conf import settings
from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.http import HttpRequest, HttpResponseBase
from django.middleware import clickjacking, common, csrf, locale, security
from django.utils.deprecation import MiddlewareMixin


class OnTheLoop(MiddlewareMixin):
    """A `MiddlewareMixin` whose hooks run on the event loop under ASGI, except the response's
    when `response_needs_thread` says it may do I/O."""

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        response = None
        if hasattr(self, "process_request"):
            response = self.process_request(request)
        response = response or await self.get_response(request)  # type: ignore[misc]
        if hasattr(self, "process_response"):
            if self.response_needs_thread(request, response):
                response = await sync_to_async(self.process_response, thread_sensitive=True)(request, response)
            else:
                response = self.process_response(request, response)
        return response

    def response_needs_thread(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        return False


class SecurityMiddleware(OnTheLoop, security.SecurityMiddleware):
    pass


class LocaleMiddleware(OnTheLoop, locale.LocaleMiddleware):
    pass


class CommonMiddleware(OnTheLoop, common.CommonMiddleware):
    pass


class AuthenticationMiddleware(OnTheLoop, auth.AuthenticationMiddleware):
    pass


class XFrameOptionsMiddleware(OnTheLoop, clickjacking.XFrameOptionsMiddleware):
    pass


class SessionMiddleware(OnTheLoop, sessions.SessionMiddleware):
    """The session's store is made lazily (no I/O); saving it needs the thread."""

    def response_needs_thread(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        session = getattr(request, "session", None)
        return session is not None and (session.modified or settings.SESSION_SAVE_EVERY_REQUEST)


class MessageMiddleware(OnTheLoop, messages.MessageMiddleware):
    """The storage is made lazily (no I/O); storing messages that were read or added needs the
    thread (the session's storage loads and writes the session)."""

    def response_needs_thread(self, request: HttpRequest, response: HttpResponseBase) -> bool:
        storage = getattr(request, "_messages", None)
        return storage is not None and (storage.used or storage.added_new)


class CsrfViewMiddleware(OnTheLoop, csrf.CsrfViewMiddleware):
    """The request's and the response's hooks read and set a cookie; the view's hook accepts a
    safe method or a csrf-exempt view on the loop, and checks anything else in the thread (it may
    read the form body). With CSRF_USE_SESSIONS every hook needs the thread (the session)."""

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        super().__init__(get_response)
        if iscoroutinefunction(get_response):
            # Django's handler awaits a coroutine function as it is and sends a plain one to
            # the thread: the instance's own hook decides.
            self.process_view = self._process_view_async  # type: ignore[method-assign,assignment]

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        if settings.CSRF_USE_SESSIONS:
            return await MiddlewareMixin.__acall__(self, request)
        return await super().__acall__(request)

    async def _process_view_async(
        self, request: HttpRequest, callback: Any, callback_args: Any, callback_kwargs: Any
    ) -> HttpResponseBase | None:
        check = csrf.CsrfViewMiddleware.process_view
        if not settings.CSRF_USE_SESSIONS and (
            getattr(request, "csrf_processing_done", False)
            or getattr(callback, "csrf_exempt", False)
            or request.method in ("GET", "HEAD", "OPTIONS", "TRACE")
        ):
            return check(self, request, callback, callback_args, callback_kwargs)
        thread: Callable[..., Awaitable[HttpResponseBase | None]] = sync_to_async(check, thread_sensitive=True)
        return await thread(self, request, callback, callback_args, callback_kwargs)


class CSPMiddleware(OnTheLoop, csp_middleware.CSPMiddleware):
    pass


# What MIDDLEWARE names here, by the library's name of the class each one is.
LIBRARY_NAMES = {
    f"{__name__}.{cls.__name__}": f"{library.__module__}.{library.__qualname__}"
    for cls in (
        SecurityMiddleware,
        LocaleMiddleware,
        CommonMiddleware,
        AuthenticationMiddleware,
        XFrameOptionsMiddleware,
        SessionMiddleware,
        MessageMiddleware,
        CsrfViewMiddleware,
        CSPMiddleware,
    )
    for library in cls.__bases__[1:]
}
