"""The student card's reads (memory.models.StudentCard), each through the scoping primitive
(accounts.selectors.student_get_visible: the student themself and their teachers), or, for an
active staff account (role staff with is_staff), any active student; anything else is a 404.
Pending proposals are for teachers and staff: a student never sees them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from accounts.selectors import student_get_overseen
from memory.card_prompts import CardView
from memory.models import CardChange, StudentCard


def card_view(card: StudentCard) -> CardView:
    return CardView(
        goals=tuple(card.goals),
        accommodations=tuple(card.accommodations),
        interests=tuple(card.interests),
        level=card.level,
        register=card.register,
    )


def card_of(student_id: int) -> StudentCard:
    """The student's card, or an unsaved empty one (no row is written by a read)."""
    return StudentCard.objects.filter(student_id=student_id).first() or StudentCard(student_id=student_id)


def card_get(*, user: Any, student_id: Any) -> tuple[StudentCard, list[CardChange]]:
    """The card of a student `user` may see, and its pending proposals (none for the student)."""
    student = student_get_overseen(user=user, student_id=student_id)
    card = card_of(student.pk)
    if student.pk == user.pk:
        return card, []
    pending = CardChange.objects.filter(student=student, status=CardChange.Status.PENDING)
    return card, list(pending.select_related("actor", "decided_by"))


def card_changes(*, user: Any, student_id: Any) -> QuerySet[CardChange]:
    """The log of a student's card, newest first: everything for their teachers; for the
    student, the changes applied to it (not the proposals waiting for, or refused by, a teacher)."""
    student = student_get_overseen(user=user, student_id=student_id)
    changes = CardChange.objects.filter(student=student).select_related("actor", "decided_by")
    if student.pk == user.pk:
        # The fact each names is read too: one a teacher has made teacher-only since is not named.
        changes = changes.filter(status=CardChange.Status.APPLIED).select_related("memory")
    return changes.order_by("-created_at", "-id")
