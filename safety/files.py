"""Screening of uploaded files: a file's extracted text and, for an image, the image itself
(the moderation endpoint reads images; the offline line and a text-only classifier cannot, and
the flag's scores say which backends answered).

A file is screened by the Celery task `safety.tasks.file_screen`, enqueued when its extraction
settles it ready (`connect`: a receiver of conversations.file_extraction.file_ready). Screening again is
harmless: the file's flag is merged (`recording.flag_record`).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

from conversations.file_extraction import file_ready
from conversations.files import PromptFile, image_data_url
from conversations.models import ConversationFile
from core import background
from safety import offline, recording
from safety.models import Flag
from safety.types import combine

logger = logging.getLogger(__name__)


def _on_ready(sender: Any, file_id: int, **kwargs: Any) -> None:
    background.send("safety.tasks.file_screen", file_id)


def connect() -> None:
    file_ready.connect(_on_ready, dispatch_uid="safety.files.screen")


def file_screen(*, file_id: int) -> str:
    """Screen file `file_id` and record what was found; returns "flagged", "clean" or "missing"."""
    row = ConversationFile.objects.select_related("conversation").filter(pk=file_id).first()
    if row is None or row.status != ConversationFile.Status.READY:
        return "missing"
    images: list[str] = []
    if row.is_image:
        prompt_file = PromptFile(
            id=row.pk,
            name=row.name,
            content_type=row.content_type,
            pages=row.pages,
            text="",
            text_truncated=False,
            image_storage_name=row.storage_name,
        )
        try:
            images.append(image_data_url(prompt_file))
        except OSError:
            logger.warning("file %s: image not readable for screening", file_id)
    text = row.text
    results = [offline.screen(text)] if text else []
    backends = list(settings.SAFETY_BACKENDS)
    if backends and (text or images):
        from safety.backends import screen_backends_sync

        results += screen_backends_sync(
            text, images=images, backends=backends, purpose="file", student_id=row.conversation.student_id
        )
    verdict = combine(results)
    flag = recording.flag_record(
        student_id=row.conversation.student_id,
        source=Flag.Source.FILE,
        verdict=verdict,
        conversation_id=row.conversation_id,
        file_id=row.pk,
        excerpt=f"{row.name}: {text}" if text else row.name,
    )
    return "flagged" if flag is not None else "clean"
