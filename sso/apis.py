"""The single sign-on API (docs/api.md#single-sign-on):

- `/api/v1/identity-providers/`: staff and school administrators manage their schools'
  providers (anyone else: 403 on the list and a create, 404 on any provider; another school's
  is a 404). The client secret is written, never shown.
- `GET /api/v1/auth/providers/`: public, the providers a sign-in page offers.
- `POST /api/v1/auth/oidc/token/`: a native app exchanges the sign-in's one-time code and its
  PKCE verifier for the person's API token, as POST /auth/token/ answers for a password."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.apis import TokenObtainApi
from accounts.models import User
from core.api import MAX_ID, Pagination, StrictBooleanField, StrictCharField, query_params
from core.schema import ErrorEnvelope
from sso import selectors, services
from sso.models import IdentityProvider


class ProviderOutput(serializers.ModelSerializer[IdentityProvider]):
    school = serializers.IntegerField(source="school_id")

    class Meta:
        model = IdentityProvider
        fields = [
            "id",
            "school",
            "name",
            "issuer",
            "client_id",
            "external_id_claim",
            "email_claim",
            "active",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


def _claim(help_text: str) -> StrictCharField:
    return StrictCharField(max_length=100, required=False, help_text=help_text)


class ProviderInput(serializers.Serializer[None]):
    name = StrictCharField(max_length=100, help_text="Shown on the sign-in button.")
    issuer = serializers.URLField(
        max_length=500, help_text="https; discovery is at {issuer}/.well-known/openid-configuration."
    )
    client_id = StrictCharField(max_length=255)
    client_secret = StrictCharField(max_length=500, write_only=True, help_text="Written, never shown again.")
    external_id_claim = _claim("The claim matched to a person's external_id (default sub; Entra: oid).")
    email_claim = _claim("The claim matched to a person's email when email_verified (default email).")
    active = StrictBooleanField(required=False)


_MANAGERS = OpenApiResponse(ErrorEnvelope, description="Neither staff nor a school administrator.")
_NOT_VISIBLE = OpenApiResponse(ErrorEnvelope, description="No such provider, or not one of the requester's schools.")


class ProviderListCreateApi(APIView):
    pagination_class = Pagination

    class Input(ProviderInput):
        school = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="The school (or district).")

    @extend_schema(summary="List identity providers", responses={200: ProviderOutput(many=True), 403: _MANAGERS})
    def get(self, request: Request) -> Response:
        """The providers of the requester's schools (every one for staff)."""
        qs = selectors.provider_list(user=request.user)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(ProviderOutput(page, many=True).data)

    @extend_schema(
        summary="Add an identity provider",
        request=Input,
        responses={
            201: ProviderOutput,
            403: _MANAGERS,
            404: OpenApiResponse(ErrorEnvelope, description="The school is not one of the requester's."),
        },
    )
    def post(self, request: Request) -> Response:
        """Let the people of a school (a district's: of its schools too) sign in with an OpenID
        Connect provider. Its people must already be known (roster or provisioning API)."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        values = dict(data.validated_data)
        provider = services.provider_create(user=request.user, school_id=values.pop("school"), **values)
        return Response(ProviderOutput(provider).data, status=201)


class ProviderDetailApi(APIView):
    @extend_schema(summary="Get an identity provider", responses={200: ProviderOutput, 404: _NOT_VISIBLE})
    def get(self, request: Request, provider_id: int) -> Response:
        return Response(ProviderOutput(selectors.provider_get(user=request.user, provider_id=provider_id)).data)

    @extend_schema(
        summary="Change an identity provider", request=ProviderInput, responses={200: ProviderOutput, 404: _NOT_VISIBLE}
    )
    def patch(self, request: Request, provider_id: int) -> Response:
        """Change the fields given (a new client secret too)."""
        selectors.provider_get(user=request.user, provider_id=provider_id)  # 404 before a 400
        data = ProviderInput(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        provider = services.provider_update(user=request.user, provider_id=provider_id, **data.validated_data)
        return Response(ProviderOutput(provider).data)

    @extend_schema(summary="Remove an identity provider", responses={204: None, 404: _NOT_VISIBLE})
    def delete(self, request: Request, provider_id: int) -> Response:
        services.provider_delete(user=request.user, provider_id=provider_id)
        return Response(status=204)


class SignInProviderOutput(serializers.ModelSerializer[IdentityProvider]):
    school = serializers.IntegerField(source="school_id")
    school_name = serializers.CharField(source="school.name")
    login_url = serializers.SerializerMethodField(help_text="GET it in the browser (add ?next=/app/...).")

    class Meta:
        model = IdentityProvider
        fields = ["id", "name", "school", "school_name", "login_url"]
        read_only_fields = fields
        extra_kwargs = {"name": {"help_text": "The button's label."}}

    def get_login_url(self, provider: IdentityProvider) -> str:
        return reverse("sso:login", args=[provider.pk])


class SignInProviderListApi(APIView):
    """The providers a sign-in page offers a button for: every active one of an active school,
    or with `school` those of that school and of its district. Anyone may ask."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    class Filter(serializers.Serializer[None]):
        school = serializers.IntegerField(
            required=False, min_value=1, max_value=MAX_ID, help_text="A school's providers (and its district's)."
        )

    class Output(serializers.Serializer[None]):
        results = SignInProviderOutput(many=True)

    @extend_schema(
        summary="List the sign-in providers",
        operation_id="auth_providers_list",
        parameters=[Filter],
        responses={200: Output},
        auth=[],
    )
    def get(self, request: Request) -> Response:
        data = self.Filter(data=query_params(request))
        data.is_valid(raise_exception=True)
        providers = selectors.providers_for_sign_in(school_id=data.validated_data.get("school"))
        return Response({"results": SignInProviderOutput(providers, many=True).data})


class AppCodeCredentials(serializers.Serializer[None]):
    code = StrictCharField(max_length=100, help_text="The one-time code the sign-in sent the app's redirect URI.")
    code_verifier = serializers.RegexField(
        r"^[A-Za-z0-9._~-]{43,128}$", help_text="The PKCE verifier whose S256 was the login's code_challenge."
    )


def _redeem_app_code(request: Request) -> User:
    data = AppCodeCredentials(data=request.data)
    data.is_valid(raise_exception=True)
    return services.app_code_redeem(**data.validated_data)


@extend_schema_view(
    post=extend_schema(
        summary="Get an API token with a single sign-on code",
        operation_id="auth_oidc_token_create",
        request=AppCodeCredentials,
        responses={200: TokenObtainApi.Output, 400: ErrorEnvelope},
        auth=[],
    )
)
class AppCodeTokenApi(TokenObtainApi):
    """A native app's last step of single sign-on: the one-time code its redirect URI received,
    with its PKCE verifier, for the person's API token (the same token until it is revoked). A
    code works once, within OIDC_APP_CODE_SECONDS; a wrong verifier spends it."""

    sign_in = staticmethod(_redeem_app_code)
