from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models

# What a student's (and their class's) chat budgets count (llm.costs): the calls their chat and
# questions make. The work done afterwards for their memory and learning (summaries, extraction,
# consolidation, grading) is metered but not counted, so that it never refuses a message.
CHAT_PURPOSES = ("chat", "compression", "embedding", "safety", "ask")


class LLMUsage(models.Model):
    """One row per model call, successful or not: what it was for, what it cost, how long it took."""

    class Purpose(models.TextChoices):
        CHAT = "chat", "Chat reply"
        SUMMARY = "summary", "Conversation summary"
        COMPRESSION = "compression", "Context compression"
        GRADING = "grading", "Answer grading"
        EXTRACTION = "extraction", "Fact extraction"
        CONSOLIDATION = "consolidation", "Memory consolidation"
        EMBEDDING = "embedding", "Embedding"
        SAFETY = "safety", "Safety screening"
        ASK = "ask", "Question about a student"

    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    model = models.CharField(max_length=200)
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_usage"
    )
    # A question (Purpose.ASK) is metered to whoever asked it: a teacher's or staff member's
    # (student empty, so no student's budget pays for it), or a student's own (both the student).
    asker = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_asks"
    )
    # The class a question was about (ASK about a class).
    classroom = models.ForeignKey(
        "accounts.Classroom", null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_usage"
    )
    conversation_id = models.BigIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    # USD, priced from the token counts by llm.costs when the row is written (the prices of that day).
    cost = models.DecimalField(max_digits=14, decimal_places=8, default=Decimal(0))
    latency_ms = models.PositiveIntegerField(default=0)
    ok = models.BooleanField(default=True)
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # A student's chat spend since a day or month began (the budget check, llm.costs), read
            # from the index alone: cost is its last column, and background work is left out.
            models.Index(
                fields=["student", "created_at", "cost"],
                name="llmusage_student_chat_spend",
                condition=models.Q(purpose__in=CHAT_PURPOSES),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.purpose} {self.model} {self.prompt_tokens}+{self.completion_tokens}"


class BudgetHold(models.Model):
    """Spend reserved for a chat turn before its model calls (llm.costs.budget_hold): counted in
    every budget that covers its student as if spent, until the turn's usage is stored and the
    hold released (llm.costs.budget_release) or, left by a turn that never finished (a process
    stopped, a failure before the model), until it expires."""

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    amount = models.DecimalField(max_digits=14, decimal_places=8)
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["student", "expires_at"], name="budgethold_student_live")]

    def __str__(self) -> str:
        return f"hold {self.amount} for {self.student_id} until {self.expires_at}"
