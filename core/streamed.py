"""One view for an answer streamed by its own asyncio task (a chat turn, a question about a
student or a class): SSE or JSON, the same checks and errors for both.

A POST runs DRF's checks (authentication, throttles, the input) in one database step
(`prepare`), together with the subclass's own first step when it has one (`open`), then starts
the work and answers:
- with `Accept: text/event-stream`: 200 and the feed's events as Server-Sent Events;
- else, once the feed is closed: the subclass's JSON body (`answer`), or the error envelope of
  the feed's error.
An error found before anything is streamed is the error envelope (JSON whatever the client
accepts); the database unreachable in that step is 503 `database_unavailable` (retry_safe). The
methods a subclass also serves synchronously (`sync_methods`, a GET) are dispatched by DRF in
one database step; any other method is a 405 envelope naming the allowed ones.

`as_async_view()` gives the URL's view; the schema generator documents it through its class.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext
from django.views.decorators.csrf import csrf_exempt
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.db import db_step
from core.errors import DATABASE_ERRORS, ApplicationError, DatabaseUnavailable, error_body
from core.feeds import EventFeed, sse


class MethodNotAllowed(ApplicationError):
    status_code = 405
    code = "method_not_allowed"


def error_response(exc: ApplicationError) -> JsonResponse:
    """The error envelope of `exc`, with its status and Retry-After."""
    response = JsonResponse(error_body(exc.code, exc.message, exc.details, exc.retry_safe), status=exc.status_code)
    if exc.retry_after:
        response["Retry-After"] = str(exc.retry_after)
    return response


def rendered(response: HttpResponseBase) -> HttpResponseBase:
    if isinstance(response, Response):
        response.render()
    return response


class StreamedAnswerApi(APIView):
    """The base of a streamed answer's API class. A subclass gives `checked` (the validated
    request, in `prepare`'s step), `start` (the work started, its feed) and `answer` (the JSON
    body and status of a closed feed); it may override `open` to run its first database work in
    `prepare`'s step."""

    # Served synchronously, dispatched by DRF (e.g. "GET", "HEAD"); POST is the streamed answer.
    sync_methods: tuple[str, ...] = ()

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        # `Accept: text/event-stream` is answered by `post`, not by a DRF renderer; errors found
        # by DRF are JSON whatever the client accepts.
        return super().perform_content_negotiation(request, force=True)

    def checked(self, request: Request, **kwargs: Any) -> Any:
        """The request checked and validated (in a database step): what `start` needs."""
        raise NotImplementedError

    async def start(self, checked: Any, **kwargs: Any) -> EventFeed:
        """Start the work for a checked request: its feed. Raises ApplicationError before
        anything is streamed."""
        raise NotImplementedError

    def answer(self, feed: EventFeed) -> tuple[dict[str, Any], int]:
        """The JSON body and status of a feed closed without an error."""
        raise NotImplementedError

    def prepare(self, request: HttpRequest, **kwargs: Any) -> Any:
        """DRF's checks and `checked`: its result, or the rendered error response."""
        self.args, self.kwargs = (), kwargs
        drf_request = self.initialize_request(request)
        self.request = drf_request
        self.headers = self.default_response_headers
        try:
            self.initial(drf_request)
            return self.checked(drf_request, **kwargs)
        except Exception as exc:
            return rendered(self.finalize_response(drf_request, self.handle_exception(exc)))

    async def open(self, request: HttpRequest, **kwargs: Any) -> EventFeed | HttpResponseBase:
        """`prepare` in one database step, then `start`: the feed, or the response to give."""
        try:
            checked = await db_step(self.prepare, request, **kwargs)
        except DATABASE_ERRORS as exc:
            raise DatabaseUnavailable(gettext("The database is unavailable; try again in a moment.")) from exc
        if isinstance(checked, HttpResponseBase):
            return checked
        return await self.start(checked, **kwargs)

    async def post(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        try:
            opened = await self.open(request, **kwargs)
        except ApplicationError as exc:
            return error_response(exc)
        if isinstance(opened, HttpResponseBase):
            return opened
        feed = opened
        if "text/event-stream" in request.headers.get("Accept", ""):
            response = StreamingHttpResponse(sse(feed), content_type="text/event-stream; charset=utf-8")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"  # nginx: pass each event on at once
            return response
        # If this request is cancelled (the client left), the work's own task still completes it.
        await feed.wait()
        if feed.error is not None:
            return error_response(feed.error)
        body, status = self.answer(feed)
        return JsonResponse(body, status=status)

    def read(self, request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
        """A synchronous method, dispatched by DRF (authentication, the lookup, errors)."""
        return rendered(self.dispatch(request, **kwargs))

    @classmethod
    def as_async_view(cls) -> Any:
        """The URL's asynchronous view: POST streamed, `sync_methods` in a database step, any
        other method a 405."""

        @csrf_exempt  # DRF's SessionAuthentication enforces CSRF itself, in `prepare`.
        async def view(request: HttpRequest, **kwargs: Any) -> HttpResponseBase:
            if request.method == "POST":
                return await cls().post(request, **kwargs)
            if request.method in cls.sync_methods:
                return await db_step(cls().read, request, **kwargs)
            response = error_response(
                MethodNotAllowed(gettext('Method "%(method)s" not allowed.') % {"method": request.method})
            )
            response["Allow"] = ", ".join([*cls.sync_methods, "POST"])  # RFC 9110: the URL's methods
            return response

        # The schema generator documents this view through its class.
        view.cls = cls  # type: ignore[attr-defined]
        view.initkwargs = {}  # type: ignore[attr-defined]
        return view
