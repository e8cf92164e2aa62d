"""Questions about a student or a class, and the answers the model gave, with what it was shown.

An `AskLog` is written once, when the answer is complete and checked (insights.services), and
never changed. `AskMemory` is its access log: the memories the prompt showed, in prompt order,
as conversations.ReplyMemory is for a tutor reply. Both are a student's data: the export holds
them and an erasure deletes them (privacy).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class AskLog(models.Model):
    """One question and its checked answer, about one student (`student`) or one class
    (`classroom`): exactly one of the two.

    `subjects` are the students whose evidence the prompt showed (the student asked about, or a
    class's shortlist): an erasure finds through them every answer that holds a student's data.
    `claims`, `citations`, `dropped` and `students` are the checked answer (insights.citations),
    as the API shows them.
    """

    asker = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="asks_about"
    )
    classroom = models.ForeignKey(
        "accounts.Classroom", null=True, blank=True, on_delete=models.CASCADE, related_name="asks"
    )
    subjects = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    question = models.TextField()
    answer = models.TextField()
    language = models.CharField(max_length=8)
    claims = models.JSONField(default=list, blank=True)
    citations = models.JSONField(default=list, blank=True)
    dropped = models.JSONField(default=list, blank=True)
    students = models.JSONField(default=list, blank=True)
    insufficient = models.BooleanField(default=False)
    # How many evidence items the prompt showed, and the model that answered ("" when no model
    # was asked: no evidence at all).
    evidence_count = models.PositiveIntegerField(default=0)
    model = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["student", "-created_at"], name="asklog_student_recent"),
            models.Index(fields=["classroom", "-created_at"], name="asklog_classroom_recent"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(student__isnull=False, classroom__isnull=True)
                | Q(student__isnull=True, classroom__isnull=False),
                name="asklog_one_target",
            ),
        ]

    def __str__(self) -> str:
        target = f"student {self.student_id}" if self.student_id else f"classroom {self.classroom_id}"
        return f"Ask {self.pk} about {target}"


class AskMemory(models.Model):
    """The access log of an answer: one memory its prompt showed. `rank` is its place in the
    evidence; `signals` says why it was there (`recall` with its `score`, `latest`, `tier`) and
    whether the answer `cited` it. Written with the AskLog, never updated."""

    ask = models.ForeignKey(AskLog, on_delete=models.CASCADE, related_name="memory_accesses")
    memory = models.ForeignKey("memory.AIMemory", on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    signals = models.JSONField(default=dict)

    class Meta:
        ordering = ["ask", "rank"]
        constraints = [models.UniqueConstraint(fields=["ask", "memory"], name="ask_memory_once")]

    def __str__(self) -> str:
        return f"ask {self.ask_id}: memory {self.memory_id} (#{self.rank})"
