"""Accounts: sign-in for every client (a token for mobile and scripts, a session for the web),
one's own profile, and the students a user may see."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth import authenticate, login, logout
from django.core.exceptions import ImproperlyConfigured
from django.middleware.csrf import get_token
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.authtoken.models import Token
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import Classroom, User
from accounts.selectors import classrooms_listed_for, student_get_visible, students_listed_for
from accounts.services import user_sign_out_everywhere
from core.api import MAX_ID, Pagination, StrictBooleanField, StrictCharField, query_params, represent
from core.auth import SessionAuthentication


class UserOutput(serializers.ModelSerializer[User]):
    memory_consent = serializers.BooleanField(
        read_only=True,
        help_text="A student's family consents to the tutor remembering them (docs/privacy.md#consent-to-memory): "
        "false, the tutor keeps no memory of them. Set by their school's administrator "
        "(PUT /students/{id}/consent/); true for anyone who is not a student.",
    )

    class Meta:
        model = User
        fields = ["id", "username", "first_name", "last_name", "role", "language", "memory_consent"]
        read_only_fields = fields


class Credentials(serializers.Serializer[None]):
    username = StrictCharField(max_length=150)
    password = StrictCharField(max_length=4096, trim_whitespace=False)


def _authenticate(request: Request) -> User:
    """The user for the posted credentials, checked by accounts.backends: the address's rate and
    the lockout first (429 with Retry-After, the right password included), a 503 that is safe to
    retry when the server cannot count or check the attempt now, else a 400 for wrong ones."""
    data = Credentials(data=request.data)
    data.is_valid(raise_exception=True)
    user = authenticate(request._request, **data.validated_data)
    if not isinstance(user, User) or not user.is_active:
        raise serializers.ValidationError({"non_field_errors": [_("Unable to log in with the given credentials.")]})
    return user


class TokenObtainApi(APIView):
    """Sign in with a token, for mobile apps and scripts: `Authorization: Token <token>`.

    The same token is returned until it is revoked (POST /auth/logout/ with it)."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []
    # The posted credentials' user, or the error to answer (a subclass signs in another way).
    sign_in = staticmethod(_authenticate)

    class Output(serializers.Serializer[None]):
        token = serializers.CharField()

    @extend_schema(
        summary="Get an API token",
        operation_id="auth_token_create",
        request=Credentials,
        responses={200: Output},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        user = self.sign_in(request)
        token, _created = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})


class CsrfApi(APIView):
    """The CSRF token for session-authenticated writes, as a cookie (`csrftoken`) and in the body.
    A web app sends it back in the `X-CSRFToken` header of every POST, PATCH and DELETE."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []

    class Output(serializers.Serializer[None]):
        csrf_token = serializers.CharField()

    @extend_schema(summary="Get a CSRF cookie", operation_id="auth_csrf_retrieve", responses={200: Output}, auth=[])
    @method_decorator(ensure_csrf_cookie)
    def get(self, request: Request) -> Response:
        return Response({"csrf_token": get_token(request._request)})


class SessionLoginApi(APIView):
    """Sign in with a session, for the web: a `sessionid` cookie, and a new CSRF token (the old
    one stops working). Needs the CSRF token of GET /auth/csrf/ in `X-CSRFToken`, like any
    session write."""

    permission_classes = [AllowAny]
    authentication_classes: list[Any] = []
    sign_in = staticmethod(_authenticate)

    class Output(serializers.Serializer[None]):
        user = UserOutput()
        csrf_token = serializers.CharField()

    @extend_schema(
        summary="Sign in with a session",
        operation_id="auth_login_create",
        request=Credentials,
        responses={200: Output},
        auth=[],
    )
    def post(self, request: Request) -> Response:
        SessionAuthentication().enforce_csrf(request)
        user = self.sign_in(request)
        login(request._request, user)
        return Response({"user": represent(UserOutput, user), "csrf_token": get_token(request._request)})


class LogoutApi(APIView):
    """Sign out. Without a body: ends this session, or revokes the token when signed in with one
    (every device using that token must sign in again); signing out a session leaves the token
    and the user's other sessions alone. With `{"everywhere": true}`: revokes the user's token
    and ends every session of theirs, on every device (a lost phone, a shared computer)."""

    class Input(serializers.Serializer[None]):
        everywhere = StrictBooleanField(
            required=False,
            default=False,
            help_text="true: also revoke the user's API token and end all their sessions, on every device.",
        )

    @extend_schema(summary="Sign out", operation_id="auth_logout_create", request=Input, responses={204: None})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        if data.validated_data["everywhere"]:
            assert isinstance(request.user, User)  # IsAuthenticated ran first
            user_sign_out_everywhere(user=request.user)
        elif isinstance(request.auth, Token):
            request.auth.delete()
        logout(request._request)
        return Response(status=204)


class MeApi(APIView):
    # The service that changes the language and what depends on it (a student's memories are
    # re-indexed in it): tutor/urls.py passes `user_language_change` from the app that owns the
    # memories, which calls accounts.services.user_language_set; accounts does not import it.
    language_change: Callable[..., User] | None = None

    class Input(serializers.Serializer[None]):
        language = serializers.ChoiceField(choices=User.Language.choices)

    @extend_schema(summary="Get my account", responses=UserOutput)
    def get(self, request: Request) -> Response:
        user = request.user
        assert isinstance(user, User)  # IsAuthenticated ran first
        return Response(represent(UserOutput, user))

    @extend_schema(summary="Change my settings", request=Input, responses=UserOutput)
    def patch(self, request: Request) -> Response:
        """Change one's own language (the only field a user edits here)."""
        user = request.user
        assert isinstance(user, User)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        if self.language_change is None:
            raise ImproperlyConfigured("MeApi.as_view() needs language_change (tutor/urls.py)")
        changed = self.language_change(user=user, language=data.validated_data["language"])
        return Response(represent(UserOutput, changed))


def active_filter(help_text: str) -> serializers.ChoiceField:
    """`?active=`: true (the default) for active rows only, all for the others too."""
    return serializers.ChoiceField(choices=["true", "all"], required=False, default="true", help_text=help_text)


class StudentListApi(APIView):
    """The students the requester may see: a teacher's class lists, or a student themself;
    `classroom` narrows it to one class's active students. `active=all` (staff and school
    administrators) lists the students they manage, deactivated ones and ended enrolments too."""

    pagination_class = Pagination

    class Filter(serializers.Serializer[None]):
        classroom = serializers.IntegerField(
            required=False, min_value=1, max_value=MAX_ID, help_text="A class's students (404: not a class of mine)."
        )
        active = active_filter("all: deactivated students too (staff and school administrators).")

    @extend_schema(summary="List my students", parameters=[Filter], responses=UserOutput(many=True))
    def get(self, request: Request) -> Response:
        data = self.Filter(data=query_params(request))
        data.is_valid(raise_exception=True)
        filters = data.validated_data
        students = students_listed_for(
            request.user, classroom_id=filters.get("classroom"), inactive=filters["active"] == "all"
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(students.order_by("username"), request, view=self)
        return paginator.get_paginated_response(UserOutput(page, many=True).data)


class StudentDetailApi(APIView):
    @extend_schema(summary="Get a student", responses=UserOutput)
    def get(self, request: Request, student_id: int) -> Response:
        return Response(represent(UserOutput, student_get_visible(user=request.user, student_id=student_id)))


class ClassroomTeacher(serializers.Serializer[None]):
    id = serializers.IntegerField()
    primary = serializers.BooleanField()


class ClassroomOutput(serializers.ModelSerializer[Classroom]):
    teachers = serializers.SerializerMethodField(help_text="Its active teachers, primary first.")

    class Meta:
        model = Classroom
        fields = ["id", "name", "school", "external_id", "active", "teachers"]
        read_only_fields = fields

    @extend_schema_field(ClassroomTeacher(many=True))
    def get_teachers(self, classroom: Classroom) -> list[dict[str, Any]]:
        # From the prefetched rows when the list prefetched them.
        rows = [row for row in classroom.teacher_enrollments.all() if row.active]
        rows.sort(key=lambda row: (not row.primary, row.pk))
        return [{"id": row.teacher_id, "primary": row.primary} for row in rows]


class ClassroomListApi(APIView):
    """The classes the requester sees, by name: a teacher's own, a school administrator's
    school's, every active class for staff (a student, or anyone else: none). `active=all`
    (staff, school administrators): the inactive ones too."""

    pagination_class = Pagination

    class Filter(serializers.Serializer[None]):
        active = active_filter("all: inactive classes too (staff and school administrators).")

    @extend_schema(summary="List my classes", parameters=[Filter], responses=ClassroomOutput(many=True))
    def get(self, request: Request) -> Response:
        data = self.Filter(data=query_params(request))
        data.is_valid(raise_exception=True)
        classrooms = classrooms_listed_for(request.user, inactive=data.validated_data["active"] == "all")
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(classrooms.prefetch_related("teacher_enrollments"), request, view=self)
        return paginator.get_paginated_response(ClassroomOutput(page, many=True).data)
