"""Every API response the tests receive is checked against the OpenAPI schema.

`install()` wraps the test client (DRF's APIClient, and Django's Client under it) so that each
JSON response of a documented operation is validated with openapi-core against the schema the
server publishes at /api/schema/: an undocumented status code, a missing or extra-typed field,
or an error outside the envelope fails the test that received it. Streams (Server-Sent Events)
and URLs the schema does not describe (the admin, unknown URLs) are not checked here.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from django.test import Client
from openapi_core import OpenAPI
from openapi_core.contrib.django import DjangoOpenAPIRequest, DjangoOpenAPIResponse
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound

# The responses checked in this process; under pytest-xdist, the controller's is the sum of its
# workers' (WorkerCounts), which each hands over as it ends (tests/conftest.py).
checked: dict[str, int] = {"responses": 0}
WORKER_OUTPUT_KEY = "schema_responses_checked"


class WorkerCounts:
    """A pytest-xdist plugin of the controller: adds each worker's count, when the worker ends,
    to `checked`, which the closing line prints."""

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        checked["responses"] += int(output.get(WORKER_OUTPUT_KEY, 0))


@cache
def published_schema() -> dict[str, Any]:
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.renderers import OpenApiJsonRenderer

    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(OpenApiJsonRenderer().render(schema, renderer_context={}))


class _Request(DjangoOpenAPIRequest):
    # A response is checked against its operation; the request's body is not needed (and an
    # oversized one cannot be read again).
    @property
    def body(self) -> bytes:
        return b""


@cache
def _openapi() -> OpenAPI:
    return OpenAPI.from_dict(published_schema())


def check_response(response: Any) -> None:
    request = getattr(response, "wsgi_request", None)
    if request is None or not request.path.startswith("/api/v1/") or getattr(response, "streaming", False):
        return
    if request.resolver_match is None or request.resolver_match.route.startswith("^api/"):
        return  # an unknown URL: 404 in the envelope, not an operation of the schema
    try:
        _openapi().validate_response(_Request(request), DjangoOpenAPIResponse(response))
    except (PathNotFound, OperationNotFound):
        return
    except Exception as exc:
        body = response.content[:500]
        raise AssertionError(
            f"{request.method} {request.path} answered {response.status_code}, which the schema does not allow: "
            f"{exc!r} {getattr(exc, '__cause__', '')!r}\n{body!r}"
        ) from exc
    checked["responses"] += 1


def install() -> None:
    """Check every response of Django's test Client (and so DRF's APIClient) from now on."""
    original = Client.request

    def request(self: Client, **kwargs: Any) -> Any:
        response = original(self, **kwargs)
        check_response(response)
        return response

    Client.request = request  # type: ignore[method-assign]
