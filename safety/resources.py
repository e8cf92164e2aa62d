"""Where a student in crisis can find help now: their class's resources, else the school's
default (SAFETY_RESOURCES), in their language (docs/safety.md)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from safety.models import ClassroomSafety

FIELDS = ("name", "phone", "url", "text")


def _clean(items: Any) -> list[dict[str, str]]:
    if not isinstance(items, list):
        return []
    cleaned = []
    for item in items:
        if isinstance(item, dict) and str(item.get("name") or "").strip():
            cleaned.append({field: str(item.get(field) or "").strip() for field in FIELDS})
    return cleaned


def _pick(by_language: Any, language: str) -> list[dict[str, str]]:
    if not isinstance(by_language, dict):
        return []
    return (
        _clean(by_language.get(language))
        or _clean(by_language.get("en"))
        or _clean(next(iter(by_language.values()), []))
    )


def resources_for(*, student_id: int, language: str) -> list[dict[str, str]]:
    """The resources of the first of the student's current classes (an active enrolment in an
    active class) that has its own, else SAFETY_RESOURCES; in `language`, else English, else any
    language there is."""
    rows = ClassroomSafety.objects.filter(
        classroom__active=True, classroom__enrollments__student_id=student_id, classroom__enrollments__active=True
    ).order_by("classroom_id")
    for row in rows:
        found = _pick(row.resources, language)
        if found:
            return found
    return _pick(settings.SAFETY_RESOURCES, language)
