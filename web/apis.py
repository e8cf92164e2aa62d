"""The API reads the teacher workspace needs that no one app can answer (web.roster)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from audit.services import Kind, Surface, access_record
from web.roster import classroom_roster


class RosterPersonOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField(source="pk")
    username = serializers.CharField()
    first_name = serializers.CharField()
    last_name = serializers.CharField()


class RosterSkillOutput(serializers.Serializer[Any]):
    skill = serializers.CharField(help_text="The skill's label, as last written.")
    estimate = serializers.FloatField(help_text="The mastery estimate now, 0 to 1.")


class RosterStudentOutput(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    username = serializers.CharField()
    first_name = serializers.CharField()
    last_name = serializers.CharField()
    last_activity_at = serializers.DateTimeField(
        allow_null=True, help_text="The latest activity in any of their conversations; null: none yet."
    )
    open_flags = serializers.IntegerField(help_text="Their safety flags still open (not yet acknowledged).")
    reviews_due = serializers.IntegerField(help_text="Their skills due for review now.")
    mastery_average = serializers.FloatField(
        allow_null=True, help_text="The mean of their skills' estimates now; null: no skill assessed yet."
    )
    skills = RosterSkillOutput(many=True, help_text="Their assessed skills, weakest first.")


class RosterOutput(serializers.Serializer[Any]):
    classroom = serializers.IntegerField(source="classroom.pk")
    name = serializers.CharField(source="classroom.name")
    as_of = serializers.DateTimeField(help_text="When the figures were read (reviews due, mastery decayed to it).")
    teachers = RosterPersonOutput(many=True, help_text="Its active teachers, primary first.")
    students = RosterStudentOutput(many=True, help_text="Its active students, by username.")


class RosterApi(APIView):
    @extend_schema(summary="A class's roster", responses=RosterOutput)
    def get(self, request: Request, classroom_id: int) -> Response:
        """Each active student of the class with their last activity, open safety flags, reviews
        due and mastery per skill (the class's teachers, its school's administrators; any other
        class, or any for a student: 404)."""
        roster = classroom_roster(user=request.user, classroom_id=classroom_id)
        reads = [(student.id, None) for student in roster.students]
        access_record(actor=request.user, kind=Kind.SKILLS, surface=Surface.API, reads=reads)
        return Response(RosterOutput(roster).data)
