"""The pages an LMS shows in its frame (the launch's pages under /lti/, the student and teacher
pages under /app/) may be framed by the registered platforms, and by nothing else: their
Content-Security-Policy's `frame-ancestors` names the platforms' origins (of their issuer and
authorisation URLs) and X-Frame-Options is left off (`frame-ancestors` supersedes it where
browsers know it). Every other response keeps `frame-ancestors 'none'`."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest, HttpResponse
from lti_tool.models import LtiRegistration

FRAMED_PREFIXES = ("/lti/", "/app/")


def platform_origins() -> list[str]:
    """The origins of the active registrations of the tool's platforms."""
    origins: set[str] = set()
    rows = LtiRegistration.objects.active().filter(platform__isnull=False).values_list("issuer", "auth_url")
    for urls in rows:
        for url in urls:
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") and parts.netloc:
                origins.add(f"{parts.scheme}://{parts.netloc}")
    return sorted(origins)


def _frame_for_platforms(request: HttpRequest, response: HttpResponse) -> None:
    if not (request.path.startswith(FRAMED_PREFIXES) and response.get("Content-Type", "").startswith("text/html")):
        return
    origins = platform_origins()
    if origins:
        replace = dict(getattr(response, "_csp_replace", None) or {})
        replace["frame-ancestors"] = ["'self'", *origins]
        response._csp_replace = replace  # type: ignore[attr-defined]
        response.xframe_options_exempt = True


class PlatformFrames:
    """Middleware, after django-csp's and the clickjacking one in MIDDLEWARE (so that it sees
    the response first): the framed pages' `frame-ancestors` (module docstring). Sync and async:
    the chat's streaming views stay async, and only the framed pages query the platforms."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        if iscoroutinefunction(get_response):
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if iscoroutinefunction(self):
            return self.__acall__(request)
        response = self.get_response(request)
        _frame_for_platforms(request, response)
        return response

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        response = await self.get_response(request)
        if request.path.startswith(FRAMED_PREFIXES):
            await sync_to_async(_frame_for_platforms)(request, response)
        return response
