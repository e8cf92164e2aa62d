"""The LTI API, under /api/v1/lti/ (tutor/urls.py): staff and school administrators register
their LMS platforms (anyone else: 403 on the list and a create, 404 on any platform; an
administrator gets a 404 on another school's), and the page a launch opened exchanges its
one-time code for an API token (lti.handoff)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.apis import UserOutput
from core.api import MAX_ID, Pagination, StrictBooleanField, StrictCharField, represent
from core.schema import ErrorEnvelope
from lti import selectors, services
from lti.handoff import handoff_redeem
from lti.models import Platform


def tool_urls(request: HttpRequest | Request) -> dict[str, str]:
    """What the platform's administrator types into the LMS, absolute on this server."""
    return {
        name: request.build_absolute_uri(reverse(f"lti:{route}"))
        for name, route in (
            ("login_url", "login"),
            ("launch_url", "launch"),
            ("deep_link_url", "deep-link"),
            ("jwks_url", "jwks"),
        )
    }


class ToolUrls(serializers.Serializer[None]):
    login_url = serializers.CharField(help_text="The OIDC login initiation URL (Moodle: Initiate login URL).")
    launch_url = serializers.CharField(help_text="The launch (redirect) URL, also the tool URL.")
    deep_link_url = serializers.CharField(help_text="The deep linking URL (Moodle: Content Selection URL).")
    jwks_url = serializers.CharField(help_text="The tool's public keyset URL (JWKS).")


class PlatformOutput(serializers.ModelSerializer[Platform]):
    school = serializers.IntegerField(source="school_id")
    name = serializers.CharField(source="registration.name")
    issuer = serializers.CharField(source="registration.issuer")
    client_id = serializers.CharField(source="registration.client_id")
    auth_url = serializers.CharField(source="registration.auth_url")
    token_url = serializers.CharField(source="registration.token_url")
    keyset_url = serializers.CharField(source="registration.keyset_url")
    active = serializers.BooleanField(source="registration.is_active")
    deployment_ids = serializers.SerializerMethodField(help_text="The active deployments' ids.")
    tool = serializers.SerializerMethodField(help_text="What to type into the LMS.")

    class Meta:
        model = Platform
        fields = [
            "id",
            "name",
            "school",
            "issuer",
            "client_id",
            "deployment_ids",
            "auth_url",
            "token_url",
            "keyset_url",
            "active",
            "tool",
            "created_at",
        ]

    def get_deployment_ids(self, platform: Platform) -> list[str]:
        return sorted(d.deployment_id for d in platform.registration.deployments.all() if d.is_active)

    @extend_schema_field(ToolUrls)
    def get_tool(self, platform: Platform) -> dict[str, str]:
        return tool_urls(self.context["request"])


class PlatformInput(serializers.Serializer[None]):
    name = StrictCharField(max_length=255, help_text="A name for this LMS.")
    issuer = StrictCharField(max_length=255, help_text="The platform's issuer (Moodle: Platform ID).")
    client_id = StrictCharField(max_length=255, help_text="The client id the LMS gave the tool.")
    deployment_ids = serializers.ListField(
        child=StrictCharField(max_length=255),
        max_length=100,
        help_text="The deployment ids the LMS gave; a launch through another one is refused.",
    )
    auth_url = serializers.URLField(max_length=200, help_text="The platform's OIDC authentication request URL.")
    token_url = serializers.URLField(max_length=200, help_text="The platform's OAuth2 access token URL.")
    keyset_url = serializers.URLField(max_length=200, help_text="The platform's public keyset URL.")
    active = StrictBooleanField(required=False, help_text="False refuses its launches (default true).")


_MANAGERS = OpenApiResponse(ErrorEnvelope, description="Neither staff nor a school administrator.")
_NOT_VISIBLE = OpenApiResponse(ErrorEnvelope, description="No such platform, or not one of the requester's schools.")


class PlatformListCreateApi(APIView):
    pagination_class = Pagination

    class Input(PlatformInput):
        school = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="The school its launches reach.")

    @extend_schema(summary="List LMS platforms", responses={200: PlatformOutput(many=True), 403: _MANAGERS})
    def get(self, request: Request) -> Response:
        """The LMS platforms of the requester's schools (every one for staff), newest first."""
        qs = selectors.platform_list(user=request.user)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(PlatformOutput(page, many=True, context={"request": request}).data)

    @extend_schema(
        summary="Register an LMS platform",
        request=Input,
        responses={
            201: PlatformOutput,
            403: _MANAGERS,
            404: OpenApiResponse(ErrorEnvelope, description="The school is not one of the requester's."),
            409: OpenApiResponse(ErrorEnvelope, description="This issuer and client id are registered already."),
        },
    )
    def post(self, request: Request) -> Response:
        """Register an LMS for a school: its launches sign in that school's people (docs/lti.md).
        The answer's `tool` is what to type into the LMS."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        school_id = values.pop("school")
        platform = services.platform_create(user=request.user, school_id=school_id, fields=values)  # type: ignore[arg-type]
        return Response(PlatformOutput(platform, context={"request": request}).data, status=201)


class PlatformDetailApi(APIView):
    @extend_schema(summary="Get an LMS platform", responses={200: PlatformOutput, 404: _NOT_VISIBLE})
    def get(self, request: Request, platform_id: int) -> Response:
        platform = selectors.platform_get(user=request.user, platform_id=platform_id)
        return Response(PlatformOutput(platform, context={"request": request}).data)

    @extend_schema(
        summary="Change an LMS platform",
        request=PlatformInput(partial=True),
        responses={200: PlatformOutput, 404: _NOT_VISIBLE, 409: OpenApiResponse(ErrorEnvelope)},
    )
    def patch(self, request: Request, platform_id: int) -> Response:
        """Change what was registered; `deployment_ids` replaces the list (a deployment left out
        is refused from then on, its courses kept)."""
        data = PlatformInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        platform = services.platform_update(
            user=request.user,
            platform_id=platform_id,
            fields=dict(data.validated_data),  # type: ignore[arg-type]
        )
        return Response(PlatformOutput(platform, context={"request": request}).data)

    @extend_schema(summary="Remove an LMS platform", responses={204: None, 404: _NOT_VISIBLE})
    def delete(self, request: Request, platform_id: int) -> Response:
        """Remove the platform: its launches stop; the people, classes and conversations it
        made stay."""
        services.platform_delete(user=request.user, platform_id=platform_id)
        return Response(status=204)


class LaunchTokenApi(APIView):
    """The page a launch opened (in the LMS's frame) exchanges the one-time code of its URL's
    fragment (`#lti=...`) for the person's API token, the same token POST /auth/token/ gives,
    and where the launch leads. A code works once, for a minute."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    class Input(serializers.Serializer[None]):
        code = StrictCharField(max_length=64, help_text="The code of the launch's redirect (`#lti=...`).")

    class Output(serializers.Serializer[None]):
        token = serializers.CharField()
        user = UserOutput()
        classroom = serializers.IntegerField(allow_null=True, help_text="The course's class.")
        conversation = serializers.IntegerField(
            allow_null=True, help_text="The conversation a student's launch opened."
        )

    @extend_schema(
        summary="Get an API token with a launch's code",
        operation_id="lti_token_create",
        request=Input,
        responses={200: Output, 400: OpenApiResponse(ErrorEnvelope, description="Unknown, expired or used code.")},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        handoff = handoff_redeem(data.validated_data["code"])
        if handoff is None:
            raise serializers.ValidationError({"code": [_("This launch has expired: open it again from your course.")]})
        token, _created = Token.objects.get_or_create(user=handoff.user)
        return Response(
            {
                "token": token.key,
                "user": represent(UserOutput, handoff.user),
                "classroom": handoff.classroom_id,
                "conversation": handoff.conversation_id,
            }
        )
