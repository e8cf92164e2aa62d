"""The export document, `tutor-export/1` (docs/privacy.md): one serializer per kind of item.

The export is streamed (privacy.export): each item is serialised here, one chunk of rows at a
time, and written with json.dumps; `ExportDocument` describes the whole document for the OpenAPI
schema and is never instantiated on a student's data.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import User
from conversations.models import ContextCheckpoint, Conversation, ConversationFile, Message, ReplyMemory
from insights.models import AskLog
from insights.serializers import AskAnswerOutput
from learning.models import ReviewCard, SkillMastery, Task
from learning.serializers import QuizOutput
from memory.models import AIMemory, CardChange, StudentCard, SupersessionReview
from privacy.models import Erasure
from safety.models import Flag
from safety.serializers import SAFETY_FLAG_FIELDS, DeliveryOutput, FlagActionOutput

EXPORT_FORMAT = "tutor-export/1"


class ExportClassroom(serializers.Serializer[None]):
    id = serializers.IntegerField()
    name = serializers.CharField()
    teacher = serializers.IntegerField(help_text="The teacher's user id.")
    enrolled_at = serializers.DateTimeField()


class ExportStudent(serializers.ModelSerializer[User]):
    """The profile: no password, no token."""

    email = serializers.CharField(read_only=True, help_text="Empty when none was given.")
    classrooms = serializers.SerializerMethodField()

    class Meta:
        model = User
        fields = [
            "id",
            "username",
            "first_name",
            "last_name",
            "email",
            "role",
            "language",
            "is_active",
            "date_joined",
            "last_login",
            "classrooms",
        ]
        read_only_fields = fields

    @extend_schema_field(ExportClassroom(many=True))
    def get_classrooms(self, student: User) -> list[dict[str, Any]]:
        rows = student.enrollments.select_related("classroom").order_by("created_at", "id")
        return [
            {
                "id": e.classroom_id,
                "name": e.classroom.name,
                "teacher": e.classroom.teacher_id,
                "enrolled_at": serializers.DateTimeField().to_representation(e.created_at),
            }
            for e in rows
        ]


class ExportMessage(serializers.ModelSerializer[Message]):
    class Meta:
        model = Message
        fields = [
            "id",
            "seq",
            "role",
            "content",
            "client_message_id",
            "reply_to",
            "token_count",
            "prompt_tokens",
            "completion_tokens",
            "model",
            "created_at",
        ]
        read_only_fields = fields


class ExportFile(serializers.ModelSerializer[ConversationFile]):
    """A file's metadata only: its bytes and extracted text stay out of the export."""

    class Meta:
        model = ConversationFile
        fields = ["id", "name", "content_type", "size", "status", "created_at"]
        read_only_fields = fields


class ExportCheckpoint(serializers.ModelSerializer[ContextCheckpoint]):
    """A summary of the conversation's older messages written by context compression."""

    class Meta:
        model = ContextCheckpoint
        fields = ["id", "covers_through_seq", "covered_messages", "summary", "created_at"]
        read_only_fields = fields


class ExportConversationHead(serializers.ModelSerializer[Conversation]):
    """A conversation's own fields; the export writes its messages, files and checkpoints after."""

    class Meta:
        model = Conversation
        fields = [
            "id",
            "subject",
            "status",
            "created_at",
            "last_activity_at",
            "ended_at",
            "message_count",
            "summary_status",
        ]
        read_only_fields = fields


class ExportConversation(ExportConversationHead):
    """For the schema: a conversation as the document holds it."""

    messages = ExportMessage(many=True, read_only=True, help_text="Oldest first.")
    files = ExportFile(many=True, read_only=True)
    checkpoints = ExportCheckpoint(many=True, read_only=True)

    class Meta(ExportConversationHead.Meta):
        fields = [*ExportConversationHead.Meta.fields, "messages", "files", "checkpoints"]
        read_only_fields = fields


def _visible_ids(ids: list[int], context: dict[str, Any]) -> list[int]:
    hidden: set[int] = context.get("hidden", set())
    return [pk for pk in ids if pk not in hidden]


class ExportMemory(serializers.ModelSerializer[AIMemory]):
    """Every field of a memory with its provenance and its supersession chain both ways.

    The context gives `supersedes` ({memory id: [ids it replaced]}), `links` ({id: [ids]}) and
    `hidden` (the ids of teacher-only notes left out of a student's own export, which no id here
    names either)."""

    tier = serializers.ChoiceField(choices=AIMemory.Tier.choices, read_only=True)
    evidence = serializers.SerializerMethodField(help_text="Ids of the memories it was drawn from.")
    superseded_by = serializers.SerializerMethodField(help_text="The newer memory that replaced this one.")
    supersedes = serializers.SerializerMethodField(help_text="Ids of the memories this one replaced.")
    links = serializers.SerializerMethodField()

    class Meta:
        model = AIMemory
        fields = [
            "id",
            "kind",
            "tier",
            "title",
            "content",
            "status",
            "visibility",
            "archived_reason",
            "source",
            "source_ref",
            "source_conversation",
            "author",
            "evidence",
            "confidence",
            "needs_review",
            "model",
            "superseded_by",
            "supersedes",
            "links",
            "successes",
            "failures",
            "recall_count",
            "last_recalled_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_evidence(self, memory: AIMemory) -> list[int]:
        ids = [int(pk) for pk in memory.evidence if isinstance(pk, int) and not isinstance(pk, bool)]
        return _visible_ids(ids, self.context)

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_superseded_by(self, memory: AIMemory) -> int | None:
        pk = memory.superseded_by_id
        return pk if pk is not None and _visible_ids([pk], self.context) else None

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_supersedes(self, memory: AIMemory) -> list[int]:
        return _visible_ids(self.context.get("supersedes", {}).get(memory.pk, []), self.context)

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_links(self, memory: AIMemory) -> list[int]:
        return _visible_ids(self.context.get("links", {}).get(memory.pk, []), self.context)


class ExportSupersessionReview(serializers.ModelSerializer[SupersessionReview]):
    # Plain text here: the enum's schema name is the memory app's to choose (its review API).
    status = serializers.CharField(read_only=True, help_text="open, applied or dismissed.")

    class Meta:
        model = SupersessionReview
        fields = [
            "id",
            "older",
            "newer",
            "confidence",
            "reason",
            "model",
            "status",
            "decided_by",
            "decided_at",
            "created_at",
        ]
        read_only_fields = fields


class ExportCard(serializers.ModelSerializer[StudentCard]):
    """The student card (docs/card.md) as the tutor's prompt shows it; empty, `updated_at`
    null, if none was written."""

    updated_at = serializers.DateTimeField(allow_null=True, read_only=True)
    goals = serializers.ListField(child=serializers.CharField(), read_only=True)
    accommodations = serializers.ListField(child=serializers.CharField(), read_only=True)
    interests = serializers.ListField(child=serializers.CharField(), read_only=True)
    student_editable = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = StudentCard
        fields = [
            "goals",
            "accommodations",
            "interests",
            "level",
            "register",
            "student_editable",
            "token_count",
            "updated_at",
        ]
        read_only_fields = fields


class ExportCardChange(serializers.ModelSerializer[CardChange]):
    """One change of the card's log. `memory` is the fact that proposed it (null in the
    student's own export if it is a teacher-only note since)."""

    memory = serializers.SerializerMethodField()

    class Meta:
        model = CardChange
        fields = [
            "id",
            "field",
            "op",
            "value",
            "status",
            "source",
            "actor",
            "confidence",
            "memory",
            "reason",
            "created_at",
            "decided_by",
            "decided_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_memory(self, change: CardChange) -> int | None:
        pk = change.memory_id
        return None if pk is None or pk in self.context.get("hidden", set()) else pk


class ExportSkill(serializers.ModelSerializer[SkillMastery]):
    history = serializers.ListField(child=serializers.FloatField(), read_only=True)

    class Meta:
        model = SkillMastery
        fields = [
            "id",
            "skill",
            "skill_key",
            "attempts",
            "correct",
            "estimate",
            "estimated_at",
            "trend",
            "history",
            "latest_quiz",
            "latest_correct",
            "latest_total",
            "updated_at",
        ]
        read_only_fields = fields


class ExportReviewCard(serializers.ModelSerializer[ReviewCard]):
    """A skill's review schedule (FSRS's card, learning.reviews): `skill` is its mastery row's id."""

    skill: serializers.PrimaryKeyRelatedField[SkillMastery] = serializers.PrimaryKeyRelatedField(
        source="mastery", read_only=True
    )

    class Meta:
        model = ReviewCard
        fields = [
            "id",
            "skill",
            "skill_key",
            "state",
            "step",
            "stability",
            "difficulty",
            "due",
            "last_review",
            "reviews",
            "last_quiz",
            "updated_at",
        ]
        read_only_fields = fields


class ExportTask(serializers.ModelSerializer[Task]):
    """A task set to the student or to one of their classes, with the student's own status
    (`todo` and nulls when they never set one)."""

    progress = serializers.SerializerMethodField()

    class Meta:
        model = Task
        fields = ["id", "title", "instructions", "subject", "due_at", "classroom", "teacher", "created_at", "progress"]
        read_only_fields = fields

    @extend_schema_field(
        serializers.DictField(help_text="{status, source, reason, updated_at}: the student's status on the task.")
    )
    def get_progress(self, task: Task) -> dict[str, Any]:
        row = self.context.get("statuses", {}).get(task.pk)
        when = serializers.DateTimeField().to_representation(row.updated_at) if row else None
        return {
            "status": row.status if row else "todo",
            "source": row.source if row else None,
            "reason": row.reason if row else "",
            "updated_at": when,
        }


class ExportLearning(serializers.Serializer[None]):
    quizzes = QuizOutput(many=True, read_only=True, help_text="With questions and answers (QuizOutput).")
    skills = ExportSkill(many=True, read_only=True)
    reviews = ExportReviewCard(many=True, read_only=True, help_text="The review schedule per skill.")
    tasks = ExportTask(many=True, read_only=True)


class ExportReplyMemory(serializers.ModelSerializer[ReplyMemory]):
    """One memory that was in the prompt of one tutor reply (the access log)."""

    signals = serializers.DictField(read_only=True)

    class Meta:
        model = ReplyMemory
        fields = ["message", "memory", "rank", "score", "signals"]
        read_only_fields = fields


class ExportFlag(serializers.ModelSerializer[Flag]):
    """A safety flag about the student, with its whole log and its alerts. Only in an export by
    staff or the student's teacher: a student never sees a flag, in their own export neither."""

    categories = serializers.ListField(child=serializers.CharField(), read_only=True)
    scores = serializers.DictField(read_only=True)
    cited_messages: serializers.PrimaryKeyRelatedField[Any] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )
    cited_memories: serializers.PrimaryKeyRelatedField[Any] = serializers.PrimaryKeyRelatedField(
        many=True, read_only=True
    )
    actions = FlagActionOutput(many=True, read_only=True, help_text="The log, oldest first.")
    deliveries = DeliveryOutput(many=True, read_only=True, help_text="The alerts, oldest first.")

    class Meta:
        model = Flag
        fields = [
            *SAFETY_FLAG_FIELDS,
            "scores",
            "original_text",
            "cited_messages",
            "cited_memories",
            "actions",
            "deliveries",
        ]
        read_only_fields = fields


class ExportAsk(AskAnswerOutput):
    """A question asked about the student and its checked answer (insights), with who asked and
    the memories its prompt showed, in prompt order (its access log)."""

    memories = serializers.SerializerMethodField()

    class Meta(AskAnswerOutput.Meta):
        model = AskLog
        fields = [*AskAnswerOutput.Meta.fields, "asker", "model", "memories"]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_memories(self, log: AskLog) -> list[int]:
        return [access.memory_id for access in log.memory_accesses.all()]


class ExportDocument(serializers.Serializer[None]):
    """The whole export (docs/privacy.md), streamed as one JSON document."""

    format = serializers.ChoiceField(choices=[EXPORT_FORMAT], help_text="The document's format and version.")
    exported_at = serializers.DateTimeField()
    student = ExportStudent()
    conversations = ExportConversation(many=True, help_text="Oldest first.")
    memories = ExportMemory(many=True, help_text="All statuses, oldest first.")
    supersession_reviews = ExportSupersessionReview(many=True)
    card = ExportCard(help_text="The student card (empty if none was written).")
    card_changes = ExportCardChange(
        many=True,
        help_text="The card's log, oldest first: every change and proposal; in the student's own export, "
        "the changes applied.",
    )
    learning = ExportLearning()
    reply_memories = ExportReplyMemory(many=True, help_text="The access log of the student's conversations.")
    safety_flags = ExportFlag(
        many=True,
        required=False,
        help_text="The safety flags about the student, oldest first: only in an export by staff or the "
        "student's teacher, never in the student's own.",
    )
    asks = ExportAsk(
        many=True,
        help_text="The questions asked about the student and their answers, oldest first: all of them in an "
        "export by staff or the student's teacher, the student's own questions in theirs.",
    )


class ErasureOutput(serializers.ModelSerializer[Erasure]):
    """The audit record of an erasure: no content, nothing that names the student."""

    counts = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text='{"deleted": {"app.Model": rows}, "anonymised": {"llm.LLMUsage": rows}}',
    )

    class Meta:
        model = Erasure
        fields = ["reference", "erased_at", "erased_by", "via", "reason", "counts", "files_pending", "files_failed"]
        read_only_fields = fields
