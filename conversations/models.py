from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from accounts.selectors import students_visible_to


class ConversationQuerySet(models.QuerySet["Conversation"]):
    def visible_to(self, user: Any) -> ConversationQuerySet:
        """The scoping primitive for conversations: see accounts.selectors.students_visible_to."""
        return self.filter(student__in=students_visible_to(user).values("pk"))


class Conversation(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        ENDED = "ended", "Ended"

    class SummaryStatus(models.TextChoices):
        NOT_REQUESTED = "not_requested", "Not requested"
        PENDING = "pending", "Pending"
        DONE = "done", "Done"
        SKIPPED = "skipped", "Skipped (no student message)"
        FAILED = "failed", "Failed"
        # The model could not write one: a fallback memory needing review was stored instead.
        FALLBACK = "fallback", "Fallback stored"

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="conversations")
    subject = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(db_index=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    # Running totals kept on write so that a turn never re-reads or re-tokenises the history.
    message_count = models.PositiveIntegerField(default=0)
    history_tokens = models.PositiveBigIntegerField(default=0)

    summary_status = models.CharField(max_length=16, choices=SummaryStatus.choices, default=SummaryStatus.NOT_REQUESTED)
    summary_attempts = models.PositiveIntegerField(default=0)
    summary_error = models.CharField(max_length=300, blank=True)
    summary_requested_at = models.DateTimeField(null=True, blank=True)
    # "host:pid" of the worker process running the summary's latest attempt (conversations.summaries):
    # a worker starting on that host recovers the attempts of a process that died.
    summary_owner = models.CharField(max_length=100, blank=True)

    # The turn in progress, if any (conversations.turn.claim): a lease that a crashed process cannot
    # hold for ever. `turn_message` is the student message being answered.
    turn_token = models.CharField(max_length=32, blank=True)
    turn_expires_at = models.DateTimeField(null=True, blank=True)
    turn_message = models.ForeignKey(
        "Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="+", db_constraint=False
    )

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["student", "-created_at"], name="conversation_student_recent"),
            models.Index(fields=["status", "last_activity_at"], name="conversation_idle"),
            models.Index(fields=["summary_status", "summary_requested_at"], name="conversation_summary"),
        ]

    def __str__(self) -> str:
        return f"Conversation {self.pk} of {self.student_id}"

    @property
    def is_ended(self) -> bool:
        return self.status == self.Status.ENDED

    def turn_in_progress(self, now: datetime) -> bool:
        return bool(self.turn_token) and self.turn_expires_at is not None and self.turn_expires_at > now


class Message(models.Model):
    class Role(models.TextChoices):
        STUDENT = "student", "Student"
        TUTOR = "tutor", "Tutor"

    conversation = models.ForeignKey(Conversation, on_delete=models.PROTECT, related_name="messages")
    # Position in the conversation, 1-based, assigned under the conversation's lock.
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField()
    client_message_id = models.CharField(max_length=100, null=True, blank=True)
    reply_to = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT, related_name="reply")
    # Tokens of `content`, counted once when stored.
    token_count = models.PositiveIntegerField(default=0)
    # For tutor replies: what the model call(s) of that turn consumed.
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=200, blank=True)
    # For tutor replies: the events its turn's tools sent the client that a replay of the turn
    # sends again (llm.tools.ToolEvent.stored), in order: [{"event": name, "data": {...}}].
    tool_events = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "seq"], name="message_unique_seq"),
            models.UniqueConstraint(
                fields=["conversation", "client_message_id"],
                condition=Q(client_message_id__isnull=False),
                name="message_unique_client_id",
            ),
            models.CheckConstraint(
                condition=Q(role="tutor") | Q(client_message_id__isnull=False),
                name="message_student_has_client_id",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.role} #{self.seq} in {self.conversation_id}"


class ContextCheckpoint(models.Model):
    """A summary standing for messages 1..covers_through_seq of a conversation in the prompt.

    Written by context compression; the messages themselves stay in the database and the API.
    """

    conversation = models.ForeignKey(Conversation, on_delete=models.PROTECT, related_name="checkpoints")
    covers_through_seq = models.PositiveIntegerField()
    covered_messages = models.PositiveIntegerField()
    covered_tokens = models.PositiveBigIntegerField()
    summary = models.TextField()
    summary_tokens = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "-covers_through_seq"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "covers_through_seq"], name="checkpoint_unique_cover"),
        ]

    def __str__(self) -> str:
        return f"Checkpoint of {self.conversation_id} through #{self.covers_through_seq}"


class ConversationFile(models.Model):
    """A file a student attached to a conversation (conversations.files).

    The bytes live in the "tutor_files" storage under `storage_name`, never served by URL; the
    row holds what the API shows and the text extracted for the prompt. Read through
    `conversations.files`, whose selectors scope by the conversation (Conversation.objects.visible_to).
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending extraction"
        READY = "ready", "Ready"
        UNREADABLE = "unreadable", "Unreadable"

    class Reason(models.TextChoices):
        MALFORMED = "malformed", "Malformed file"
        ENCRYPTED = "encrypted", "Encrypted PDF"
        NO_TEXT = "no_text", "No text found"
        MISSING = "missing", "Missing from storage"
        EXTRACTION_FAILED = "extraction_failed", "Extraction failed too many times"
        TOO_LARGE = "too_large", "Expands past the size or memory limit"
        TOO_SLOW = "too_slow", "Took longer than the time limit to read"

    conversation = models.ForeignKey(Conversation, on_delete=models.PROTECT, related_name="files")
    # The name the client gave, for people only: the storage name never derives from it.
    name = models.CharField(max_length=255)
    # Found from the content on upload (conversations.files.file_type_sniff), not the client's.
    content_type = models.CharField(max_length=100)
    size = models.PositiveBigIntegerField()
    storage_name = models.CharField(max_length=500, unique=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    reason = models.CharField(max_length=32, choices=Reason.choices, blank=True)
    pages = models.PositiveIntegerField(null=True, blank=True)
    # Extracted text, at most FILES_MAX_TEXT_CHARS; a PDF's pages are separated by "\f".
    text = models.TextField(blank=True)
    text_truncated = models.BooleanField(default=False)
    # Extraction tries begun (a cap keeps a file that kills its worker from coming back for
    # ever), and when the latest was requested or begun (the sweep re-enqueues stale ones).
    extract_attempts = models.PositiveIntegerField(default=0)
    extract_requested_at = models.DateTimeField()
    extracted_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["conversation", "created_at", "id"]
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="file_conversation_recent"),
            models.Index(fields=["status", "extract_requested_at"], name="file_extract_due"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "ready", "unreadable"]), name="file_status_valid"
            ),
            # An unreadable file always says why; a pending or ready one has no reason.
            models.CheckConstraint(
                condition=(Q(status="unreadable") & ~Q(reason="")) | (~Q(status="unreadable") & Q(reason="")),
                name="file_reason_iff_unreadable",
            ),
        ]

    def __str__(self) -> str:
        return f"File {self.pk} ({self.content_type}) in {self.conversation_id}"

    @property
    def is_image(self) -> bool:
        return self.content_type.startswith("image/")


class ReplyMemory(models.Model):
    """The access log: one memory that was in the prompt of one tutor reply ("what the tutor
    knew when it said this").

    Appended in the transaction that stores the reply (conversations.turn.finish.turn_finish), never
    updated. `rank` is the memory's place in the block; `signals` says why it was there:
    `latest` (among the newest memories), `tier` (a fact or an approach, shown first) and, when
    recall chose it, its fused `score` and the `lexical`/`semantic` flags of the lists that found
    it. At most MEMORY_LOAD_COUNT + MEMORY_RELEVANT_COUNT + MEMORY_TIER_COUNT rows per reply.
    """

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="memory_accesses")
    memory = models.ForeignKey("memory.AIMemory", on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    score = models.FloatField(null=True, blank=True)
    signals = models.JSONField(default=dict)

    class Meta:
        ordering = ["message", "rank"]
        constraints = [models.UniqueConstraint(fields=["message", "memory"], name="reply_memory_once")]

    def __str__(self) -> str:
        return f"message {self.message_id}: memory {self.memory_id} (#{self.rank})"
