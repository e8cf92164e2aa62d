"""Thin views over learning's services and selectors: quizzes, skills and homework tasks."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Kind, Surface, access_record, access_record_rows
from core.api import MAX_ID, Pagination, StrictCharField, query_params
from learning import selectors, services
from learning.models import MAX_QUESTIONS, Task, TaskStatus
from learning.serializers import (
    ClassroomSkillsOutput,
    QuizAnswersOutput,
    QuizOutput,
    QuizSummaryOutput,
    SkillOutput,
    TaskOutput,
    quiz_output,
)
from learning.validation import (
    ANSWER_MAX_CHARS,
    TASK_INSTRUCTIONS_MAX_CHARS,
    TASK_SUBJECT_MAX_CHARS,
    TASK_TITLE_MAX_CHARS,
)


def _task_context(request: Request, tasks: list[Task]) -> dict[str, Any]:
    """The serializer context of TaskOutput: the statuses of these tasks the requester may see."""
    rows = selectors.task_rows(user=request.user, tasks=tasks)
    return {"statuses": {row.task.pk: row.statuses for row in rows}}


# --- Quizzes ------------------------------------------------------------------------------------


class QuizFilters(serializers.Serializer[None]):
    student = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="A teacher's student; a student sees their own. A student the requester may not see: 404.",
    )
    conversation = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_ID, help_text="A conversation the requester may read; else 404."
    )


class QuizListApi(APIView):
    pagination_class = Pagination

    @extend_schema(summary="List quizzes", parameters=[QuizFilters], responses=QuizSummaryOutput(many=True))
    def get(self, request: Request) -> Response:
        """Quizzes newest first, without their questions: a student's own, a teacher's students'."""
        filters = QuizFilters(data=query_params(request))
        filters.is_valid(raise_exception=True)
        qs = selectors.quiz_list(
            user=request.user,
            student_id=filters.validated_data.get("student"),
            conversation_id=filters.validated_data.get("conversation"),
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self) or []
        access_record_rows(actor=request.user, kind=Kind.QUIZZES, surface=Surface.API, rows=page)
        return paginator.get_paginated_response(QuizSummaryOutput(page, many=True).data)


class QuizDetailApi(APIView):
    @extend_schema(summary="Get a quiz", responses=QuizOutput)
    def get(self, request: Request, quiz_id: int) -> Response:
        """A quiz with its questions. The student sees the expected answers and explanations once
        they have answered (null before); their teacher always does."""
        quiz = selectors.quiz_get(user=request.user, quiz_id=quiz_id)
        access_record_rows(actor=request.user, kind=Kind.QUIZZES, surface=Surface.API, rows=[quiz])
        return Response(quiz_output(quiz, viewer=request.user))


class QuizAnswer(serializers.Serializer[None]):
    question = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    answer = StrictCharField(
        max_length=ANSWER_MAX_CHARS * 5,
        allow_blank=True,
        help_text="Multiple choice: the text of a choice. Numeric: e.g. 0.75, 0,75 or 3/4. Empty: skipped.",
    )


class QuizAnswersApi(APIView):
    class Input(serializers.Serializer[None]):
        client_attempt_id = StrictCharField(
            max_length=64, help_text="Chosen by the client: sending the same one again returns the stored result."
        )
        answers = serializers.ListField(
            child=QuizAnswer(), min_length=1, max_length=MAX_QUESTIONS, help_text="One per question."
        )

    @extend_schema(summary="Answer a quiz", request=Input, responses={201: QuizAnswersOutput})
    def post(self, request: Request, quiz_id: int) -> Response:
        """The student answers every question of their quiz, once: 201 with the results (short
        texts the model grades stay `pending` until it has). The same client_attempt_id again
        returns the stored result (`replayed`); another one is a 409."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        quiz, replayed = services.quiz_answers_submit(
            user=request.user,
            quiz_id=quiz_id,
            client_attempt_id=data.validated_data["client_attempt_id"],
            answers=data.validated_data["answers"],
        )
        body = {"quiz": quiz_output(quiz, viewer=request.user), "replayed": replayed}
        return Response(body, status=status.HTTP_201_CREATED)


# --- Mastery ------------------------------------------------------------------------------------


class StudentSkillsApi(APIView):
    pagination_class = None

    @extend_schema(summary="A student's skills", responses=SkillOutput(many=True))
    def get(self, request: Request, student_id: int) -> Response:
        """A student's mastery per skill, by label (their teacher, or the student themself)."""
        rows = selectors.student_skills(user=request.user, student_id=student_id)
        access_record(actor=request.user, kind=Kind.SKILLS, surface=Surface.API, reads=[(student_id, None)])
        return Response(SkillOutput(rows, many=True).data)


class ClassroomSkillsApi(APIView):
    @extend_schema(summary="A class's skills", responses=ClassroomSkillsOutput)
    def get(self, request: Request, classroom_id: int) -> Response:
        """Per skill, the class average and each assessed student's estimate (the class's teacher)."""
        classroom, skills = selectors.classroom_skills(user=request.user, classroom_id=classroom_id)
        reads = [(row.student_id, None) for skill in skills for row in skill.students]
        access_record(actor=request.user, kind=Kind.SKILLS, surface=Surface.API, reads=reads)
        body = {"classroom": classroom.pk, "name": classroom.name, "skills": skills}
        return Response(ClassroomSkillsOutput(body).data)


# --- Tasks --------------------------------------------------------------------------------------


class TaskFilters(serializers.Serializer[None]):
    student = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="The tasks set to this student or to a class of theirs. A student the requester may not see: 404.",
    )


class TaskListCreateApi(APIView):
    pagination_class = Pagination

    class Input(serializers.Serializer[None]):
        classroom = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
        student = serializers.IntegerField(required=False, min_value=1, max_value=MAX_ID)
        title = StrictCharField(max_length=TASK_TITLE_MAX_CHARS)
        instructions = StrictCharField(
            max_length=TASK_INSTRUCTIONS_MAX_CHARS, required=False, allow_blank=True, default=""
        )
        subject = StrictCharField(max_length=TASK_SUBJECT_MAX_CHARS, required=False, allow_blank=True, default="")
        due_at = serializers.DateTimeField(required=False, allow_null=True, default=None)

    @extend_schema(summary="List tasks", parameters=[TaskFilters], responses=TaskOutput(many=True))
    def get(self, request: Request) -> Response:
        """Tasks due first: a student's own with their status, a teacher's with each student's
        (narrowed to one student by `?student=`)."""
        filters = TaskFilters(data=query_params(request))
        filters.is_valid(raise_exception=True)
        qs = selectors.task_list(user=request.user, student_id=filters.validated_data.get("student"))
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        tasks = list(page or [])
        context = _task_context(request, tasks)
        reads = [(status.student_id, pk) for pk, statuses in context["statuses"].items() for status in statuses]
        access_record(actor=request.user, kind=Kind.TASKS, surface=Surface.API, reads=reads)
        return paginator.get_paginated_response(TaskOutput(tasks, many=True, context=context).data)

    @extend_schema(summary="Set a task", request=Input, responses={201: TaskOutput})
    def post(self, request: Request) -> Response:
        """A teacher assigns a task to a class they teach (`classroom`) or to one of their
        students (`student`): exactly one of the two."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        task = services.task_create(
            teacher=request.user,
            classroom_id=values.get("classroom"),
            student_id=values.get("student"),
            title=values["title"],
            instructions=values["instructions"],
            subject=values["subject"],
            due_at=values["due_at"],
        )
        context = _task_context(request, [task])
        return Response(TaskOutput(task, context=context).data, status=status.HTTP_201_CREATED)


class TaskStatusApi(APIView):
    class Input(serializers.Serializer[None]):
        status = serializers.ChoiceField(choices=TaskStatus.Status.choices)

    @extend_schema(summary="Set a task's status", request=Input, responses=TaskOutput)
    def post(self, request: Request, task_id: int) -> Response:
        """The student sets their status on one of their tasks."""
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        task = services.task_status_set(user=request.user, task_id=task_id, status=data.validated_data["status"])
        return Response(TaskOutput(task, context=_task_context(request, [task])).data)
