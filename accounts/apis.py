from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import User
from accounts.selectors import student_get_visible, students_visible_to
from accounts.services import user_language_set
from tutor import throttles
from tutor.api import Pagination


class UserOutput(serializers.ModelSerializer[User]):
    class Meta:
        model = User
        fields = ["id", "username", "first_name", "last_name", "role", "language"]


class TokenObtainApi(ObtainAuthToken):
    """POST username and password, get a token for the `Authorization: Token ...` header.

    After LOGIN_FAILURE_LIMIT failures for a username or from an address, every attempt gets 429
    with Retry-After until the window has passed (tutor.throttles)."""

    permission_classes = [AllowAny]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raw = request.data.get("username") if isinstance(request.data, dict) else None
        username = raw if isinstance(raw, str) else ""
        address = str(request.META.get("REMOTE_ADDR", ""))
        throttles.login_check(username=username, address=address)
        try:
            response = super().post(request, *args, **kwargs)
        except ValidationError:
            throttles.login_failed(username=username, address=address)
            raise
        throttles.login_succeeded(username=username)
        return response


class MeApi(APIView):
    class Input(serializers.Serializer[None]):
        language = serializers.ChoiceField(choices=User.Language.choices)

    def get(self, request: Request) -> Response:
        user = request.user
        assert isinstance(user, User)  # IsAuthenticated ran first
        return Response(UserOutput(user).data)

    def patch(self, request: Request) -> Response:
        """Change one's own language (the only field a user edits here)."""
        user = request.user
        assert isinstance(user, User)
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(UserOutput(user_language_set(user=user, language=data.validated_data["language"])).data)


class StudentListApi(APIView):
    """The students the requester may see: a teacher's class lists, or a student themself."""

    def get(self, request: Request) -> Response:
        paginator = Pagination()
        page = paginator.paginate_queryset(students_visible_to(request.user).order_by("username"), request, view=self)
        return paginator.get_paginated_response(UserOutput(page, many=True).data)


class StudentDetailApi(APIView):
    def get(self, request: Request, student_id: int) -> Response:
        return Response(UserOutput(student_get_visible(user=request.user, student_id=student_id)).data)
