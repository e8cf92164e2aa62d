"""The student card's writes (memory.models.StudentCard): its edits, the changes fact
extraction proposes, and a teacher's decision on them; its reads are memory.card_selectors.
docs/card.md says who edits what.

Every write locks the card's row (created empty on first write), logs each change as a
CardChange in the same transaction, and re-counts the rendered card's tokens
(memory.card_prompts, in the student's language): a write that leaves the card longer than
MEMORY_CARD_MAX_TOKENS, and longer than it was, is refused whole with CardTooLong (400
`card_too_long`). A card already over the limit (the limit lowered since) may still be shortened.

A card outside the requester's scope is a 404 (memory.card_selectors.card_student_get); an
active staff account (role staff with is_staff) edits every active student's. Pending proposals
are for teachers and staff: a student never decides them.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import User
from accounts.selectors import is_educator, is_staff_account, student_get_overseen, students_visible_to
from core.errors import ApplicationError, Conflict, Forbidden, NotFound
from memory.card_prompts import card_tokens
from memory.card_selectors import card_view
from memory.models import CardChange, StudentCard

logger = logging.getLogger(__name__)

Field = StudentCard.Field
# A value of the card: one line of at most VALUE_MAX_CHARS; a list holds at most LIST_MAX_ITEMS.
VALUE_MAX_CHARS = 120
LIST_MAX_ITEMS = 20
EDITABLE = "student_editable"


class CardTooLong(ApplicationError):
    code = "card_too_long"


class CardFieldNotEditable(Forbidden):
    code = "card_field_not_editable"


class ChangeDecided(Conflict):
    code = "change_decided"


def clean_value(value: object) -> str:
    """A card value on one line, its white space collapsed; ValidationError if it is not text,
    or is longer than VALUE_MAX_CHARS."""
    if not isinstance(value, str) or "\x00" in value:
        raise ValidationError(_("A card value must be text."))
    text = " ".join(value.split())
    if len(text) > VALUE_MAX_CHARS:
        raise ValidationError(_("A card value has at most %(n)s characters.") % {"n": VALUE_MAX_CHARS})
    return text


def _clean_list(values: list[Any]) -> list[str]:
    """The values cleaned, blanks and repeats (ignoring case) dropped, in their order."""
    out: list[str] = []
    for value in values:
        text = clean_value(value)
        if text and text.casefold() not in {v.casefold() for v in out}:
            out.append(text)
    if len(out) > LIST_MAX_ITEMS:
        raise ValidationError(_("A card list has at most %(n)s values.") % {"n": LIST_MAX_ITEMS})
    return out


def _locked_card(student_id: int) -> StudentCard:
    card, _created = StudentCard.objects.select_for_update().get_or_create(student_id=student_id)
    return card


def _has(values: list[str], value: str) -> bool:
    return value.casefold() in {v.casefold() for v in values}


def _apply(card: StudentCard, field: str, op: str, value: str) -> bool:
    """Apply one change to the card in memory; whether it changed anything."""
    if op == CardChange.Op.SET:
        if getattr(card, field) == value:
            return False
        setattr(card, field, value)
        return True
    values: list[str] = list(getattr(card, field))
    if op == CardChange.Op.ADD:
        if _has(values, value):
            return False
        values.append(value)
    else:
        kept = [v for v in values if v.casefold() != value.casefold()]
        if len(kept) == len(values):
            return False
        values = kept
    setattr(card, field, values)
    return True


def _save_within_limit(card: StudentCard, *, language: str) -> None:
    """Count the card's tokens and save it; CardTooLong if it grew past the limit."""
    tokens = card_tokens(card_view(card), language=language)
    limit = settings.MEMORY_CARD_MAX_TOKENS
    if tokens > limit and tokens > card.token_count:
        raise CardTooLong(
            _("The card would take %(count)s tokens; its limit is %(limit)s. Shorten or remove a value.")
            % {"count": tokens, "limit": limit},
            details={"token_count": tokens, "token_limit": limit},
        )
    card.token_count = tokens
    card.save()


def _source_of(user: Any, student: User) -> str:
    if user.pk == student.pk:
        return CardChange.Source.STUDENT
    if is_educator(user):
        return CardChange.Source.TEACHER
    return CardChange.Source.STAFF


def card_update(*, user: Any, student_id: Any, data: dict[str, Any]) -> StudentCard:
    """Edit the card of a student `user` may see (teachers: every field; the student: only the
    fields in `student_editable`, else CardFieldNotEditable). A list given replaces the list;
    each value added or removed, and each text set, is logged as an applied CardChange.
    A card that would grow past the limit is refused whole (CardTooLong)."""
    student = student_get_overseen(user=user, student_id=student_id)
    source = _source_of(user, student)
    with transaction.atomic():
        card = _locked_card(student.pk)
        if source == CardChange.Source.STUDENT:
            refused = sorted(f for f in data if f not in card.student_editable or f in (Field.ACCOMMODATIONS, EDITABLE))
            if refused:
                raise CardFieldNotEditable(
                    _("You may not edit these fields of your card: %(fields)s.") % {"fields": ", ".join(refused)},
                    details={"fields": refused},
                )
        changes: list[tuple[str, str, str]] = []
        for field, given in data.items():
            if field in StudentCard.TEXT_FIELDS:
                value = clean_value(given)
                if _apply(card, field, CardChange.Op.SET, value):
                    changes.append((field, CardChange.Op.SET, value))
                continue
            if field == EDITABLE:
                new: list[str] = [str(f) for f in StudentCard.STUDENT_EDITABLE_CHOICES if f in given]
            elif field in StudentCard.LIST_FIELDS:
                new = _clean_list(list(given))
            else:
                raise ValidationError({field: [_("Not a field of the card.")]})
            old: list[str] = list(getattr(card, field))
            changes += [(field, CardChange.Op.REMOVE, v) for v in old if v not in new]
            changes += [(field, CardChange.Op.ADD, v) for v in new if v not in old]
            setattr(card, field, new)
        _save_within_limit(card, language=student.language)
        now = timezone.now()
        CardChange.objects.bulk_create(
            CardChange(
                student=student,
                field=field,
                op=op,
                value=value,
                status=CardChange.Status.APPLIED,
                source=source,
                actor=user,
                decided_by=user,
                decided_at=now,
            )
            for field, op, value in changes
        )
    return card


def card_propose(
    *, student_id: int, field: str, op: str, value: object, confidence: float, memory_id: int | None, reason: str = ""
) -> CardChange | None:
    """A change proposed by fact extraction, from the memory `memory_id`. None when it says
    what the card says already, repeats a proposal pending or refused, or the student has no
    consent to memory. An accommodation waits for a teacher (pending); another field is applied
    at MEMORY_CARD_AUTO_APPLY_CONFIDENCE or more if the card stays within its limit, else waits.
    ValueError if it is not a change the card can take (a field, an op that fits it, a value)."""
    valid_ops = (CardChange.Op.SET,) if field in StudentCard.TEXT_FIELDS else (CardChange.Op.ADD, CardChange.Op.REMOVE)
    if field not in StudentCard.Field.values or op not in valid_ops:
        raise ValueError(f"{field!r} cannot take {op!r}")
    try:
        text = clean_value(value)
    except ValidationError as exc:
        raise ValueError(" ".join(exc.messages)) from None
    if not text and op != CardChange.Op.SET:
        raise ValueError("an empty value")
    student = User.objects.filter(pk=student_id).values_list("language", "memory_consent").first()
    if student is None or not student[1]:  # nothing is proposed without consent to memory
        return None
    language = student[0] or "en"
    with transaction.atomic():
        card = _locked_card(student_id)
        already = CardChange.objects.filter(
            student_id=student_id,
            field=field,
            op=op,
            value__iexact=text,
            status__in=(CardChange.Status.PENDING, CardChange.Status.REJECTED),
        )
        probe = StudentCard(**{f: getattr(card, f) for f in StudentCard.Field.values})
        if not _apply(probe, field, op, text) or already.exists():
            return None
        status = CardChange.Status.PENDING
        if field != Field.ACCOMMODATIONS and confidence >= settings.MEMORY_CARD_AUTO_APPLY_CONFIDENCE:
            _apply(card, field, op, text)
            try:
                with transaction.atomic():
                    _save_within_limit(card, language=language)
                status = CardChange.Status.APPLIED
            except CardTooLong:
                card.refresh_from_db()
        decided = status == CardChange.Status.APPLIED
        return CardChange.objects.create(
            student_id=student_id,
            field=field,
            op=op,
            value=text,
            status=status,
            source=CardChange.Source.EXTRACTION,
            confidence=min(max(float(confidence), 0.0), 1.0),
            memory_id=memory_id,
            reason=reason[:300],
            decided_at=timezone.now() if decided else None,
        )


def card_change_decide(*, user: Any, change_id: Any, accept: bool) -> CardChange:
    """A teacher of the student, or staff, accepts (the change is applied to the card) or
    rejects a pending change; anyone else gets NotFound, a decided change ChangeDecided (409).
    An accepted change that would take the card past its limit is refused (CardTooLong) and
    stays pending. The change's row is locked: two decisions cannot both pass."""
    if is_staff_account(user):
        visible = CardChange.objects.filter(student__is_active=True)
    elif is_educator(user):
        visible = CardChange.objects.filter(student__in=students_visible_to(user))
    else:
        raise NotFound(_("Card change not found."))
    with transaction.atomic():
        change = visible.select_for_update(of=("self",)).filter(pk=change_id).first()
        if change is None:
            raise NotFound(_("Card change not found."))
        if change.status != CardChange.Status.PENDING:
            raise ChangeDecided(_("This change was already decided: %(status)s.") % {"status": change.status})
        if accept:
            card = _locked_card(change.student_id)
            if _apply(card, change.field, change.op, change.value):
                language = User.objects.filter(pk=change.student_id).values_list("language", flat=True).first() or "en"
                _save_within_limit(card, language=language)
        change.status = CardChange.Status.APPLIED if accept else CardChange.Status.REJECTED
        change.decided_by = user
        change.decided_at = timezone.now()
        change.save(update_fields=["status", "decided_by", "decided_at"])
    logger.info("card change %s %s by %s", change.pk, change.status, user.pk)
    return change


def card_proposals_withdraw(*, student_id: int, by: Any) -> int:
    """Refuse every pending change the model proposed for the student's card (decided by `by`,
    now), in the caller's transaction; returns how many. A family's withdrawal of consent to
    memory does it (privacy.consent): what the model drew from the student's memories waits for
    no one. The card itself is kept, and stays out of the prompt while consent is off."""
    pending = CardChange.objects.filter(
        student_id=student_id, status=CardChange.Status.PENDING, source=CardChange.Source.EXTRACTION
    )
    return pending.update(status=CardChange.Status.REJECTED, decided_by=by, decided_at=timezone.now())
