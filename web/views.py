"""The web app's pages: plain HTML shells whose scripts (web/src, bundled into web/static/web)
sign in with a session and do everything else through the API, like any other client.

The pages read no data themselves. `ensure_csrf_cookie` sets the `csrftoken` cookie that the
scripts send back in `X-CSRFToken` on every write.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_safe


@require_safe
@ensure_csrf_cookie
def student_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/student.html", {"script": "web/student.js"})


@require_safe
@ensure_csrf_cookie
def teacher_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/teacher.html", {"script": "web/teacher.js"})
