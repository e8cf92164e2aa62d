"""The web app's pages: plain HTML shells whose scripts (web/src, bundled into web/static/web)
sign in with a session and do everything else through the API, like any other client.

The pages read no data themselves. `ensure_csrf_cookie` sets the `csrftoken` cookie that the
scripts send back in `X-CSRFToken` on every write. They run under the site's
Content-Security-Policy (scripts and styles from this server only), and so do the API docs
(/api/docs/, /api/redoc/), served here with every asset from this server.

`root` answers GET / with where to go from there (the pages, the API's docs and schema, the admin):
a page of links for a browser, JSON for any other client. When the demo model answers
(LLM_DEMO_MODEL, `make run` without a model), every page says so and how to plug a real one in.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_update
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, ensure_csrf_cookie
from django.views.decorators.http import require_safe
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

from core.errors import error_body

# The site's entry points, by the name of the URL each one is served at.
ENTRY_POINTS = {
    "student_app": "web:student",
    "teacher_app": "web:teacher",
    "api_docs": "docs",
    "api_reference": "redoc",
    "api_schema": "schema",
    "admin": "admin:index",
}


@csrf_exempt  # it writes nothing: any other method is a 405, not a CSRF failure
def root(request: HttpRequest) -> HttpResponse:
    """GET /: where to go from the server's address (ENTRY_POINTS, as absolute URLs), which `make
    run` prints too. A client that prefers HTML (a browser) gets a page of links; any other
    (`Accept: application/json`, `*/*`, none) gets `{"name", "links": {entry point: URL}}`.
    Any method but GET and HEAD is a 405 in the error envelope. Not an operation of the API
    (which is under /api/v1/), so not in its schema."""
    if request.method not in ("GET", "HEAD"):
        message = _('Method "%(method)s" not allowed.') % {"method": request.method}
        response: HttpResponse = JsonResponse(error_body("method_not_allowed", message), status=405)
        response["Allow"] = "GET, HEAD"
        return response
    links = {key: request.build_absolute_uri(reverse(name)) for key, name in ENTRY_POINTS.items()}
    name = settings.SPECTACULAR_SETTINGS["TITLE"]
    # JSON first: it wins a tie (`*/*`), so scripts and the API's clients keep their answer.
    if request.get_preferred_type(["application/json", "text/html"]) == "text/html":
        context = {"name": name, "links": links, "demo_model": settings.LLM_DEMO_MODEL}
        response = render(request, "web/root.html", context)
    else:
        response = JsonResponse({"name": name, "links": links})
    patch_vary_headers(response, ["Accept"])
    return response


@require_safe
@ensure_csrf_cookie
def student_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/student.html", {"script": "web/student.js", "demo_model": settings.LLM_DEMO_MODEL})


@require_safe
@ensure_csrf_cookie
def teacher_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/teacher.html", {"script": "web/teacher.js", "demo_model": settings.LLM_DEMO_MODEL})


@require_safe
@ensure_csrf_cookie
def guardian_page(request: HttpRequest) -> HttpResponse:
    return render(request, "web/guardian.html", {"script": "web/guardian.js", "demo_model": settings.LLM_DEMO_MODEL})


# --- The API docs, with nothing from another host ---------------------------------------------

# The one asset Redoc's script fetches from another host: the Redocly logo under its menu.
REDOC_LOGO_URL = b'"https://cdn.redoc.ly/redoc/logo-mini.svg"'
# An empty image in its place (img-src allows data:); Redoc hides an image that fails to load.
REDOC_NO_LOGO = b"\"data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E\""
REDOC_SCRIPT = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
# The docs render with inline styles (Swagger UI's page, Redoc's styled components): their pages
# allow them; scripts stay 'self' only, as everywhere (tutor.settings: CONTENT_SECURITY_POLICY).
DOCS_CSP = {"style-src": [SELF, UNSAFE_INLINE]}


@cache
def _redoc_script() -> bytes:
    path = finders.find(REDOC_SCRIPT)
    if not isinstance(path, str):
        raise ImproperlyConfigured(f"{REDOC_SCRIPT} not found: is drf-spectacular-sidecar installed?")
    return Path(path).read_bytes().replace(REDOC_LOGO_URL, REDOC_NO_LOGO)


@require_safe
def redoc_script(request: HttpRequest) -> HttpResponse:
    """Redoc's standalone script, from the drf-spectacular-sidecar package, without the logo it
    would fetch from cdn.redoc.ly."""
    response = HttpResponse(_redoc_script(), content_type="application/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response


class RedocView(SpectacularRedocView):
    """/api/redoc/: Redoc without web fonts (the system's sans-serif; the package's page loads
    them from Google Fonts) and with the script of `redoc_script`."""

    template_name = "web/redoc.html"

    @staticmethod
    def _redoc_standalone() -> str:
        return reverse("redoc-script")


# Redoc runs its search in a worker it makes from a blob: URL.
redoc_page = csp_update({**DOCS_CSP, "worker-src": ["blob:"]})(RedocView.as_view(url_name="schema"))
# The split view serves Swagger UI's start-up script as a file of its own (?script), so that the
# page has no inline script.
swagger_page = csp_update(DOCS_CSP)(SpectacularSwaggerSplitView.as_view(url_name="schema"))
