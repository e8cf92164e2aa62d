"""Guardians' erasure requests (docs/privacy.md#guardians): a guardian files one for their
child; an administrator of the child's school (or staff) approves it, which runs the legal
erasure (`privacy.services.student_erase`, via "guardian_request"), or refuses it with a reason.

Who sees a request: its guardian (their own), and the managers of its school
(`accounts.selectors.schools_administered_by`: every school for staff); to anyone else it is a
404, as one that does not exist. Only a manager decides; the guardian who filed it gets 403.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Enrollment, School, User
from accounts.selectors import (
    is_guardian,
    is_school_manager,
    schools_administered_by,
    student_get_readable,
    student_get_visible,
)
from core.errors import Conflict, Forbidden, NotFound
from privacy.models import Erasure, ErasureRequest
from privacy.services import REASON_MAX_CHARS, student_erase


def _reason(reason: object, field: str = "reason") -> str:
    clean = " ".join(str(reason or "").split())[:REASON_MAX_CHARS]
    if not clean:
        raise ValidationError({field: [_("Give a reason.")]})
    return clean


def _school_of(student: User) -> School:
    """The school that decides on the student: theirs, or their first active class's."""
    if student.school_id is not None:
        return student.school  # type: ignore[return-value]
    enrollment = Enrollment.objects.filter(student=student, active=True).select_related("classroom__school").first()
    if enrollment is None:
        raise Conflict(_("This student belongs to no school that could decide on the request."))
    return enrollment.classroom.school


def erasure_request_file(*, guardian: Any, student_id: Any, reason: object) -> ErasureRequest:
    """A guardian files a request to erase their child (a linked child: NotFound otherwise);
    anyone else who sees the child (their teacher, their school's administrator) gets Forbidden.
    One request pending per child: another is a Conflict."""
    if not is_guardian(guardian):
        student_get_visible(user=guardian, student_id=student_id)
        raise Forbidden(_("Only a guardian files an erasure request."))
    student = student_get_readable(user=guardian, student_id=student_id)
    clean = _reason(reason)
    try:
        with transaction.atomic():
            return ErasureRequest.objects.create(
                student=student,
                school=_school_of(student),
                requested_by=guardian,
                requested_at=timezone.now(),
                reason=clean,
            )
    except IntegrityError:
        raise Conflict(_("An erasure request for this student is already waiting for a decision.")) from None


def erasure_requests_visible_to(user: Any) -> QuerySet[ErasureRequest]:
    """The requests `user` sees: a guardian's own; a school manager's schools'; none else."""
    requests = ErasureRequest.objects.all()
    if is_guardian(user):
        return requests.filter(requested_by=user)
    if is_school_manager(user):
        return requests.filter(school__in=schools_administered_by(user).values("pk"))
    return requests.none()


def _decidable(*, actor: Any, request_id: Any) -> ErasureRequest:
    """The pending request `actor` decides, locked until the caller's transaction ends (two
    decisions of one request run one at a time; the second finds it decided: Conflict)."""
    visible = erasure_requests_visible_to(actor).filter(pk=request_id).values("pk")
    found = ErasureRequest.objects.select_for_update().filter(pk__in=visible).first()
    if found is None:
        raise NotFound(_("Erasure request not found."))
    if not is_school_manager(actor):
        raise Forbidden(_("Only the child's school decides on an erasure request."))
    if found.status != ErasureRequest.Status.PENDING:
        raise Conflict(_("This erasure request has already been decided."))
    return found


def erasure_request_approve(*, actor: User, request_id: Any) -> ErasureRequest:
    """Approve a pending request: erase the child (one transaction with the decision; the
    erasure's reason names the request) and record who decided and when."""
    with transaction.atomic():
        request = _decidable(actor=actor, request_id=request_id)
        assert request.student_id is not None
        erasure: Erasure = student_erase(
            student_id=request.student_id,
            confirm=request.student_id,
            reason=f"Guardian's erasure request {request.pk}",
            erased_by=actor,
            via=Erasure.Via.GUARDIAN_REQUEST,
        )
        request.refresh_from_db()
        request.status = ErasureRequest.Status.APPROVED
        request.decided_by, request.decided_at, request.erasure = actor, timezone.now(), erasure
        request.save(update_fields=["status", "decided_by", "decided_at", "erasure"])
    return request


def erasure_request_refuse(*, actor: User, request_id: Any, reason: object) -> ErasureRequest:
    """Refuse a pending request, with a reason (required): nothing is erased."""
    clean = _reason(reason)
    with transaction.atomic():
        request = _decidable(actor=actor, request_id=request_id)
        request.status = ErasureRequest.Status.REFUSED
        request.decided_by, request.decided_at, request.decision_reason = actor, timezone.now(), clean
        request.save(update_fields=["status", "decided_by", "decided_at", "decision_reason"])
    return request
