from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Kind, Surface, access_record, access_record_rows
from core.api import MAX_ID, Pagination, StrictCharField, WordCount, query_params
from memory import selectors, supersession
from memory.models import AIMemory, SupersessionReview
from memory.serializers import MemoryOutput, SupersessionReviewOutput
from memory.services import edits, lifecycle, notes
from memory.throttles import MemoryWriteRateThrottle
from memory.validation import (
    CONTENT_MAX_CHARS,
    CONTENT_MAX_WORDS,
    REASON_MAX_CHARS,
    SUMMARY_MAX_SENTENCES,
    SUMMARY_MIN_SENTENCES,
    TITLE_MAX_CHARS,
    TITLE_MAX_WORDS,
    TITLE_MIN_WORDS,
)

# A memory's title has 4 to 10 words: the services check it (memory.validation); the schema says it.
TITLE_WORDS = WordCount(TITLE_MIN_WORDS, TITLE_MAX_WORDS)


class MemoryWriteThrottled(APIView):
    """A view whose writes count against THROTTLE_MEMORY_WRITE_RATE (memory.throttles), with the
    MCP tools' writes; its reads are not throttled."""

    throttle_classes = [MemoryWriteRateThrottle]

    def get_throttles(self) -> list[Any]:
        return [] if self.request.method in SAFE_METHODS else super().get_throttles()


class MemoryFilters(serializers.Serializer[None]):
    student = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, help_text="A teacher's student; a student sees their own."
    )
    q = serializers.CharField(
        required=False, allow_blank=True, help_text="Search: the memories most relevant to q, best first (active only)."
    )
    kind = serializers.ChoiceField(choices=AIMemory.Kind.choices, required=False)
    status = serializers.ChoiceField(
        choices=[*AIMemory.Status.choices, ("all", "All")], required=False, default=AIMemory.Status.ACTIVE
    )


class MemoryListCreateApi(MemoryWriteThrottled):
    pagination_class = Pagination

    class Input(serializers.Serializer[None]):
        student = serializers.IntegerField(min_value=1, max_value=MAX_ID)
        title = StrictCharField(max_length=TITLE_MAX_CHARS, validators=[TITLE_WORDS])
        content = StrictCharField(max_length=CONTENT_MAX_CHARS)
        visibility = serializers.ChoiceField(
            choices=AIMemory.Visibility.choices,
            default=AIMemory.Visibility.STUDENT,
            help_text="teacher_only: never shown to the student, nor to the tutor.",
        )

    @extend_schema(summary="List or search memories", parameters=[MemoryFilters], responses=MemoryOutput(many=True))
    def get(self, request: Request) -> Response:
        """Memories newest first (`?status=` active by default, archived or all; `?kind=`); with
        `?q=`, the student's active memories most relevant to q, best first."""
        filters = MemoryFilters(data=query_params(request))
        filters.is_valid(raise_exception=True)
        params = filters.validated_data
        query = params.get("q", "").strip()
        qs: Any
        if query:
            qs = selectors.memory_search(
                user=request.user, student_id=params.get("student"), query=query[:1000], kind=params.get("kind")
            )
        else:
            qs = selectors.memory_list(
                user=request.user, student_id=params.get("student"), kind=params.get("kind"), status=params["status"]
            )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self) or []
        access_record_rows(actor=request.user, kind=Kind.MEMORIES, surface=Surface.API, rows=page)
        return paginator.get_paginated_response(MemoryOutput(page, many=True, context={"request": request}).data)

    @extend_schema(summary="Add a teacher's note", request=Input, responses={201: MemoryOutput})
    def post(self, request: Request) -> Response:
        """A teacher adds a teacher note to a student of their class."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        memory = notes.teacher_note_create(
            teacher=request.user,
            student_id=data.validated_data["student"],
            title=data.validated_data["title"],
            content=data.validated_data["content"],
            visibility=data.validated_data["visibility"],
        )
        return Response(MemoryOutput(memory, context={"request": request}).data, status=status.HTTP_201_CREATED)


class MemoryDetailApi(MemoryWriteThrottled):
    class Input(serializers.Serializer[None]):
        title = StrictCharField(max_length=TITLE_MAX_CHARS, required=False, validators=[TITLE_WORDS])
        content = StrictCharField(
            max_length=CONTENT_MAX_CHARS,
            required=False,
            help_text=f"At most {CONTENT_MAX_WORDS} words. A summary's (kind `summary`) has "
            f"{SUMMARY_MIN_SENTENCES} to {SUMMARY_MAX_SENTENCES} sentences: 400 otherwise.",
        )
        visibility = serializers.ChoiceField(choices=AIMemory.Visibility.choices, required=False)

    @extend_schema(summary="Get a memory", responses=MemoryOutput)
    def get(self, request: Request, memory_id: int) -> Response:
        memory = selectors.memory_get(user=request.user, memory_id=memory_id, read_only=True)
        access_record_rows(actor=request.user, kind=Kind.MEMORIES, surface=Surface.API, rows=[memory])
        return Response(MemoryOutput(memory, context={"request": request}).data)

    @extend_schema(summary="Correct a memory", request=Input, responses=MemoryOutput)
    def patch(self, request: Request, memory_id: int) -> Response:
        """A teacher of the student corrects a memory's title and/or content (re-indexed and
        re-embedded), or a teacher note's visibility; an archived memory is a 409. At least one
        field must be given: an empty body (`{}`) is a 400. A rule no schema states, as it depends
        on the memory's kind: a summary's content keeps 2 to 4 sentences (400 otherwise)."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        if not data.validated_data:
            raise serializers.ValidationError({"title": [_("Give a title, a content or a visibility.")]})
        memory = edits.memory_update(user=request.user, memory_id=memory_id, **data.validated_data)
        return Response(MemoryOutput(memory, context={"request": request}).data)


class MemoryArchiveApi(MemoryWriteThrottled):
    class Input(serializers.Serializer[None]):
        reason = StrictCharField(max_length=REASON_MAX_CHARS)

    @extend_schema(summary="Archive a memory", request=Input, responses=MemoryOutput)
    def post(self, request: Request, memory_id: int) -> Response:
        """A teacher of the student archives a memory with a reason: it leaves recall and the
        prompt, and stays readable here with its reason. Never deleted; archiving twice is a no-op."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        memory = lifecycle.memory_archive(user=request.user, memory_id=memory_id, reason=data.validated_data["reason"])
        return Response(MemoryOutput(memory, context={"request": request}).data)


class MemorySupersedeApi(MemoryWriteThrottled):
    class Input(serializers.Serializer[None]):
        by = serializers.IntegerField(min_value=1, max_value=MAX_ID, help_text="The newer memory that replaces it.")
        reason = StrictCharField(max_length=REASON_MAX_CHARS)

    @extend_schema(summary="Replace a memory with a new version", request=Input, responses=MemoryOutput)
    def post(self, request: Request, memory_id: int) -> Response:
        """A teacher of the student marks this memory superseded by a newer one of the same
        student, with a reason: it leaves recall and the prompt, and stays readable with its chain.
        A memory that is not active, or of another student, is a 409."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        memory = supersession.memory_supersede_by_teacher(
            user=request.user,
            memory_id=memory_id,
            by_id=data.validated_data["by"],
            reason=data.validated_data["reason"],
        )
        return Response(MemoryOutput(memory, context={"request": request}).data)


class MemoryChainOutput(serializers.Serializer[None]):
    memory = MemoryOutput()
    older = MemoryOutput(many=True, help_text="What it replaced, oldest first (every generation).")
    newer = MemoryOutput(many=True, help_text="What replaced it, next first.")


class MemoryChainApi(APIView):
    @extend_schema(summary="A memory's versions", responses=MemoryChainOutput)
    def get(self, request: Request, memory_id: int) -> Response:
        """The supersession chain around a memory: what it replaced and what replaced it, as
        far as the requester may see."""
        memory = selectors.memory_get(user=request.user, memory_id=memory_id)
        older_ids, newer_ids = supersession.memory_chain(memory)
        found = {
            m.pk: m
            for m in selectors.with_relations(selectors.memories_visible_to(request.user)).filter(
                pk__in=[*older_ids, *newer_ids]
            )
        }
        access_record_rows(actor=request.user, kind=Kind.MEMORIES, surface=Surface.API, rows=[memory, *found.values()])
        return Response(
            MemoryChainOutput(
                {  # type: ignore[arg-type]
                    "memory": memory,
                    "older": [found[pk] for pk in older_ids if pk in found],
                    "newer": [found[pk] for pk in newer_ids if pk in found],
                },
                context={"request": request},
            ).data
        )


class ReviewFilters(serializers.Serializer[None]):
    student = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    status = serializers.ChoiceField(
        choices=[*SupersessionReview.Status.choices, ("all", "All")], required=False, default="open"
    )


class SupersessionReviewListApi(APIView):
    pagination_class = Pagination

    @extend_schema(
        summary="List memory updates to review",
        parameters=[ReviewFilters],
        responses=SupersessionReviewOutput(many=True),
    )
    def get(self, request: Request) -> Response:
        """Pairs the summary model thought might be updates, with too little confidence to act:
        nothing changed; a teacher of the student applies or dismisses each (open by default)."""
        filters = ReviewFilters(data=query_params(request))
        filters.is_valid(raise_exception=True)
        qs = supersession.supersession_reviews(
            user=request.user, student_id=filters.validated_data.get("student"), status=filters.validated_data["status"]
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self) or []
        reads = [(review.student_id, pk) for review in page for pk in (review.older_id, review.newer_id)]
        access_record(actor=request.user, kind=Kind.MEMORIES, surface=Surface.API, reads=reads)
        return paginator.get_paginated_response(
            SupersessionReviewOutput(page, many=True, context={"request": request}).data
        )


class SupersessionReviewDecideApi(APIView):
    apply = True

    @extend_schema(request=None, responses=SupersessionReviewOutput)
    def post(self, request: Request, review_id: int) -> Response:
        """Apply the review (the older memory is superseded by the newer) or dismiss it. A
        decided review is a 409; another class's is a 404."""
        review = supersession.supersession_review_decide(user=request.user, review_id=review_id, apply=self.apply)
        return Response(SupersessionReviewOutput(review, context={"request": request}).data)


@extend_schema_view(post=extend_schema(summary="Apply a memory update"))
class SupersessionReviewApplyApi(SupersessionReviewDecideApi):
    apply = True


@extend_schema_view(post=extend_schema(summary="Dismiss a memory update"))
class SupersessionReviewDismissApi(SupersessionReviewDecideApi):
    apply = False
