"""/static/ served by the ASGI application itself (SERVE_STATIC, tutor.asgi)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest

from core.errors import handler404


class StaticFilesHandler(ASGIStaticFilesHandler):
    """Django's static files handler, answering every path that names no file of the static
    folders with the API's 404 in the error envelope (core.errors.handler404), DEBUG or not.

    Django's handler turns only Http404 into a response (with DEBUG, an HTML page): a `..`
    segment (`/static/%2e%2e/`) makes the finders raise SuspiciousFileOperation and a NUL byte
    (`%00`) makes the file system calls raise ValueError, and either reached uvicorn as a
    plain-text 500. Such a path is refused before any finder sees it; those errors are still
    caught, as a second line.
    """

    def serve(self, request: HttpRequest) -> Any:
        path = self.file_path(request.path)
        if "\x00" in path or ".." in PurePosixPath(path.replace("\\", "/")).parts:
            return handler404(request)
        try:
            return super().serve(request)
        except (Http404, SuspiciousOperation, ValueError):
            return handler404(request)
