"""A family's consent to the tutor remembering their child (docs/privacy.md#consent-to-memory).

`User.memory_consent` (on by default) is changed here only: by an administrator of the student's
school or staff, never a teacher or the student; and by the student's guardian where the
student's school allows it (`School.guardians_may_set_consent`), who may always read it. Every
change is recorded (`ConsentChange`, append-only). Turning it off archives every active memory
of the student (never deletes one) and refuses the card changes the model proposed; turning it
on again starts from nothing new: what was archived stays archived. While it is off, the memory
app writes nothing but teachers' notes and the tutor's prompt holds no memory and no card
(memory.services.writing, memory.blocks, memory.card_block).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import School, User
from accounts.selectors import is_guardian, is_staff_account, student_get_guarded, student_get_overseen
from core.errors import Forbidden
from memory.card import card_proposals_withdraw
from memory.services.lifecycle import memories_archive_all
from memory.validation import REASON_MAX_CHARS
from privacy.models import ConsentChange

# The reason each archived memory carries (AIMemory.archived_reason).
WITHDRAWN_REASON = "Memory consent withdrawn."


def consent_student_get(*, user: Any, student_id: Any, write: bool = False) -> User:
    """The student whose consent `user` may read (and set, with `write`): an administrator of
    the student's school, or staff; their guardian reads it, and sets it only where the
    student's school allows guardians to. Anyone else who sees the student (a teacher of theirs,
    the student) gets Forbidden, as does a guardian whose school does not allow it; anyone else
    at all NotFound, as for a student that does not exist."""
    if is_guardian(user):
        student = student_get_guarded(user=user, student_id=student_id)
        allowed = School.objects.filter(pk=student.school_id or 0, guardians_may_set_consent=True)
        if write and not allowed.exists():
            raise Forbidden(_("Your child's school sets consent to memory: ask the school."))
        return student
    student = student_get_overseen(user=user, student_id=student_id)
    if not (is_staff_account(user) or user.role == User.Role.ADMINISTRATOR):
        raise Forbidden(_("Only an administrator of the student's school can see or set consent to memory."))
    return student


def consent_changes(*, student: User) -> QuerySet[ConsentChange]:
    """The student's record of consent changes, oldest first."""
    return ConsentChange.objects.filter(student=student).order_by("changed_at", "id")


def memory_consent_set(*, user: Any, student_id: Any, memory_consent: bool, reason: str) -> User:
    """Set the student's consent to memory, as `user` (`consent_student_get` says who may).

    A change is recorded with who, when, the value and `reason` (at most REASON_MAX_CHARS, on one
    line), in the same transaction. Off: the student's active memories are archived with
    WITHDRAWN_REASON and the model's pending card changes refused. The same value again changes
    nothing and records nothing. The student's row is locked first, so a memory being written
    meanwhile (memory.services.writing.memory_create) commits before it or is refused after it.
    """
    student = consent_student_get(user=user, student_id=student_id, write=True)
    clean_reason = " ".join(reason.split())[:REASON_MAX_CHARS]
    with transaction.atomic():
        # NO KEY UPDATE: waits for (and holds off) a memory being written for the student
        # (memory_create takes the same lock), never for rows that merely point at the student.
        locked = User.objects.select_for_update(no_key=True).get(pk=student.pk)
        if locked.memory_consent == memory_consent:
            return locked
        locked.memory_consent = memory_consent
        locked.save(update_fields=["memory_consent"])
        archived = 0
        if not memory_consent:
            archived = memories_archive_all(student_id=locked.pk, reason=WITHDRAWN_REASON)
            card_proposals_withdraw(student_id=locked.pk, by=user)
        ConsentChange.objects.create(
            student=locked,
            memory_consent=memory_consent,
            changed_by=user,
            reason=clean_reason,
            archived=archived,
            changed_at=timezone.now(),
        )
    return locked
