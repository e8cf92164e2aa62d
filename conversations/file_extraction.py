"""The text of the files a student attaches (conversations.files): extracted by
conversations.tasks.file_extract, settled `ready` or `unreadable` with its reason.

pypdf reads PDFs in a process of its own bounded in decompressed bytes, memory and time
(conversations.pdf_text); text is read as UTF-8; images are ready without text. A file that
cannot be read (malformed, encrypted, no text, too large, too slow) is `unreadable` with its
reason; no error of the file's own ends the task, and none can take the worker's memory with it.
A file settled ready sends `file_ready`, and its text becomes a recallable memory.
"""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from accounts.selectors import memory_consent_given
from conversations import pdf_text
from conversations.files import MARKDOWN, PAGE_BREAK, PDF, TEXT, StorageUnavailable, file_storage
from conversations.models import Conversation, ConversationFile
from memory.models import AIMemory
from memory.services.records import memory_record_save

logger = logging.getLogger(__name__)

# What the PDF reader logs (pypdf's warnings: one per page at most) is kept to this many lines.
_READER_LOG_LINES = 20


@dataclass(frozen=True)
class Extraction:
    status: str
    reason: str = ""
    pages: int | None = None
    text: str = ""
    truncated: bool = False


def _clean(text: str) -> str:
    # PostgreSQL refuses NUL in text, and a lone surrogate cannot be encoded: neither is content.
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8")


def _capped(parts: list[str], separator: str) -> tuple[str, bool]:
    text = separator.join(parts)
    limit = settings.FILES_MAX_TEXT_CHARS
    return (text[:limit], True) if len(text) > limit else (text, False)


def _unreadable(reason: str, pages: int | None = None) -> Extraction:
    return Extraction(status=ConversationFile.Status.UNREADABLE, reason=reason, pages=pages)


def _pdf_extract(data: bytes, label: str) -> Extraction:
    """Text per page with pypdf, read by `conversations.pdf_text` in a process of its own so
    that no file can take the worker's memory or time: past FILES_EXTRACT_MAX_DECODED_BYTES
    decompressed or FILES_EXTRACT_MAX_MEMORY_BYTES of memory the file is `too_large`, past
    FILES_EXTRACT_TIME_LIMIT_SECONDS the process is killed and the file is `too_slow`; a
    malformed file is `malformed` (a page that fails alone is skipped), a locked one
    `encrypted`. What the reader logs is logged here under the file's id."""
    reason = ConversationFile.Reason
    seconds = settings.FILES_EXTRACT_TIME_LIMIT_SECONDS
    command = [
        sys.executable,
        "-I",  # no PYTHON* variables, no user site, no script folder on the path
        pdf_text.__file__,
        str(settings.FILES_EXTRACT_MAX_DECODED_BYTES),
        str(settings.FILES_MAX_TEXT_CHARS),
        str(settings.FILES_EXTRACT_MAX_MEMORY_BYTES),
        str(math.ceil(seconds) + 1),  # its processor time, should this process die first
    ]
    try:
        # Our interpreter and script, the file's bytes on stdin only. The reader parses a
        # stranger's file: it gets no environment, hence no secret.
        done = subprocess.run(  # noqa: S603
            command, input=data, capture_output=True, timeout=seconds, env={"PATH": os.defpath}, check=False
        )
    except subprocess.TimeoutExpired:  # run() has killed the reader
        logger.warning("file %s: reading the PDF took longer than %ss; stopped", label, seconds)
        return _unreadable(reason.TOO_SLOW)
    for line in done.stderr.decode("utf-8", "replace").splitlines()[:_READER_LOG_LINES]:
        logger.warning("file %s: %s", label, line[:500])
    if done.returncode == pdf_text.EXIT_TOO_LARGE:
        return _unreadable(reason.TOO_LARGE)
    try:
        result = json.loads(done.stdout)
        status, why = ConversationFile.Status(result["status"]), result["reason"]
        extraction = Extraction(
            status=status,
            reason=reason(why) if why else "",
            pages=result["pages"],
            text=result["text"],
            truncated=result["truncated"],
        )
    except (ValueError, KeyError, TypeError):
        # Killed (RLIMIT_CPU, a signal) or crashed: nothing to read. Another try would end the same.
        logger.error("file %s: the PDF reader ended with status %s and no answer", label, done.returncode)
        return _unreadable(reason.EXTRACTION_FAILED)
    if extraction.reason == reason.TOO_LARGE:
        logger.warning("file %s: the PDF expands past the limits of its reader", label)
    return extraction


def extract_content(*, data: bytes, content_type: str, label: str = "") -> Extraction:
    """What a file holds for the prompt: a function of its bytes and type alone, which never
    raises for the file's own sake (only Celery's time limit goes through)."""
    if content_type == PDF:
        return _pdf_extract(data, label)
    if content_type in (TEXT, MARKDOWN):
        try:
            decoded = _clean(data.decode("utf-8-sig"))
        except UnicodeDecodeError:
            return _unreadable(ConversationFile.Reason.MALFORMED)
        if not decoded.strip():
            return _unreadable(ConversationFile.Reason.NO_TEXT)
        text, truncated = _capped([decoded], "")
        return Extraction(status=ConversationFile.Status.READY, text=text, truncated=truncated)
    # Images (and any type without text) are shown as they are, never read here.
    return Extraction(status=ConversationFile.Status.READY)


def _file_begin(*, file_id: int) -> ConversationFile | str:
    """Count a try on a pending file and return it, or say why there is nothing to do."""
    with transaction.atomic():
        row = ConversationFile.objects.select_for_update().filter(pk=file_id).first()
        if row is None:
            return "no_such_file"
        if row.status != ConversationFile.Status.PENDING:
            return "already_done"
        if row.extract_attempts >= settings.FILES_EXTRACT_MAX_ATTEMPTS:
            logger.error("file %s: extraction failed %s times; marked unreadable", file_id, row.extract_attempts)
            failed = _unreadable(ConversationFile.Reason.EXTRACTION_FAILED)
            return file_extract_settle(file_id=file_id, extraction=failed)
        row.extract_attempts += 1
        row.extract_requested_at = timezone.now()
        row.save(update_fields=["extract_attempts", "extract_requested_at"])
    return row


# Sent (with `file_id`) once a file is settled ready, after commit: its text, or the image, can
# be read. Receivers must return at once (enqueue their work); an error of theirs is logged.
file_ready = Signal()


def _announce_ready(file_id: int) -> None:
    for receiver, outcome in file_ready.send_robust(sender=ConversationFile, file_id=file_id):
        if isinstance(outcome, Exception):
            logger.error("file %s: file_ready receiver %r failed: %s", file_id, receiver, outcome)


def file_extract_settle(*, file_id: int, extraction: Extraction) -> str:
    """Write an extraction's outcome on a file still pending; a settled file is left as it is.
    Returns the file's new status, or "already_done". A file settled ready sends `file_ready`."""
    updated = ConversationFile.objects.filter(pk=file_id, status=ConversationFile.Status.PENDING).update(
        status=extraction.status,
        reason=extraction.reason,
        pages=extraction.pages,
        text=extraction.text,
        text_truncated=extraction.truncated,
        extracted_at=timezone.now(),
    )
    if not updated:
        return "already_done"
    if extraction.status == ConversationFile.Status.READY:
        transaction.on_commit(partial(_announce_ready, file_id))
    return extraction.status


def file_extract(*, file_id: int) -> str:
    """Extract a pending file's text and settle its status: "ready" or "unreadable" (with the
    reason), "already_done" for a file already settled, "no_such_file".

    Safe to run twice or at once on two workers: only a pending file is read, and the outcome is
    written by a conditional update on `status = pending`, so the second delivery writes nothing.
    Each try is counted before it starts: past FILES_EXTRACT_MAX_ATTEMPTS (a file that kills its
    worker, a storage down for good) the file is settled unreadable instead of tried again.
    Raises StorageUnavailable when the storage cannot be read for now (the task retries).
    """
    begun = _file_begin(file_id=file_id)
    if isinstance(begun, str):
        return begun
    try:
        # Whole: the upload was bounded by FILES_MAX_BYTES then (a lower limit since must not
        # cut an older file short).
        with file_storage().open(begun.storage_name, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        logger.error("file %s: %s is missing from the storage", file_id, begun.storage_name)
        return file_extract_settle(file_id=file_id, extraction=_unreadable(ConversationFile.Reason.MISSING))
    except Exception as exc:  # any backend's own errors (OSError, botocore's...): transient
        raise StorageUnavailable(f"{type(exc).__name__}: {exc}") from exc
    extraction = extract_content(data=data, content_type=begun.content_type, label=str(file_id))
    outcome = file_extract_settle(file_id=file_id, extraction=extraction)
    if outcome == ConversationFile.Status.READY and extraction.text.strip():
        file_memory_save(file=begun, text=extraction.text, pages=extraction.pages)
    logger.info(
        "file %s extracted: %s%s, %s pages, %s characters",
        file_id,
        outcome,
        f" ({extraction.reason})" if extraction.reason else "",
        extraction.pages,
        len(extraction.text),
    )
    return outcome


FILE_MEMORY_EXCERPT_WORDS = 150


def file_memory_save(*, file: ConversationFile, text: str, pages: int | None) -> AIMemory | None:
    """The recallable memory of a file's text: its name, conversation and opening words, so that a
    later conversation can find "the worksheet on fractions" (one per file, see memory_record_save).
    None for a student without consent to memory: the file serves its own conversation only."""
    words = " ".join(text.replace(PAGE_BREAK, " ").split()).split(" ")
    excerpt = " ".join(words[:FILE_MEMORY_EXCERPT_WORDS]) + (" [...]" if len(words) > FILE_MEMORY_EXCERPT_WORDS else "")
    length = f", {pages} page{'s' if pages != 1 else ''}" if pages else ""
    student_id = Conversation.objects.filter(pk=file.conversation_id).values_list("student_id", flat=True).get()
    if not memory_consent_given(student_id):
        return None
    memory, _created = memory_record_save(
        student_id=student_id,
        kind=AIMemory.Kind.FILE,
        source_ref=f"file:{file.pk}",
        conversation_id=file.conversation_id,
        title=f"Uploaded file {file.name}",
        content=f"The student uploaded {file.name} ({file.content_type}{length}). It begins: {excerpt}",
    )
    return memory


def files_pending_due(*, limit: int = 500) -> list[int]:
    """Pending files whose latest try was requested or begun FILES_SWEEP_AFTER_SECONDS ago and
    that are not settled: their message was lost, or their worker died."""
    cutoff = timezone.now() - timedelta(seconds=settings.FILES_SWEEP_AFTER_SECONDS)
    return list(
        ConversationFile.objects.filter(status=ConversationFile.Status.PENDING, extract_requested_at__lt=cutoff)
        .order_by("extract_requested_at")
        .values_list("pk", flat=True)[:limit]
    )
