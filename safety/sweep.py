"""The backstop of screening: the offline line (the rules and the learned screen, as the turn
runs them: safety.line) once more on every student message, in id order,
shortly after its turn, so that a message whose screening was lost (its server process killed
between storing the message and recording the flag) is still screened and alerted.

The turn records its flags as soon as the offline line has read the message; the sweep finds
them there and merges into them (`recording.flag_record`: no second flag, no second alert). The
sweep runs the offline line only: a lost answer of a slower backend is not asked again. A
batch's contexts (each message's previous messages, as the turn reads them) are read in one
statement (safety.selectors.message_contexts).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from conversations.models import Message
from safety import learned, line, recording
from safety.models import Flag, ScreeningCursor
from safety.selectors import message_contexts
from safety.types import combine

logger = logging.getLogger(__name__)

CURSOR = "messages"
# A message newer than this may still be in its turn: the next sweep takes it.
SETTLE_SECONDS = 120
BATCH = 2000


def messages_sweep(*, settle_seconds: float = SETTLE_SECONDS, batch: int = BATCH) -> int:
    """Screen the student messages stored since the last sweep and older than `settle_seconds`,
    at most `batch` of them; returns how many were flagged. The first sweep of a deployment
    starts at the newest message (the history before it is not screened again)."""
    with transaction.atomic():
        cursor = ScreeningCursor.objects.select_for_update().filter(name=CURSOR).first()
        if cursor is None:
            newest = Message.objects.aggregate(newest=Max("pk"))["newest"] or 0
            ScreeningCursor.objects.create(name=CURSOR, last_id=newest)
            return 0
        cutoff = timezone.now() - timedelta(seconds=settle_seconds)
        rows = list(
            Message.objects.filter(pk__gt=cursor.last_id, role=Message.Role.STUDENT)
            .order_by("pk")
            .values_list("pk", "content", "created_at", "conversation_id", "conversation__student_id")[:batch]
        )
        # A message newer than the cutoff, and those after it, wait for the next sweep.
        rows = rows[: next((i for i, row in enumerate(rows) if row[2] > cutoff), len(rows))]
        size = learned.context_size() if rows else 0  # a sweep with nothing to screen loads nothing
        contexts = message_contexts(messages=[(row[0], row[3]) for row in rows], size=size)
        flagged = 0
        for pk, content, _created_at, conversation_id, student_id in rows:
            cursor.last_id = pk
            verdict = combine(
                line.screen_stored(message_id=pk, conversation_id=conversation_id, text=content, context=contexts[pk])
            )
            if verdict.signals:
                recording.flag_record(
                    student_id=student_id,
                    source=Flag.Source.MESSAGE,
                    verdict=verdict,
                    conversation_id=conversation_id,
                    message_id=pk,
                    excerpt=content,
                )
                flagged += 1
        cursor.save(update_fields=["last_id", "updated_at"])
    if flagged:
        logger.info("screening sweep: %s messages flagged (or already flagged)", flagged)
    return flagged
