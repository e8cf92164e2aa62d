"""`GET /metrics` (the Prometheus text format) and the middleware counting responses by route.

`/metrics` is served to a scraper holding METRICS_TOKEN (`Authorization: Bearer <token>`), or,
when no token is configured, to a client whose address (REMOTE_ADDR) is loopback or private.
Anyone else gets the same 404 as an unknown URL: the endpoint is not shown to exist. Behind a
load balancer every client has the balancer's private address: set METRICS_TOKEN there.
"""

from __future__ import annotations

import hmac
import ipaddress

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from core import metrics
from core.metrics_collector import QueueCollector
from core.middleware import OnTheLoop


def scrape_allowed(request: HttpRequest) -> bool:
    token: str = settings.METRICS_TOKEN
    if token:
        given = request.headers.get("Authorization", "")
        return given.startswith("Bearer ") and hmac.compare_digest(given[7:].strip().encode(), token.encode())
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    return address.is_loopback or address.is_private


def _registry() -> CollectorRegistry:
    # The collected samples (of every process in multiprocess mode) and, read at each scrape,
    # the queues and backlogs. A registry of its own: the default one must not collect them at
    # import time, nor twice.
    base = metrics.registry(settings.METRICS_EXTRA_DIRS)
    if base is metrics.default_registry():
        scrape = CollectorRegistry()
        scrape.register(_Forward(base))
    else:
        scrape = base
    scrape.register(QueueCollector())
    return scrape


class _Forward:
    """The default registry's samples, inside the registry of one scrape."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    def collect(self):  # type: ignore[no-untyped-def]
        return self.registry.collect()


@never_cache
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not scrape_allowed(request):
        raise Http404
    return HttpResponse(generate_latest(_registry()), content_type=CONTENT_TYPE_LATEST)


class ResponsesByRoute(OnTheLoop):
    """Middleware: counts each response by the name of the URL pattern that answered it (never the
    path, which holds ids), its method and status; an unmatched URL counts as "unmatched". Sync
    and async: under ASGI it counts on the event loop (core.middleware.OnTheLoop), with no
    thread hand-off."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        match = request.resolver_match
        route = (match.view_name if match and match.url_name else None) or "unmatched"
        method = request.method if request.method in _METHODS else "other"
        metrics.response_observed(route=route, method=method or "other", status=response.status_code)
        return response


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
