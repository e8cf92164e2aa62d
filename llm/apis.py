"""What the tutor costs: the model spend of a teacher's students, or a student's own."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import MAX_ID, query_params
from llm.selectors import usage_report

# The default report: the last 30 UTC days, today included; the longest a report may span.
DEFAULT_DAYS = 30
MAX_DAYS = 366
# The days a report may name: real dates of the product's life, far from the calendar's ends
# (date.min, date.max), where the day after `until` or 29 days before it does not exist.
USAGE_FIRST_DAY = date(2000, 1, 1)
USAGE_LAST_DAY = date(2999, 12, 31)
_DAY_RANGE = [MinValueValidator(USAGE_FIRST_DAY), MaxValueValidator(USAGE_LAST_DAY)]


class UsageAmounts(serializers.Serializer[None]):
    cost = serializers.DecimalField(
        max_digits=20, decimal_places=8, help_text="USD, as priced when each call was made."
    )
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    calls = serializers.IntegerField(help_text="Model calls, failed ones included.")


class UsageDay(UsageAmounts):
    date = serializers.DateField(help_text="A UTC day.")


class UsageStudent(UsageAmounts):
    id = serializers.IntegerField()
    username = serializers.CharField()
    days = UsageDay(many=True, help_text="The days with calls, oldest first.")


class UsageQuestions(UsageAmounts):
    days = UsageDay(many=True, help_text="The days with questions, oldest first.")


class UsageApi(APIView):
    """Model spend per student and per day: a teacher's students (or the one named), a student's own."""

    class Input(serializers.Serializer[None]):
        student = serializers.IntegerField(
            required=False, min_value=1, max_value=MAX_ID, help_text="Only this student's (a teacher's students)."
        )
        since = serializers.DateField(
            required=False,
            validators=_DAY_RANGE,
            help_text=f"First UTC day (default: 29 days before `until`), from {USAGE_FIRST_DAY} to {USAGE_LAST_DAY}.",
        )
        until = serializers.DateField(
            required=False,
            validators=_DAY_RANGE,
            help_text=f"Last UTC day, included (default: today), from {USAGE_FIRST_DAY} to {USAGE_LAST_DAY}; "
            f"a report spans at most {MAX_DAYS} days.",
        )

        def validate(self, data: dict[str, Any]) -> dict[str, Any]:
            until = data.get("until") or timezone.now().date()
            since = data.get("since") or max(until - timedelta(days=DEFAULT_DAYS - 1), USAGE_FIRST_DAY)
            if since > until:
                raise serializers.ValidationError({"since": [_("The first day must not be after the last one.")]})
            if (until - since).days >= MAX_DAYS:
                raise serializers.ValidationError(
                    {"since": [_("A report spans at most %(days)s days.") % {"days": MAX_DAYS}]}
                )
            return {**data, "since": since, "until": until}

    class Output(serializers.Serializer[dict[str, Any]]):
        since = serializers.DateField()
        until = serializers.DateField()
        currency = serializers.CharField(help_text="Always USD.")
        total = UsageAmounts()
        days = UsageDay(many=True, help_text="All the students' spend per day with calls, oldest first.")
        students = UsageStudent(many=True, help_text="Every student in the report, by username, with zeros if idle.")
        questions = UsageQuestions(
            help_text="The questions (`/ask/`) the requester asked as a teacher or staff member, metered to them and "
            "counted in their asker budgets, not to any student; a student's own questions are in their spend."
        )

    @extend_schema(summary="Model usage and spend", parameters=[Input], responses=Output)
    def get(self, request: Request) -> Response:
        data = self.Input(data=query_params(request))
        data.is_valid(raise_exception=True)
        return Response(self.Output(usage_report(user=request.user, **data.validated_data)).data)
