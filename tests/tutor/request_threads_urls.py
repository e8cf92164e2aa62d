"""A URLconf for tests/tutor/test_request_threads.py: a synchronous view that says which thread ran it."""

from __future__ import annotations

import threading

from django.http import HttpRequest, JsonResponse
from django.urls import path

# The view waits here when asked (`?together=1`), so that two requests are in it at once.
together = threading.Barrier(2, timeout=10)


def probe(request: HttpRequest) -> JsonResponse:
    if request.GET.get("together"):
        together.wait()
    return JsonResponse({"thread": threading.get_ident()})


urlpatterns = [path("probe/", probe)]
