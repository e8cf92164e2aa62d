"""The guardian's page in Chromium, driven by tests/web/guardian_page.mjs (playwright-core),
against the production server: a guardian signs in, reads their child's memories (not the
teacher-only note) and skills, downloads the export, files an erasure request and sees it
waiting next to an earlier one refused; the administrator's approval then erases the child."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import GuardianLink, User
from conversations.models import Conversation, Message
from learning.models import SkillMastery
from memory.models import AIMemory
from memory.services.notes import teacher_note_create
from privacy.models import ErasureRequest
from tests.conftest import ROOT, client_for, make_user
from tests.web.conftest import run_browser_script

SCRIPT = ROOT / "tests" / "web" / "guardian_page.mjs"


@pytest.mark.browser
def test_a_guardian_reads_exports_and_asks_for_erasure(
    browser: dict[str, str], server: str, schools: dict[str, Any], artifacts_dir: Path
) -> None:
    """In Chromium, alice's guardian signs in on /app/guardian/: alice is their child; her
    memory shown to her is listed and the teacher-only note is not; her skill is listed; the
    export downloads as alice's `tutor-export/1` document without a message; an earlier refused
    request shows with its reason, and a new one is filed and shown waiting. The administrator
    approves it: alice is gone."""
    alice, teacher = schools["alice"], schools["teacher_a"]
    guardian = make_user("grace", User.Role.GUARDIAN, school=schools["school"])
    guardian.set_password("web-grace")
    guardian.save(update_fields=["password"])
    GuardianLink.objects.create(guardian=guardian, student=alice)
    teacher_note_create(
        teacher=teacher, student_id=alice.pk, title="Loves drawing the fractions she meets", content="x"
    )
    teacher_note_create(
        teacher=teacher,
        student_id=alice.pk,
        title="Worried about things at home lately",
        content="y",
        visibility=AIMemory.Visibility.TEACHER_ONLY,
    )
    SkillMastery.objects.create(
        student=alice, skill="adding fractions", skill_key="adding fractions", estimate=0.6, estimated_at=timezone.now()
    )
    conversation = Conversation.objects.create(student=alice, subject="Fractions", last_activity_at=timezone.now())
    Message.objects.create(
        conversation=conversation, seq=1, role="student", content="My words to the tutor", client_message_id="m1"
    )
    ErasureRequest.objects.create(
        student=alice,
        school=schools["school"],
        requested_by=guardian,
        requested_at=timezone.now(),
        reason="First try",
        status=ErasureRequest.Status.REFUSED,
        decided_by=schools["admin_a"],
        decided_at=timezone.now(),
        decision_reason="An open case",
    )
    config = {
        "baseUrl": server,
        "chromium": browser["chromium"],
        "artifacts": str(artifacts_dir),
        "guardian": {"username": "grace", "password": "web-grace"},
        "reason": "We are moving abroad",
    }
    seen = run_browser_script(browser, SCRIPT, config, artifacts_dir, "the guardian's page")["seen"]

    assert seen["heading"] == "My child's tutor"
    assert seen["children"] == ["alice"]
    assert seen["memories"] == ["Loves drawing the fractions she meets"]
    assert seen["skills"] == ["adding fractions: 60%"]
    assert (seen["exportFormat"], seen["exportStudent"], seen["exportMessages"]) == ("tutor-export/1", "alice", 0)
    assert seen["exportFilename"].startswith(f"tutor-export-{alice.pk}-")
    assert len(seen["requestsBefore"]) == 1 and "Refused · An open case" in seen["requestsBefore"][0]
    assert any("Waiting for the school's decision" in text for text in seen["requestsAfter"])
    filed = ErasureRequest.objects.get(status=ErasureRequest.Status.PENDING)
    assert (filed.requested_by, filed.student, filed.reason) == (guardian, alice, "We are moving abroad")
    approved = client_for(schools["admin_a"]).post(f"/api/v1/erasure-requests/{filed.pk}/approve/")
    assert approved.status_code == 200, approved.content
    assert not User.objects.filter(pk=alice.pk).exists()
