"""What ties django-lti's rows (lti_tool: registrations, deployments, contexts, users, resource
links, line items) to the product: the school a platform serves, the class a course maps to, and
the resource link a conversation was launched from (docs/lti.md)."""

from __future__ import annotations

from django.db import models


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
