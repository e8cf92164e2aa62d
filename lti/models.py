"""What ties django-lti's rows (lti_tool: registrations, deployments, contexts, users, resource
links, line items) to the product: the school a platform serves, the class a course maps to, and
the resource link a conversation was launched from (docs/lti.md)."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q


class Platform(models.Model):
    """An LMS registered with the tool for one school: its django-lti registration (issuer,
    client id, the platform's URLs and deployments) and the school whose people and classes its
    launches reach. Launches never sign in or create anyone outside that school."""

    registration = models.OneToOneField("lti_tool.LtiRegistration", on_delete=models.CASCADE, related_name="platform")
    school = models.ForeignKey("accounts.School", on_delete=models.PROTECT, related_name="lti_platforms")
    created_by = models.ForeignKey("accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"LTI platform {self.registration_id} of school {self.school_id}"


class ContextClassroom(models.Model):
    """The class of the platform's school that a course (an LTI context) maps to: found by the
    course section's sourcedId (`Classroom.external_id`), else made at the first launch."""

    context = models.OneToOneField("lti_tool.LtiContext", on_delete=models.CASCADE, related_name="classroom_link")
    classroom = models.ForeignKey("accounts.Classroom", on_delete=models.CASCADE, related_name="lti_contexts")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"LTI context {self.context_id} -> class {self.classroom_id}"


class LaunchedConversation(models.Model):
    """The resource link a student's conversation was launched from: a quiz's score in that
    conversation goes back to that link's course (lti-services' grade passback). A later launch
    of the same link by the same student reuses the conversation while it is open."""

    conversation = models.OneToOneField(
        "conversations.Conversation", on_delete=models.CASCADE, related_name="lti_launch"
    )
    resource_link = models.ForeignKey(
        "lti_tool.LtiResourceLink", on_delete=models.CASCADE, related_name="launched_conversations"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"conversation {self.conversation_id} from resource link {self.resource_link_id}"


# --- LTI Advantage services: roster syncs (lti.nrps) and score submissions (lti.grades) ----------


class RosterSync(models.Model):
    """One reading of a course's members from its platform (NRPS) applied to its class: who
    asked (none: after an Instructor's launch), how it went and what it changed (`counts`:
    created, updated, ended, unchanged, skipped)."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    context = models.ForeignKey("lti_tool.LtiContext", on_delete=models.CASCADE, related_name="roster_syncs")
    classroom = models.ForeignKey("accounts.Classroom", on_delete=models.CASCADE, related_name="lti_roster_syncs")
    requested_by = models.ForeignKey(
        "accounts.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    counts = models.JSONField(default=dict, blank=True)
    detail = models.TextField(blank=True, help_text="Why the platform could not be read (status failed).")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"roster sync {self.pk} of context {self.context_id} ({self.status})"


class ScoreSubmission(models.Model):
    """A graded quiz attempt's score for the course its conversation was launched from: the
    score and its timestamp, fixed once (every try sends the same), the student's LTI `sub`, the
    line item once found or made, and how the tries went. One per (attempt, resource link)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        # Claimed by a try (`claimed_at`); a claim older than lti.grades.CLAIM_SECONDS is stale.
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    attempt = models.ForeignKey("learning.QuizAttempt", on_delete=models.CASCADE, related_name="lti_scores")
    resource_link = models.ForeignKey("lti_tool.LtiResourceLink", on_delete=models.CASCADE, related_name="+")
    line_item = models.ForeignKey(
        "lti_tool.LtiLineItem", null=True, blank=True, on_delete=models.SET_NULL, related_name="score_submissions"
    )
    user_sub = models.CharField(max_length=255, help_text="The student's LTI user id on the platform.")
    score_given = models.PositiveSmallIntegerField()
    score_maximum = models.PositiveSmallIntegerField()
    timestamp = models.DateTimeField(help_text="When the quiz was graded: the score's timestamp on every try.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    response_code = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["attempt", "resource_link"], name="lti_score_once_per_link"),
            models.CheckConstraint(condition=Q(score_given__lte=F("score_maximum")), name="lti_score_within_maximum"),
        ]
        indexes = [
            models.Index(
                fields=["status", "created_at"],
                name="lti_score_unsent",
                condition=Q(status__in=["pending", "sending"]),
            ),
        ]

    def __str__(self) -> str:
        return f"score of attempt {self.attempt_id} for link {self.resource_link_id} ({self.status})"
