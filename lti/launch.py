"""What a validated launch does in the product (docs/lti.md): the person signed in (found or
made in the platform's school), the course's class and their place in it, and, for a student's
resource-link launch, the conversation the page opens."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils.translation import gettext as _
from lti_tool.models import LtiLaunch, LtiResourceLink
from lti_tool.utils import sync_data_from_launch

from accounts.models import User
from conversations.models import Conversation
from conversations.services import conversation_create
from lti.models import LaunchedConversation, Platform
from lti.nrps import roster_sync_after_launch
from lti.people import Refused, classroom_for_context, enrol, person_for_claims, person_link

TOPIC_PARAMETER = "topic"  # the custom parameter a deep-linked resource link carries


@dataclass(frozen=True)
class Landing:
    """Who the launch signed in, in which class, and the conversation it opened (students)."""

    person: User
    classroom_id: int
    conversation_id: int | None


def launch_platform(launch: LtiLaunch) -> Platform:
    """The tool's platform of a validated launch (oidc.ToolConfig only knows those)."""
    return Platform.objects.select_related("school").get(registration=launch.registration)


def launch_apply(*, launch: LtiLaunch) -> Landing:
    """Record the launch (django-lti's rows: deployment, LTI user, context with its NRPS and AGS
    endpoints, membership, resource link), sign in its person, map its course to a class and
    enrol them there; a student's resource-link launch opens its conversation
    (`conversation_for_link`). All or nothing: a refusal (people.Refused) leaves no row."""
    platform = launch_platform(launch)
    claims = launch.get_launch_data()
    with transaction.atomic():
        sync_data_from_launch(launch)
        person = person_for_claims(platform=platform, claims=claims)
        if launch.is_deep_link_launch and person.role == User.Role.STUDENT:
            raise Refused(_("Only a course's instructors add the tutor to a course."))
        person_link(platform=platform, sub=str(claims["sub"]), person=person)
        classroom = classroom_for_context(platform=platform, context=launch.context, claims=claims)
        enrol(person=person, classroom=classroom)
        if person.role != User.Role.STUDENT:
            # An instructor's launch brings the course's other members too (NRPS), in the background.
            roster_sync_after_launch(context=launch.context, classroom=classroom)
        conversation = None
        if launch.is_resource_launch and person.role == User.Role.STUDENT:
            topic = launch.get_custom_claim(TOPIC_PARAMETER) or ""
            conversation = conversation_for_link(student=person, resource_link=launch.resource_link, topic=topic)
    return Landing(person=person, classroom_id=classroom.pk, conversation_id=conversation.pk if conversation else None)


def conversation_for_link(*, student: User, resource_link: LtiResourceLink, topic: str) -> Conversation:
    """The student's open conversation launched from this link, else a new one (which ends
    their other open one, as starting a conversation does) on the link's topic, or its title,
    recorded as launched from the link (LaunchedConversation)."""
    launched = (
        LaunchedConversation.objects.select_related("conversation")
        .filter(
            resource_link=resource_link,
            conversation__student=student,
            conversation__status=Conversation.Status.ACTIVE,
        )
        .order_by("-pk")
        .first()
    )
    if launched is not None:
        return launched.conversation
    subject = (str(topic).strip() or resource_link.title)[:200]
    conversation = conversation_create(user=student, subject=subject)
    LaunchedConversation.objects.create(conversation=conversation, resource_link=resource_link)
    return conversation
