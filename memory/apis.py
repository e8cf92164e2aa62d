from __future__ import annotations

from typing import Any

from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memory import selectors, services
from memory.serializers import MemoryOutput
from tutor.api import Pagination, StrictCharField


class MemoryListCreateApi(APIView):
    class Input(serializers.Serializer[None]):
        student = serializers.IntegerField()
        title = StrictCharField(max_length=200)
        content = StrictCharField()

    def get(self, request: Request) -> Response:
        """Memories newest first; with `?q=`, the student's memories most relevant to q, best first."""
        query = request.query_params.get("q", "").strip()
        qs: Any
        if query:
            qs = selectors.memory_search(
                user=request.user, student_id=request.query_params.get("student"), query=query[:1000]
            )
        else:
            qs = selectors.memory_list(user=request.user, student_id=request.query_params.get("student"))
        paginator = Pagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(MemoryOutput(page, many=True).data)

    def post(self, request: Request) -> Response:
        """A teacher adds a teacher note to a student of their class."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        memory = services.teacher_note_create(
            teacher=request.user,
            student_id=data.validated_data["student"],
            title=data.validated_data["title"],
            content=data.validated_data["content"],
        )
        return Response(MemoryOutput(memory).data, status=status.HTTP_201_CREATED)


class MemoryDetailApi(APIView):
    class Input(serializers.Serializer[None]):
        title = StrictCharField(max_length=200, required=False)
        content = StrictCharField(required=False)

    def get(self, request: Request, memory_id: int) -> Response:
        return Response(MemoryOutput(selectors.memory_get(user=request.user, memory_id=memory_id)).data)

    def patch(self, request: Request, memory_id: int) -> Response:
        """A teacher of the student corrects a memory's title and/or content (re-indexed and
        re-embedded; an archived memory is a 409)."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data:
            raise serializers.ValidationError({"title": ["Give a title, a content or both."]})
        memory = services.memory_update(user=request.user, memory_id=memory_id, **data.validated_data)
        return Response(MemoryOutput(memory).data)


class MemoryArchiveApi(APIView):
    class Input(serializers.Serializer[None]):
        reason = StrictCharField(max_length=300)

    def post(self, request: Request, memory_id: int) -> Response:
        """A teacher of the student archives a memory with a reason: it leaves recall and the
        prompt, and stays readable here with its reason. Never deleted; archiving twice is a no-op."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        memory = services.memory_archive(user=request.user, memory_id=memory_id, reason=data.validated_data["reason"])
        return Response(MemoryOutput(memory).data)
