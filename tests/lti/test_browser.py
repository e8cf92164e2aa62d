"""LTI launches in Chromium, driven by tests/lti/lti_launch.mjs (playwright-core): the test LMS
(tests/lti_platform, on lti1p3platform, its own process on `localhost`) frames the tool (the
production server on `127.0.0.1`, another site) in its course page, as a real LMS does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from accounts.models import Classroom, User
from conversations.models import Conversation, Message
from lti.models import LaunchedConversation
from tests.conftest import ROOT
from tests.llm_server import ScriptedLLM
from tests.lti.conftest import INSTRUCTOR, LEARNER, LtiPlatform
from tests.web.conftest import run_browser_script

SCRIPT = ROOT / "tests" / "lti" / "lti_launch.mjs"
REPLY = "Hello Ada! Let us compare fractions."


@pytest.mark.browser
def test_launches_in_the_lms_frame(
    browser: dict[str, str],
    server: str,
    llm: ScriptedLLM,
    lti_platform: LtiPlatform,
    school: dict[str, Any],
    artifacts_dir: Path,
) -> None:
    """In Chromium, on the LMS's course page: a learner's launch signs Ada in inside the frame,
    on the link's conversation, and she chats with the tutor (the scripted model answers); an
    instructor's launch (the roster's teacher_b, who teaches 5B too) opens the course's class in
    the teacher workspace; the instructor adds a tutor on a topic through deep linking, and the
    learner's launch of that new link opens a conversation on its topic. The only cookie is the
    login state's, partitioned under the LMS."""
    llm.script("chat", {"content": REPLY})
    lti_platform.register(school["school"])
    lti_platform.course("course-1", title="Maths 5A", label="M5A")
    lti_platform.member("course-1", "u-ada", roles=[LEARNER], given_name="Ada", family_name="Lovelace")
    # The instructor is the roster's teacher_b, who teaches 5B too: the launch must choose the course's class.
    User.objects.filter(pk=school["teacher_b"].pk).update(external_id="sis-turing", first_name="Alan")
    lti_platform.member(
        "course-1", "u-turing", roles=[INSTRUCTOR], given_name="Alan", family_name="Turing", sourcedid="sis-turing"
    )
    lti_platform.link("course-1", "link-1", title="Fractions tutor", custom={"topic": "Fractions"})
    config = {
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "learnerUrl": lti_platform.course_url("course-1", "u-ada", link="link-1"),
        "instructorUrl": lti_platform.course_url("course-1", "u-turing", link="link-1"),
        "deepLinkUrl": lti_platform.deep_link_url("course-1", "u-turing"),
        "learnerCourseUrl": lti_platform.course_url("course-1", "u-ada"),
        "question": "How do I compare 2/3 and 3/4?",
        "topic": "Comparing fractions",
        "title": "Fractions, compared",
    }
    seen = run_browser_script(browser, SCRIPT, config, artifacts_dir, "LTI launches")["seen"]

    assert seen["learnerTop"].startswith(lti_platform.url)
    assert seen["learnerFrame"] == f"{server}/app/", seen["learnerFrame"]  # the code is gone
    assert "Ada" in seen["learnerWhoami"]
    assert seen["learnerConversation"] == "Fractions"
    assert seen["reply"] == REPLY
    ada = User.objects.get(first_name="Ada")
    conversation = Conversation.objects.get(student=ada, subject="Fractions")
    assert Message.objects.get(conversation=conversation, role="tutor").content == REPLY
    assert [
        (c["name"].startswith("lti1p3-state-"), c["secure"], c["sameSite"], c["partitioned"])
        for c in seen["frameCookies"]
    ] == [(True, True, "None", True)]

    assert seen["instructorFrame"] == f"{server}/app/teacher/"
    assert "teacher_b" in seen["instructorWhoami"]
    classroom = Classroom.objects.get(name="Maths 5A", school=school["school"])
    assert seen["instructorClass"] == str(classroom.pk)
    assert seen["instructorClassName"] == "Maths 5A"

    item = seen["added"]["items"][0]
    assert (item["type"], item["title"], item["custom"], item["url"]) == (
        "ltiResourceLink",
        "Fractions, compared",
        {"topic": "Comparing fractions"},
        f"{server}/lti/launch/",
    )
    assert seen["topicConversation"] == "Comparing fractions"
    launched = LaunchedConversation.objects.get(conversation__subject="Comparing fractions")
    assert launched.resource_link.id_on_platform == seen["added"]["links"][0]
