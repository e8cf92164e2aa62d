"""Files a student attaches to a conversation: upload and the reads (their text is extracted by
conversations.file_extraction).

- Upload (`file_upload_conversation`, then `file_upload`): the conversation is checked first
  (404 outside the user's scope, 403 for a teacher, 409 once ended), then the file: its size
  against FILES_MAX_BYTES and its type from its content (`file_type_sniff`: magic bytes for PDF
  and images, strict UTF-8 for text), never from the client's name or content type alone. The
  bytes go to the "tutor_files" storage under a name of ours, the row is created `pending`, and
  the extraction task is enqueued after commit.
- Reads: `file_list` for the API (through `conversation_get`, the scoping primitive) and
  `files_for_prompt` for the chat turn.
"""

from __future__ import annotations

import base64
import codecs
import io
import logging
import re
import uuid
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.core.files.storage import Storage, storages
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.defaultfilters import filesizeformat
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from rest_framework import status

from conversations import pdf_text
from conversations.models import Conversation, ConversationFile
from conversations.selectors import conversation_get, require_student_owner
from core import background
from core.errors import ApplicationError, Conflict

logger = logging.getLogger(__name__)

PDF = "application/pdf"
TEXT = "text/plain"
MARKDOWN = "text/markdown"
PNG = "image/png"
JPEG = "image/jpeg"
WEBP = "image/webp"
GIF = "image/gif"

# The types this module can recognise; FILES_ALLOWED_TYPES chooses among them.
TYPE_LABELS = {
    PDF: gettext_lazy("PDF"),
    TEXT: gettext_lazy("plain text"),
    MARKDOWN: gettext_lazy("Markdown"),
    PNG: "PNG",
    JPEG: "JPEG",
    WEBP: "WebP",
    GIF: "GIF",
}
_EXTENSIONS = {
    ".pdf": PDF,
    ".txt": TEXT,
    ".text": TEXT,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".png": PNG,
    ".jpg": JPEG,
    ".jpeg": JPEG,
    ".webp": WEBP,
    ".gif": GIF,
}
_STORED_EXTENSION = {PDF: ".pdf", TEXT: ".txt", MARKDOWN: ".md", PNG: ".png", JPEG: ".jpg", WEBP: ".webp", GIF: ".gif"}
# Text files may hold tabs, line and page breaks, nothing else below 0x20 (an executable or a
# UTF-16 file has NULs, which UTF-8 decoding alone would accept).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# A PDF reader looks for its header within the first 1,024 bytes.
_PDF_HEADER_WINDOW = 1024
PAGE_BREAK = pdf_text.PAGE_BREAK


class FileTooLarge(ApplicationError):
    code = "file_too_large"


class FileTypeNotAllowed(ApplicationError):
    code = "file_type_not_allowed"


class FileEmpty(ApplicationError):
    code = "file_empty"


class FileLimitReached(ApplicationError):
    status_code = status.HTTP_409_CONFLICT
    code = "file_limit_reached"


class StorageUnavailable(Exception):
    """The storage could not be read for a moment: the extraction is tried again later."""


def file_storage() -> Storage:
    """The private storage of uploaded files (STORAGES["tutor_files"])."""
    return storages["tutor_files"]


# --- Upload -------------------------------------------------------------------------------------


class OversizedUpload(UploadedFile):
    """Stands for a file dropped while it streamed in, past FILES_MAX_BYTES: a name and a size,
    no content. `file_upload` answers it with `file_too_large`."""

    def __init__(self, name: str, content_type: str, size: int) -> None:
        super().__init__(file=io.BytesIO(), name=name, content_type=content_type, size=size)


class FileSizeLimitHandler(FileUploadHandler):
    """An upload handler, first in the list: passes each chunk on to Django's handlers (memory up
    to FILE_UPLOAD_MAX_MEMORY_SIZE, then a temporary file) until the file passes FILES_MAX_BYTES;
    from there it drops the rest and gives an `OversizedUpload`, so that an oversized file is
    never kept whole, in memory or on disk, and is answered with the 400 that names the limit."""

    def __init__(self, request: HttpRequest | None = None) -> None:
        super().__init__(request)
        self.limit = settings.FILES_MAX_BYTES
        self.over = False

    def new_file(self, *args: Any, **kwargs: Any) -> None:
        super().new_file(*args, **kwargs)
        self.over = False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        if self.over or start + len(raw_data) > self.limit:
            self.over = True
            return None  # the next handlers receive nothing more of this file
        return raw_data

    def file_complete(self, file_size: int) -> UploadedFile | None:
        if not self.over:
            return None  # the next handler (memory or temporary file) gives the file
        for handler in getattr(self.request, "upload_handlers", []):
            partial_file = getattr(handler, "file", None)
            if handler is not self and partial_file is not None:
                partial_file.close()  # a temporary file is deleted on close
        return OversizedUpload(name=self.file_name or "", content_type=self.content_type or "", size=file_size)


def size_label(size: int) -> str:
    """`10 MB` (`10 Mo` in French), as people read a limit."""
    return str(filesizeformat(size)).replace("\xa0", " ").replace(".0 ", " ").replace(",0 ", " ")


def allowed_types_label() -> str:
    return ", ".join(str(TYPE_LABELS.get(t, t)) for t in settings.FILES_ALLOWED_TYPES)


def _type_not_allowed(message: str, detected: str | None) -> FileTypeNotAllowed:
    return FileTypeNotAllowed(
        message, details={"allowed_types": list(settings.FILES_ALLOWED_TYPES), "detected_type": detected}
    )


def _sniff_binary(head: bytes) -> str | None:
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return PNG
    if head.startswith(b"\xff\xd8\xff"):
        return JPEG
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return GIF
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return WEBP
    if b"%PDF-" in head[:_PDF_HEADER_WINDOW]:
        return PDF
    return None


def _is_text(upload: UploadedFile) -> bool:
    """Whether the whole file is UTF-8 text, read chunk by chunk (never whole in memory)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        for chunk in upload.chunks():
            if _CONTROL.search(decoder.decode(chunk)):
                return False
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def file_type_sniff(*, upload: UploadedFile) -> str | None:
    """The file's type from its content: PDF and images by their magic bytes, text when the
    whole file is UTF-8 without control characters (Markdown when named .md or .markdown, or
    sent as text/markdown); None for anything else."""
    upload.seek(0)
    head = upload.read(_PDF_HEADER_WINDOW)
    upload.seek(0)
    found = _sniff_binary(head)
    if found is not None:
        return found
    if not _is_text(upload):
        return None
    extension = PurePath(upload.name or "").suffix.lower()
    if _EXTENSIONS.get(extension) == MARKDOWN or (upload.content_type or "").startswith(MARKDOWN):
        return MARKDOWN
    return TEXT


def file_type_check(*, upload: UploadedFile) -> str:
    """The type the file will be stored as, or a 400: larger than FILES_MAX_BYTES, empty, of a
    type FILES_ALLOWED_TYPES leaves out, or named as one type (its extension) holding another."""
    limit = settings.FILES_MAX_BYTES
    size = upload.size or 0
    if size > limit:
        raise FileTooLarge(
            _("The file is larger than the limit of %(limit)s (%(bytes)s bytes).")
            % {"limit": size_label(limit), "bytes": limit},
            details={"limit_bytes": limit, "size_bytes": size},
        )
    if size == 0:
        raise FileEmpty(_("The file is empty."))
    detected = file_type_sniff(upload=upload)
    allowed = allowed_types_label()
    if detected is None or detected not in settings.FILES_ALLOWED_TYPES:
        raise _type_not_allowed(
            _("This type of file is not allowed. Allowed types: %(types)s.") % {"types": allowed}, detected
        )
    claimed = _EXTENSIONS.get(PurePath(upload.name or "").suffix.lower())
    same_family = claimed == detected or {claimed, detected} <= {TEXT, MARKDOWN}
    if claimed is not None and not same_family:
        raise _type_not_allowed(
            _("The file's name says %(claimed)s, but its content is not. Allowed types: %(types)s.")
            % {"claimed": TYPE_LABELS[claimed], "types": allowed},
            detected,
        )
    return detected


def _require_open(conversation: Conversation) -> None:
    if conversation.is_ended:
        raise Conflict(_("This conversation has ended; start a new one."))


def _require_room(conversation: Conversation) -> None:
    limit = settings.FILES_MAX_PER_CONVERSATION
    if ConversationFile.objects.filter(conversation=conversation).count() >= limit:
        raise FileLimitReached(
            _("A conversation can hold at most %(limit)s files.") % {"limit": limit}, details={"limit": limit}
        )


def file_upload_conversation(*, user: Any, conversation_id: Any) -> Conversation:
    """The conversation `user` may attach a file to: NotFound outside their scope, Forbidden
    unless they are its student, Conflict once it has ended or holds FILES_MAX_PER_CONVERSATION
    files. Checked before the body is read, so that an intruder learns nothing from it."""
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    require_student_owner(user=user, conversation=conversation)
    _require_open(conversation)
    _require_room(conversation)
    return conversation


def file_upload(*, conversation: Conversation, upload: UploadedFile | None) -> ConversationFile:
    """Store a file in a conversation obtained through `file_upload_conversation`, `pending`, and
    enqueue its extraction once committed.

    The bytes are written to the storage before the transaction (an upload to S3 must not hold
    the conversation's lock); the conversation is then locked and checked again (ended, full),
    and a row that cannot be committed deletes the bytes it named.
    """
    if upload is None:
        raise ApplicationError(
            _("No file was submitted: send it as the multipart field `file`."),
            details={"file": [_("No file was submitted: send it as the multipart field `file`.")]},
        )
    content_type = file_type_check(upload=upload)
    storage = file_storage()
    wanted = f"conversations/{conversation.pk}/{uuid.uuid4().hex}{_STORED_EXTENSION.get(content_type, '')}"
    storage_name = storage.save(wanted, upload)
    try:
        with transaction.atomic():
            locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
            _require_open(locked)
            _require_room(locked)
            now = timezone.now()
            row = ConversationFile.objects.create(
                conversation=locked,
                name=(upload.name or "file")[:255],
                content_type=content_type,
                size=upload.size or 0,
                storage_name=storage_name,
                extract_requested_at=now,
            )
            background.enqueue("conversations.tasks.file_extract", row.pk)
    except BaseException:
        _delete_quietly(storage, storage_name)
        raise
    logger.info("file %s stored: %s, %s bytes, conversation %s", row.pk, content_type, row.size, conversation.pk)
    return row


def _delete_quietly(storage: Storage, name: str) -> None:
    try:
        storage.delete(name)
    except Exception:
        logger.exception("could not delete the orphan upload %s", name)


# --- Reads ------------------------------------------------------------------------------------------


def file_list(*, user: Any, conversation_id: Any) -> QuerySet[ConversationFile]:
    """The files of a conversation `user` may read (NotFound otherwise), oldest first."""
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    return (
        ConversationFile.objects.filter(conversation=conversation)
        .select_related("conversation")
        .order_by("created_at", "id")
    )


@dataclass(frozen=True)
class PromptFile:
    """A file as the chat turn puts it in the prompt.

    `text` is the extracted text (at most FILES_MAX_TEXT_CHARS; a PDF's pages separated by
    "\\f", see `page_texts`), empty for images. `image_storage_name` is set for images only: the
    name in `file_storage()`, read with `image_data_url` when LLM_SUPPORTS_IMAGES is on.
    `status` and `reason` matter only with `include_unready=True`.
    """

    id: int
    name: str
    content_type: str
    pages: int | None
    text: str
    text_truncated: bool
    image_storage_name: str | None
    status: str = ConversationFile.Status.READY
    reason: str = ""

    @property
    def is_image(self) -> bool:
        return self.content_type.startswith("image/")

    @property
    def page_texts(self) -> list[str]:
        return self.text.split(PAGE_BREAK)


def files_for_prompt(*, conversation_id: int, include_unready: bool = False) -> list[PromptFile]:
    """The conversation's ready files, oldest first, with their text and, for images, their
    storage name: one query. The conversation must have been obtained through the scoping
    primitive (the chat turn's `conversation_get`); this reads no one else's rows by itself.
    `include_unready` adds the pending and unreadable ones (no text), so the tutor can say so."""
    qs = ConversationFile.objects.filter(conversation_id=conversation_id).order_by("created_at", "id")
    if not include_unready:
        qs = qs.filter(status=ConversationFile.Status.READY)
    return [
        PromptFile(
            id=row.pk,
            name=row.name,
            content_type=row.content_type,
            pages=row.pages,
            text=row.text if row.status == ConversationFile.Status.READY else "",
            text_truncated=row.text_truncated,
            image_storage_name=row.storage_name if row.is_image else None,
            status=row.status,
            reason=row.reason,
        )
        for row in qs
    ]


def image_data_url(file: PromptFile) -> str:
    """An image as a `data:` URL for an OpenAI-style image part (reads the storage)."""
    if file.image_storage_name is None:
        raise ValueError(f"file {file.id} is not an image")
    with file_storage().open(file.image_storage_name, "rb") as handle:
        data = handle.read()
    return f"data:{file.content_type};base64,{base64.b64encode(data).decode('ascii')}"
