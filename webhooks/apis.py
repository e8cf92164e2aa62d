"""The webhooks API, under /api/v1/webhooks/ (tutor/urls.py): staff and school administrators
subscribe their systems to the product's events and read each webhook's delivery log. Anyone
else gets a 403 on the list and a create, and a 404 on any webhook; an administrator gets a 404
on another school's."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import MAX_ID, Pagination, StrictCharField
from core.events import EVENT_TYPES
from core.schema import ErrorEnvelope
from webhooks import selectors, services
from webhooks.models import Webhook, WebhookDelivery


class WebhookOutput(serializers.ModelSerializer[Webhook]):
    school = serializers.IntegerField(source="school_id", allow_null=True, help_text="None: every school (staff).")
    events = serializers.ListField(child=serializers.ChoiceField(choices=EVENT_TYPES))

    class Meta:
        model = Webhook
        fields = [
            "id",
            "url",
            "school",
            "events",
            "description",
            "active",
            "disabled_reason",
            "disabled_at",
            "consecutive_failures",
            "created_at",
        ]
        extra_kwargs = {
            "active": {"help_text": "False once disabled after failing deliveries (see disabled_reason)."},
            "consecutive_failures": {"help_text": "Failed deliveries since the last one sent."},
        }


class WebhookCreatedOutput(WebhookOutput):
    class Meta(WebhookOutput.Meta):
        fields = [*WebhookOutput.Meta.fields, "secret"]
        extra_kwargs = {
            **WebhookOutput.Meta.extra_kwargs,
            "secret": {"help_text": "The signing secret (whsec_...): shown this once only."},
        }


class WebhookDeliveryOutput(serializers.ModelSerializer[WebhookDelivery]):
    event_type = serializers.ChoiceField(choices=EVENT_TYPES)
    payload = serializers.JSONField(help_text="What was (or is to be) posted: ids and kinds only.")

    class Meta:
        model = WebhookDelivery
        fields = [
            "id",
            "event_type",
            "message_id",
            "status",
            "attempts",
            "last_error",
            "response_code",
            "payload",
            "created_at",
            "last_attempt_at",
            "sent_at",
        ]
        extra_kwargs = {
            "message_id": {"help_text": "The webhook-id header, the same on every try."},
            "response_code": {"help_text": "The receiver's last answer, if any."},
        }


_MANAGERS = OpenApiResponse(ErrorEnvelope, description="Neither staff nor a school administrator.")
_NOT_VISIBLE = OpenApiResponse(ErrorEnvelope, description="No such webhook, or not one of the requester's schools.")


class WebhookListCreateApi(APIView):
    pagination_class = Pagination

    class Input(serializers.Serializer[None]):
        url = serializers.URLField(max_length=500, help_text="http(s); not a private or loopback address.")
        events = serializers.MultipleChoiceField(choices=EVENT_TYPES, allow_empty=False)
        school = serializers.IntegerField(
            min_value=1,
            max_value=MAX_ID,
            required=False,
            allow_null=True,
            help_text="The school (or district) whose students' events it receives; omitted: every school (staff).",
        )
        secret = StrictCharField(
            max_length=200, required=False, default="", allow_blank=True, help_text="whsec_...; omitted: generated."
        )
        description = StrictCharField(max_length=200, required=False, default="", allow_blank=True)

    @extend_schema(summary="List webhooks", responses={200: WebhookOutput(many=True), 403: _MANAGERS})
    def get(self, request: Request) -> Response:
        """The webhooks of the requester's schools (every one for staff), newest first."""
        qs = selectors.webhook_list(user=request.user)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(WebhookOutput(page, many=True).data)

    @extend_schema(
        summary="Subscribe a webhook",
        request=Input,
        responses={
            201: WebhookCreatedOutput,
            403: _MANAGERS,
            404: OpenApiResponse(ErrorEnvelope, description="The school is not one of the requester's."),
        },
    )
    def post(self, request: Request) -> Response:
        """Subscribe a URL to events of a school's students. The answer holds the signing
        secret, shown this once."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        hook = services.webhook_create(
            user=request.user,
            url=values["url"],
            events=sorted(values["events"]),
            school_id=values.get("school"),
            secret=values["secret"],
            description=values["description"],
        )
        return Response(WebhookCreatedOutput(hook).data, status=201)


class WebhookDetailApi(APIView):
    @extend_schema(summary="Get a webhook", responses={200: WebhookOutput, 404: _NOT_VISIBLE})
    def get(self, request: Request, webhook_id: int) -> Response:
        """One webhook (its secret is never shown again)."""
        return Response(WebhookOutput(selectors.webhook_get(user=request.user, webhook_id=webhook_id)).data)

    class Input(serializers.Serializer[None]):
        url = serializers.URLField(max_length=500, required=False, help_text="http(s); not a private address.")
        events = serializers.MultipleChoiceField(choices=EVENT_TYPES, allow_empty=False, required=False)
        description = StrictCharField(max_length=200, required=False, allow_blank=True)
        active = serializers.BooleanField(
            required=False,
            help_text="true turns a disabled webhook on again (its failure count and reason are cleared); "
            "false turns it off.",
        )

    @extend_schema(
        summary="Change a webhook",
        request=Input,
        responses={200: WebhookOutput, 400: OpenApiResponse(ErrorEnvelope), 404: _NOT_VISIBLE},
    )
    def patch(self, request: Request, webhook_id: int) -> Response:
        """Change the URL, the events or the description, or turn the webhook off or on again.
        Events that came while it was off are not sent."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        hook = services.webhook_update(
            user=request.user,
            webhook_id=webhook_id,
            url=values.get("url"),
            events=sorted(values["events"]) if "events" in values else None,
            description=values.get("description"),
            active=values.get("active"),
        )
        return Response(WebhookOutput(hook).data)

    @extend_schema(summary="Remove a webhook", responses={204: None, 404: _NOT_VISIBLE})
    def delete(self, request: Request, webhook_id: int) -> Response:
        """Remove the webhook and its delivery log; nothing more is sent to it."""
        services.webhook_delete(user=request.user, webhook_id=webhook_id)
        return Response(status=204)


class WebhookDeliveriesApi(APIView):
    pagination_class = Pagination

    @extend_schema(
        summary="List a webhook's deliveries", responses={200: WebhookDeliveryOutput(many=True), 404: _NOT_VISIBLE}
    )
    def get(self, request: Request, webhook_id: int) -> Response:
        """The webhook's deliveries, newest first: status, tries, the last error and answer."""
        qs = selectors.delivery_list(user=request.user, webhook_id=webhook_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(WebhookDeliveryOutput(page, many=True).data)
