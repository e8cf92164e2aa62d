"""What teachers and staff do with a flag: acknowledge it, resolve it. Each appends to the flag's
append-only log (FlagAction) and stops its escalation (escalate_at cleared)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from core.errors import Conflict, NotFound
from safety.models import Flag, FlagAction
from safety.selectors import flag_get_visible, flags_visible_to

NOTE_MAX_CHARS = 2000
OUTCOMES = (Flag.Status.RESOLVED, Flag.Status.FALSE_POSITIVE)
CLOSED = (Flag.Status.RESOLVED, Flag.Status.FALSE_POSITIVE)
# Flag.outcome holds the start of the resolving note, for the queue.
OUTCOME_MAX_CHARS = 200


def _clean_note(note: object, *, required: bool) -> str:
    if not isinstance(note, str):
        raise ValidationError({"note": [_("Must be text.")]})
    text = note.strip()
    if len(text) > NOTE_MAX_CHARS:
        message = _("A note is at most %(limit)s characters (got %(length)s).")
        raise ValidationError({"note": [message % {"limit": NOTE_MAX_CHARS, "length": len(text)}]})
    if required and not text:
        raise ValidationError({"note": [_("Say what was done.")]})
    return text


def _locked(*, user: Any, flag_id: Any) -> Flag:
    """The flag, visible to `user` (NotFound otherwise), locked until the transaction ends: two
    teachers acting at once are serialised, and the second sees the first's status."""
    flag = flag_get_visible(user=user, flag_id=flag_id)
    locked = flags_visible_to(user).select_for_update().filter(pk=flag.pk).first()
    if locked is None:
        raise NotFound(_("Flag not found."))
    return locked


def flag_acknowledge(*, user: Any, flag_id: Any, note: str = "") -> Flag:
    """`user` (who may see the flag) has seen it and is acting: the flag is acknowledged, its
    escalation stops, and the log says who and when (with the note, if any).

    NotFound for a flag `user` may not see; Conflict for one already acknowledged or closed
    (resolved, false positive): nothing changes then."""
    text = _clean_note(note, required=False)
    with transaction.atomic():
        flag = _locked(user=user, flag_id=flag_id)
        if flag.status in CLOSED:
            raise Conflict(_("This flag is already closed."), details={"status": flag.status})
        if flag.status == Flag.Status.ACKNOWLEDGED:
            raise Conflict(_("This flag is already acknowledged."), details={"status": flag.status})
        flag.status = Flag.Status.ACKNOWLEDGED
        flag.escalate_at = None
        flag.save(update_fields=["status", "escalate_at", "updated_at"])
        FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.ACKNOWLEDGED, actor=user, note=text)
    return flag


def flag_resolve(*, user: Any, flag_id: Any, note: str, outcome: str) -> Flag:
    """`user` closes the flag: `outcome` "resolved" (dealt with) or "false_positive" (nothing
    was wrong) becomes its status; `note` (required) says what was done and is logged; its start
    is kept as the flag's `outcome`. An open flag may be resolved without acknowledging it first.

    NotFound for a flag `user` may not see; Conflict for a closed one (nothing changes)."""
    if outcome not in OUTCOMES:
        raise ValidationError({"outcome": [_("Choose resolved or false_positive.")]})
    text = _clean_note(note, required=True)
    with transaction.atomic():
        flag = _locked(user=user, flag_id=flag_id)
        if flag.status in CLOSED:
            raise Conflict(_("This flag is already closed."), details={"status": flag.status})
        flag.status = outcome
        flag.outcome = text[:OUTCOME_MAX_CHARS]
        flag.escalate_at = None
        flag.save(update_fields=["status", "outcome", "escalate_at", "updated_at"])
        FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.RESOLVED, actor=user, note=text)
    return flag
