"""The teacher workspace in Chromium (tests/web/workspace.mjs) against the production server, at
1280x800 and 390x844: the class overview lists exactly the class's students with their figures,
a name opens the student's view, its section nav jumps and the history goes back and forth, and
a school administrator sees their school's classes and not another school's."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Enrollment, School, User
from accounts.services import classroom_create
from conversations.models import Conversation
from conversations.services import conversation_create
from learning.models import ReviewCard, Task
from tests.conftest import ROOT, make_user
from tests.learning.conftest import ALL_RIGHT, SKILL, THREE_OF_FIVE
from tests.learning.test_reviews import answered
from tests.safety.test_flags_api import make_flag
from tests.web.conftest import run_browser_script

SCRIPT = ROOT / "tests" / "web" / "workspace.mjs"


def _password(user: Any) -> dict[str, str]:
    user.set_password("web-" + user.username)
    user.save(update_fields=["password"])
    return {"username": user.username, "password": "web-" + user.username}


def _run(browser: dict[str, str], artifacts_dir: Path, config: dict[str, Any]) -> dict[str, Any]:
    result = run_browser_script(browser, SCRIPT, config, artifacts_dir, "teacher workspace, at 1280 and 390 px")
    assert result["pageErrors"] == []
    return result


@pytest.mark.browser
def test_the_teacher_workspace(browser, server, artifacts_dir, school) -> None:
    """The overview's roster: alice and bob (not carol of 5B, not an enrolment that ended), alice
    with 2 open flags and her last activity, bob with a review due, each with a mastery chart of
    one bar in words; homework set to the class from it. alice's name opens her view
    (#student/<id>), whose nav puts a section just under itself and marks it; back and forward
    walk the places; a link to bob's learning opens there. At 390 px nothing scrolls sideways.
    The administrator of the school sees 5A and 5B and not 6C of another school, and opens 5B's
    roster."""
    alice, bob = school["alice"], school["bob"]
    Enrollment.objects.create(classroom=school["class_a"], student=make_user("dora"), active=False)
    answered(alice, THREE_OF_FIVE)
    answered(bob, ALL_RIGHT)
    ReviewCard.objects.filter(student=bob).update(due=timezone.now() - timedelta(days=1))
    conversation = conversation_create(user=alice, subject="Fractions")
    Conversation.objects.filter(student=alice).exclude(pk=conversation.pk).update(
        last_activity_at=timezone.now() - timedelta(days=3)
    )
    make_flag(alice)
    make_flag(alice)
    head = make_user("head", User.Role.ADMINISTRATOR, school=school["school"])
    elsewhere = School.objects.create(name="Other school", external_id="school-2")
    other = classroom_create(name="6C", school=elsewhere, teachers=[make_user("teacher_c", User.Role.TEACHER)])
    Enrollment.objects.create(classroom=other, student=make_user("erin"))

    config = {
        "baseUrl": server,
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "teacher": _password(school["teacher_a"]),
        "administrator": _password(head),
        "data": {"alice": alice.pk, "bob": bob.pk},
        "homework": {"title": "Exercise 7 p. 31", "subject": "Maths"},
        "adminOpens": "5B",
    }
    seen = _run(browser, artifacts_dir, config)["seen"]

    assert seen["overviewHeading"] == "Class 5A" and seen["caption"] == "5A: 2 students"
    rows = {row["name"]: row for row in seen["rows"]}
    assert list(rows) == ["alice", "bob"]
    a, b = rows["alice"], rows["bob"]
    assert (a["id"], b["id"]) == (alice.pk, bob.pk)
    assert (a["open_flags"], a["reviews_due"]) == ("2 open", "none")
    assert (b["open_flags"], b["reviews_due"]) == ("none", "1 due")
    assert a["last_activity"] != "no conversation yet" and b["last_activity"] != "no conversation yet"
    [bar_a], [bar_b] = a["bars"], b["bars"]
    assert bar_a["skill"] == SKILL and bar_b["skill"] == SKILL
    assert bar_b["band"] == "mastery-mastered" and bar_a["band"] != "mastery-mastered"
    assert 0 < bar_a["height"] < bar_b["height"] <= 24
    assert a["chartLabel"].startswith("1 skill assessed, ") and a["mastery"].endswith("%")
    assert seen["studentViewHidden"]
    assert seen["homeworkStatus"] == "“Exercise 7 p. 31” was set for 5A."
    task = Task.objects.get(title="Exercise 7 p. 31")
    assert (task.classroom_id, task.student_id, task.subject) == (school["class_a"].pk, None, "Maths")

    assert seen["afterOpen"] == {"hash": f"#student/{alice.pk}", "overviewHidden": True, "heading": "alice"}
    for jump, section in ((seen["jumpConversations"], "conversations"), (seen["jumpCard"], "card")):
        assert jump["hash"] == f"#student/{alice.pk}/{section}"
        assert jump["navTop"] == 0 and 0 <= jump["top"] - jump["navBottom"] < 40
    assert seen["current"] == "Card"
    assert 0 <= seen["backToConversations"]["top"] - seen["backToConversations"]["navBottom"] < 40
    assert seen["backToOverview"] == {"hash": "", "studentHidden": True}
    assert seen["forward"] == f"#student/{alice.pk}"
    assert 0 <= seen["deepLink"]["top"] - seen["deepLink"]["navBottom"] < 40

    assert seen["phoneStudent"]["scroll"] <= 390 and seen["phoneOverview"]["scroll"] <= 390
    assert 0 <= seen["phoneJump"]["top"] - seen["phoneJump"]["navBottom"] < 40
    assert seen["phoneRowWidth"] <= 390
    assert seen["frenchHeaders"] == ["Élève", "Dernière activité", "Signalements ouverts", "Révisions dues", "Maîtrise"]
    assert seen["frenchHomework"] == "Donner un devoir à la classe"

    assert seen["adminClasses"] == ["5A", "5B"]
    assert "My school" in seen["adminViews"]
    assert seen["adminRoster"] == ["carol"] and seen["adminHash"] == "#overview"
