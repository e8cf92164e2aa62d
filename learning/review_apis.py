"""Thin views over learning.review_cards: the reviews due for a student and for a class."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Kind, Surface, access_record
from learning import review_cards


class ReviewOutput(serializers.Serializer[Any]):
    skill = serializers.CharField(help_text="The skill's label, as last written.")
    skill_key = serializers.CharField(help_text="The label folded (case, accents, spacing): one skill.")
    due_at = serializers.DateTimeField(help_text="When its probability of recall falls to the target (90 %).")
    overdue_days = serializers.FloatField(help_text="Days since due_at; 0 when not yet due.")
    retrievability = serializers.FloatField(help_text="FSRS's probability that the student recalls it now (0 to 1).")
    stability = serializers.FloatField(help_text="Days for the probability of recall to fall from 100 % to 90 %.")
    difficulty = serializers.FloatField(help_text="FSRS's difficulty, 1 (easiest) to 10.")
    reviews = serializers.IntegerField(help_text="Graded quizzes counted.")
    last_review_at = serializers.DateTimeField(allow_null=True, help_text="The latest counted quiz's submission.")
    estimate = serializers.FloatField(help_text="The mastery estimate now (0 to 1), as GET /students/{id}/skills/.")


class StudentReviewsOutput(serializers.Serializer[Any]):
    student = serializers.IntegerField()
    as_of = serializers.DateTimeField(help_text="The time the figures are for.")
    due = ReviewOutput(many=True, help_text="Due now, the lowest probability of recall first.")
    upcoming = ReviewOutput(many=True, help_text="The next ones due, soonest first.")


class ClassStudentReviewsOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    username = serializers.CharField()
    due = ReviewOutput(many=True, help_text="Due now, the lowest probability of recall first.")


class ClassroomReviewsOutput(serializers.Serializer[Any]):
    classroom = serializers.IntegerField()
    as_of = serializers.DateTimeField()
    students = ClassStudentReviewsOutput(many=True, help_text="Every student of the class, by username.")


class StudentReviewsApi(APIView):
    @extend_schema(summary="Reviews due for a student", responses=StudentReviewsOutput)
    def get(self, request: Request, student_id: int) -> Response:
        """The skills due for review, scheduled by FSRS from the quiz results, and the next ones
        (the student themself, their teachers, staff)."""
        student, now, due, upcoming = review_cards.student_reviews(user=request.user, student_id=student_id)
        body = {"student": student.pk, "as_of": now, "due": due, "upcoming": upcoming}
        access_record(actor=request.user, kind=Kind.REVIEWS, surface=Surface.API, reads=[(student.pk, None)])
        return Response(StudentReviewsOutput(body).data)


class ClassroomReviewsApi(APIView):
    @extend_schema(summary="Reviews due in a class", responses=ClassroomReviewsOutput)
    def get(self, request: Request, classroom_id: int) -> Response:
        """Each student of the class with the skills due for review (the class's teachers, staff;
        a student: 403)."""
        classroom, now, students = review_cards.classroom_reviews(user=request.user, classroom_id=classroom_id)
        body = {"classroom": classroom.pk, "as_of": now, "students": students}
        reads = [(row.id, None) for row in students]
        access_record(actor=request.user, kind=Kind.REVIEWS, surface=Surface.API, reads=reads)
        return Response(ClassroomReviewsOutput(body).data)
