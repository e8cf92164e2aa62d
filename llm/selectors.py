"""Reads of the metering: what the model calls of a user's students, and their own questions, cost,
per student and per day."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Count, QuerySet, Sum
from django.db.models.functions import TruncDate

from accounts.selectors import student_get_readable, students_readable_by
from llm.models import LLMUsage

AMOUNTS = ("cost", "prompt_tokens", "completion_tokens", "calls")


def _zero() -> dict[str, Any]:
    return {"cost": Decimal(0), "prompt_tokens": 0, "completion_tokens": 0, "calls": 0}


def _add(into: dict[str, Any], amounts: dict[str, Any]) -> None:
    for key in AMOUNTS:
        into[key] += amounts[key]


def usage_report(*, user: Any, since: date, until: date, student: int | None = None) -> dict[str, Any]:
    """The spend of the students `user` may see (a teacher's classes, a guardian's children, a student themself), or of
    the one named (NotFound if not visible), from `since` to `until` inclusive, UTC days: per
    student and per day (days without calls left out), per day for all, and in total. Every
    visible student is listed, those without calls with zeros. `questions`: the spend of the
    questions `user` asked as a teacher or staff member (metered to them, not to a student), per
    day and in total. Three queries."""
    students = students_readable_by(user)
    if student is not None:
        students = students.filter(pk=student_get_readable(user=user, student_id=student).pk)
    people = {s["id"]: {**s, **_zero(), "days": []} for s in students.order_by("username").values("id", "username")}
    total = _zero()
    days: dict[date, dict[str, Any]] = {}
    for row in _per_day(LLMUsage.objects.filter(student_id__in=list(people)), "student_id", since, until):
        amounts = _amounts(row)
        person = people[row["student_id"]]
        person["days"].append({"date": row["day"], **amounts})
        _add(person, amounts)
        _add(days.setdefault(row["day"], {"date": row["day"], **_zero()}), amounts)
        _add(total, amounts)
    questions = {**_zero(), "days": []}
    asked = LLMUsage.objects.filter(asker_id=user.pk, student__isnull=True)
    for row in _per_day(asked, "asker_id", since, until):
        amounts = _amounts(row)
        questions["days"].append({"date": row["day"], **amounts})
        _add(questions, amounts)
    return {
        "since": since,
        "until": until,
        "currency": "USD",
        "total": total,
        "days": [days[day] for day in sorted(days)],
        "students": list(people.values()),
        "questions": questions,
    }


def _per_day(rows: QuerySet[LLMUsage], by: str, since: date, until: date) -> QuerySet[Any]:
    """`rows` from `since` to `until` (UTC days), summed per `by` and per day."""
    return (
        rows.filter(
            created_at__gte=datetime.combine(since, time.min, tzinfo=UTC),
            created_at__lt=datetime.combine(until + timedelta(days=1), time.min, tzinfo=UTC),
        )
        .annotate(day=TruncDate("created_at", tzinfo=UTC))
        .values(by, "day")
        .annotate(spent=Sum("cost"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"), n=Count("id"))
        .order_by(by, "day")
    )


def _amounts(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "cost": row["spent"] or Decimal(0),
        "prompt_tokens": row["prompt"] or 0,
        "completion_tokens": row["completion"] or 0,
        "calls": row["n"],
    }
