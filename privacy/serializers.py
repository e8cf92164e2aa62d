"""The export document, `tutor-export/1` (docs/privacy.md), and the erasure's audit record.

Each kind of item is serialised by its own app's export serializer (accounts, conversations,
memory, learning, safety, insights), the one its API builds on where they show the same thing;
the export (privacy.export) writes them one chunk of rows at a time with json.dumps.
`ExportDocument` describes the whole document for the OpenAPI schema and is never instantiated on
a student's data.
"""

from __future__ import annotations

from rest_framework import serializers

from accounts.serializers import ExportStudent
from conversations.serializers import ExportConversation, ExportReplyMemory
from insights.serializers import ExportAsk
from learning.serializers import ExportLearning
from memory.serializers import ExportCard, ExportCardChange, ExportMemory, ExportSupersessionReview
from privacy.access_log import AccessEntryOutput
from privacy.models import ConsentChange, Erasure
from safety.serializers import ExportFlag

EXPORT_FORMAT = "tutor-export/1"


class ConsentChangeOutput(serializers.ModelSerializer[ConsentChange]):
    """One change of a student's consent to memory: the record is append-only."""

    class Meta:
        model = ConsentChange
        fields = ["id", "memory_consent", "changed_by", "changed_at", "reason", "archived"]
        read_only_fields = fields


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
    consent_changes = ConsentChangeOutput(
        many=True, help_text="The changes of the student's consent to memory, oldest first."
    )
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
    access_log = AccessEntryOutput(
        many=True,
        help_text="Who read the student's records, oldest first (docs/privacy.md#access-log): this export's "
        "own reading first recorded, unless the student exports themself.",
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
