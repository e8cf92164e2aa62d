from __future__ import annotations

from django.conf import settings
from django.db import models


class LLMUsage(models.Model):
    """One row per model call, successful or not: what it was for, what it cost, how long it took."""

    class Purpose(models.TextChoices):
        CHAT = "chat", "Chat reply"
        SUMMARY = "summary", "Conversation summary"
        COMPRESSION = "compression", "Context compression"

    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    model = models.CharField(max_length=200)
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_usage"
    )
    conversation_id = models.BigIntegerField(null=True, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    ok = models.BooleanField(default=True)
    error = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["student", "created_at"], name="llmusage_student_created")]

    def __str__(self) -> str:
        return f"{self.purpose} {self.model} {self.prompt_tokens}+{self.completion_tokens}"
