"""Erasing a student who came in by an LMS leaves nothing of them from it."""

from __future__ import annotations

from typing import Any

from lti_tool.models import LtiContext, LtiDeployment, LtiMembership, LtiRegistration, LtiResourceLink, LtiUser

from conversations.services import conversation_create
from lti.models import LaunchedConversation
from privacy.services import student_erase
from tests.privacy.test_erasure import rows_containing


def test_erasing_a_launched_student_deletes_their_lti_user_and_launches(school: dict[str, Any]) -> None:
    """alice's LTI user (the LMS's names and email for her, her course membership) and the
    record of her launched conversation go with her; the course and its link stay."""
    alice = school["alice"]
    registration = LtiRegistration.objects.create(
        name="LMS",
        issuer="https://lms.example",
        client_id="c",
        auth_url="https://lms.example/a",
        token_url="https://lms.example/t",
        keyset_url="https://lms.example/k",
    )
    deployment = LtiDeployment.objects.create(registration=registration, deployment_id="1", is_active=True)
    context = LtiContext.objects.create(deployment=deployment, id_on_platform="course-1", title="Maths")
    link = LtiResourceLink.objects.create(context=context, id_on_platform="link-1", title="Tutor")
    lti_user = LtiUser.objects.create(
        registration=registration,
        sub="u-alice",
        name="Alicia Zyxwvut",
        email="alicia.zyxwvut@lms.example",
        auth_user=alice,
    )
    LtiMembership.objects.create(user=lti_user, context=context, is_learner=True)
    LaunchedConversation.objects.create(conversation=conversation_create(user=alice), resource_link=link)

    erasure = student_erase(student_id=alice.pk, confirm=alice.pk, reason="Asked", erased_by=None, via="command")

    assert not LtiUser.objects.exists() and not LtiMembership.objects.exists()
    assert not LaunchedConversation.objects.exists()
    assert LtiResourceLink.objects.filter(pk=link.pk).exists()
    assert erasure.counts["deleted"]["lti_tool.LtiUser"] == 1
    assert rows_containing(["Zyxwvut", "u-alice"]) == {}
