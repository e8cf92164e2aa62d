"""The view that publishes the OpenAPI schema (apart from core.schema, which DRF's settings name
as the schema class: a view imported there would import DRF's settings while they load)."""

from __future__ import annotations

from drf_spectacular.views import SpectacularAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response


class SchemaApi(SpectacularAPIView):
    """GET /api/schema/: the OpenAPI document, in YAML by default or JSON (`?format=json` or
    `Accept: application/json`). An error is in the JSON envelope like every other answer (a
    format it does not publish, `?format=xml`, is a 404 `not_found`; an Accept header it cannot
    satisfy a 406 `not_acceptable`), never rendered as the document's YAML."""

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)
        # The negotiated renderer (YAML by default) is for the document, not for the envelope.
        self.request.accepted_renderer = JSONRenderer()
        self.request.accepted_media_type = JSONRenderer.media_type
        return response
