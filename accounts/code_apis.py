"""Sign-in cards (accounts.codes): a class's teachers make a code per student, and a student
signs in with theirs, with a token (mobile, scripts) or a session (the web app)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate
from django.http import HttpRequest
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.apis import SessionLoginApi, TokenObtainApi
from accounts.codes import DAYS_DEFAULT, DAYS_MAX, IssuedCode, sign_in_codes_create
from accounts.models import User
from accounts.selectors import classroom_get_overseen
from core.api import StrictCharField


def sign_in_url(request: HttpRequest | Request, code: str) -> str:
    """The student page's address with the code in its fragment, which browsers never send to a
    server: the page signs in with it and clears it (web/src/common.ts)."""
    return request.build_absolute_uri(reverse("web:student")) + "#code=" + code


def issued_cards(request: HttpRequest | Request, issued: list[IssuedCode]) -> list[dict[str, Any]]:
    return [
        {
            "student": card.student,
            "code": card.code,
            "expires_at": card.expires_at,
            "sign_in_url": sign_in_url(request, card.code),
        }
        for card in issued
    ]


class CardStudent(serializers.ModelSerializer[User]):
    class Meta:
        model = User
        fields = ["id", "first_name", "last_name", "username"]
        read_only_fields = fields


class CardOutput(serializers.Serializer[None]):
    student = CardStudent()
    code = serializers.CharField(help_text="4 groups of 4 characters; case, spaces and dashes are ignored.")
    expires_at = serializers.DateTimeField()
    sign_in_url = serializers.CharField(help_text="The student page, signing in with the code (in its fragment).")


class SignInCodesApi(APIView):
    """New sign-in cards for a class (its teachers, its school's administrators, staff): one
    code per active student, which revokes the student's earlier codes of this class. Another
    class, and any class for a student, is a 404. The codes are in this answer only: the server
    keeps their hashes."""

    class Input(serializers.Serializer[None]):
        days = serializers.IntegerField(
            min_value=1, max_value=DAYS_MAX, required=False, default=DAYS_DEFAULT, help_text="How long the codes work."
        )

    class Output(serializers.Serializer[dict[str, Any]]):
        results = CardOutput(many=True)

    @extend_schema(
        summary="Make sign-in cards for a class",
        operation_id="classroom_sign_in_codes_create",
        request=Input,
        responses={201: Output},
    )
    def post(self, request: Request, classroom_id: int) -> Response:
        classroom = classroom_get_overseen(user=request.user, classroom_id=classroom_id)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        assert isinstance(request.user, User)  # IsAuthenticated ran first
        issued = sign_in_codes_create(classroom=classroom, created_by=request.user, days=data.validated_data["days"])
        return Response(self.Output({"results": issued_cards(request, issued)}).data, status=201)


class CodeCredentials(serializers.Serializer[None]):
    code = StrictCharField(max_length=64, help_text="The card's code, as typed: case, spaces and dashes are ignored.")


def _authenticate_code(request: Request) -> User:
    """The student the posted code signs in, checked by accounts.backends.SignInCodeBackend: the
    address's rate and the code's lockout first (429 with Retry-After), a 503 safe to retry when
    attempts cannot be counted, else one 400 for a wrong, expired or revoked code and for a
    deactivated student alike."""
    data = CodeCredentials(data=request.data)
    data.is_valid(raise_exception=True)
    user = authenticate(request._request, sign_in_secret=data.validated_data["code"])
    if not isinstance(user, User):
        raise serializers.ValidationError({"non_field_errors": [_("Unable to sign in with this code.")]})
    return user


@extend_schema_view(
    post=extend_schema(
        summary="Get an API token with a sign-in code",
        operation_id="auth_code_create",
        request=CodeCredentials,
        responses={200: TokenObtainApi.Output},
        auth=[],
    )
)
class CodeTokenApi(TokenObtainApi):
    """Sign in with a card's code and get the student's API token, as POST /auth/token/ answers
    for a password (the same token until it is revoked)."""

    sign_in = staticmethod(_authenticate_code)


@extend_schema_view(
    post=extend_schema(
        summary="Sign in with a sign-in code and a session",
        operation_id="auth_code_login_create",
        request=CodeCredentials,
        responses={200: SessionLoginApi.Output},
        auth=[],
    )
)
class CodeSessionLoginApi(SessionLoginApi):
    """Sign in with a card's code and a session, for the web, as POST /auth/login/ does for a
    password: needs the CSRF token of GET /auth/csrf/ in `X-CSRFToken`; answers the user and a
    new CSRF token."""

    sign_in = staticmethod(_authenticate_code)
