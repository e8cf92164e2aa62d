"""Supersession: a newer memory replaces an older one that it contradicts or updates.

The older memory becomes `superseded`: it points at the newer (`superseded_by`), keeps the
reason, leaves the full-text index and its vector (so the prompt and default recall stop
showing it at commit) and stays readable with its chain. Nothing is deleted.

Two ways in:
- the summary model, through fact extraction (memory.extraction): `supersession_propose`
  supersedes at MEMORY_SUPERSEDE_MIN_CONFIDENCE or more, else changes nothing and logs the pair
  (SupersessionReview) for a teacher of the student, who applies or dismisses it;
- a teacher of the student, by hand (`memory_supersede_by_teacher`).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.selectors import is_educator, student_get_visible
from core import events
from core.errors import Conflict, Forbidden, NotFound
from memory.models import AIMemory, MemoryEmbedding, SupersessionReview
from memory.search.backend import search_backend
from memory.selectors import memories_visible_to, memory_get
from memory.services.writing import student_revision_next


def _supersede_locked(older: AIMemory, newer: AIMemory, reason: str) -> AIMemory:
    """Supersede `older` by `newer`, both locked by the caller's transaction.

    Idempotent: an older memory superseded by this newer one already is returned unchanged (and
    `memory.superseded` is emitted once, after commit, when it changes).
    Raises Conflict if they are one memory, of two students, or not both active.
    """
    if older.pk == newer.pk:
        raise Conflict(_("A memory cannot supersede itself."))
    if older.student_id != newer.student_id:
        raise Conflict(_("Both memories must belong to the same student."))
    if older.status == AIMemory.Status.SUPERSEDED and older.superseded_by_id == newer.pk:
        return older
    if older.status != AIMemory.Status.ACTIVE or newer.status != AIMemory.Status.ACTIVE:
        raise Conflict(_("Only an active memory can supersede, or be superseded by, another."))
    older.status = AIMemory.Status.SUPERSEDED
    older.superseded_by = newer
    older.archived_reason = " ".join(reason.split())[:300] or f"superseded by #{newer.pk}"
    older.revision = student_revision_next(older.student_id)
    older.save(update_fields=["status", "superseded_by", "archived_reason", "revision", "updated_at"])
    search_backend().unindex([older.pk])
    MemoryEmbedding.objects.filter(memory=older).delete()
    events.emit(
        events.MEMORY_SUPERSEDED,
        student_id=older.student_id,
        data={"memory_id": older.pk, "superseded_by": newer.pk, "student_id": older.student_id, "kind": older.kind},
    )
    return older


def _locked_pair(older_id: int, newer_id: int) -> tuple[AIMemory, AIMemory]:
    # Locked in id order, as every multi-memory write does, so two supersessions never deadlock.
    rows = {m.pk: m for m in AIMemory.objects.select_for_update().filter(pk__in=[older_id, newer_id]).order_by("pk")}
    if older_id not in rows or newer_id not in rows:
        raise NotFound(_("Memory not found."))
    return rows[older_id], rows[newer_id]


def memory_supersede_by_teacher(*, user: Any, memory_id: Any, by_id: Any, reason: object) -> AIMemory:
    """A teacher of the student marks `memory_id` superseded by `by_id`, with a reason.

    Both memories are read through the scoping primitive (404 outside it); a student is refused.
    Open reviews of the same pair are closed as applied. Returns the older memory.
    """
    older = memory_get(user=user, memory_id=memory_id)
    newer = memory_get(user=user, memory_id=by_id)
    if not is_educator(user):
        raise Forbidden(_("Only a teacher of the student can supersede a memory."))
    clean = " ".join(str(reason or "").split())[:300]
    if not clean:
        raise ValidationError({"reason": [_("A reason is required to supersede a memory.")]})
    with transaction.atomic():
        older, newer = _locked_pair(older.pk, newer.pk)
        result = _supersede_locked(older, newer, clean)
        SupersessionReview.objects.filter(older=older, newer=newer, status=SupersessionReview.Status.OPEN).update(
            status=SupersessionReview.Status.APPLIED, decided_by=user, decided_at=timezone.now()
        )
    return result


def supersession_propose(
    *, student_id: int, older_id: int, newer_id: int, confidence: float, reason: str, model: str
) -> str:
    """The model's proposal that `newer` updates `older`. Returns "applied" or "logged".

    At MEMORY_SUPERSEDE_MIN_CONFIDENCE or more the older memory is superseded at once; below, or
    if the pair cannot be superseded any more (one was archived meanwhile), nothing changes and
    the pair is logged once for a teacher to review. Runs in the caller's transaction if any.
    """
    if confidence >= settings.MEMORY_SUPERSEDE_MIN_CONFIDENCE:
        try:
            with transaction.atomic():
                older, newer = _locked_pair(older_id, newer_id)
                if older.student_id == student_id:
                    _supersede_locked(older, newer, reason or f"updated by #{newer_id}")
                    return "applied"
        except (Conflict, NotFound):
            pass
    SupersessionReview.objects.get_or_create(
        older_id=older_id,
        newer_id=newer_id,
        defaults={"student_id": student_id, "confidence": confidence, "reason": reason[:300], "model": model},
    )
    return "logged"


def supersession_reviews(*, user: Any, student_id: Any = None, status: str = "open") -> Any:
    """The review queue: pairs of memories of the students `user` may see, newest first; a
    named student outside that scope is a 404. A student sees their own queue (reading it
    changes nothing); only a teacher decides."""
    visible = memories_visible_to(user).values("pk")
    qs = SupersessionReview.objects.filter(older__in=visible, newer__in=visible)
    if status != "all":
        qs = qs.filter(status=status)
    if student_id not in (None, ""):
        qs = qs.filter(student=student_get_visible(user=user, student_id=student_id))
    return qs.select_related("older", "newer")


def supersession_review_decide(*, user: Any, review_id: Any, apply: bool) -> SupersessionReview:
    """A teacher of the student applies (supersedes the older memory) or dismisses a review.

    Another class's review is a 404; a student is refused; a decided review is a Conflict.
    """
    try:
        pk = int(review_id)
    except (TypeError, ValueError):
        raise NotFound(_("Review not found.")) from None
    if not supersession_reviews(user=user, status="all").filter(pk=pk).exists():
        raise NotFound(_("Review not found."))
    if not is_educator(user):
        raise Forbidden(_("Only a teacher of the student can decide a review."))
    with transaction.atomic():
        review = SupersessionReview.objects.select_for_update().get(pk=pk)
        if review.status != SupersessionReview.Status.OPEN:
            raise Conflict(_("This review was decided already."))
        if apply:
            older, newer = _locked_pair(review.older_id, review.newer_id)
            _supersede_locked(older, newer, review.reason or f"updated by #{newer.pk}")
        review.status = SupersessionReview.Status.APPLIED if apply else SupersessionReview.Status.DISMISSED
        review.decided_by, review.decided_at = user, timezone.now()
        review.save(update_fields=["status", "decided_by", "decided_at"])
    return review


def memory_chain(memory: AIMemory) -> tuple[list[int], list[int]]:
    """The supersession chain around a memory: the ids it replaced (oldest first, every
    generation) and the ids that replaced it (next first). Reads the student's own rows only."""
    older: list[int] = []
    frontier = [memory.pk]
    while frontier:
        frontier = list(
            AIMemory.objects.filter(student_id=memory.student_id, superseded_by__in=frontier)
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)
        )
        frontier = [pk for pk in frontier if pk not in older]
        older = frontier + older
    newer: list[int] = []
    current = memory.superseded_by_id
    while current is not None and current not in newer and current != memory.pk:
        newer.append(current)
        current = (
            AIMemory.objects.filter(student_id=memory.student_id, pk=current)
            .values_list("superseded_by_id", flat=True)
            .first()
        )
    return older, newer
