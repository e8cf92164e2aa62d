"""A crisis alert that reaches none of the student's own recipients (safety.unrouted): it goes to
the fallback (SAFETY_LEAD_EMAILS, else staff), is logged as an error, counted, a warning on
/health/ready, marked on the flag for the safety queue, and the start-up log names the classes
that have no recipient."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from prometheus_client import REGISTRY

from accounts.models import User
from safety import alerts, unrouted
from safety.models import Delivery, Flag, SafetyContact
from tests.conftest import client_for, make_user
from tests.safety.test_alerts import crisis_flag, with_email


def unrouted_count(outcome: str) -> float:
    return REGISTRY.get_sample_value("tutor_safety_alerts_unrouted_total", {"outcome": outcome}) or 0.0


def alerted(flag: Flag) -> set[str]:
    return set(Delivery.objects.filter(flag=flag).values_list("target", flat=True))


@pytest.fixture
def alert_settings(settings: Any) -> Any:
    settings.SAFETY_QUEUE_URL = "https://tutor.example/teacher/safety/"
    settings.SAFETY_WEBHOOK_SECRET = ""
    return settings


@pytest.fixture
def fresh_check() -> Any:
    """The readiness check reads the database again at its next call."""
    unrouted._last_check = None
    yield
    unrouted._last_check = None


def test_a_crisis_no_one_of_the_class_can_receive_goes_to_the_safety_lead(
    school, alert_settings, caplog, django_capture_on_commit_callbacks
):
    """The teacher has no email and no contact covers the class: the crisis goes to
    SAFETY_LEAD_EMAILS, is logged as an error naming the fallback, counted, and the flag is
    marked; the email goes out. A concern with no recipient has no fallback."""
    alert_settings.SAFETY_LEAD_EMAILS = ["Lead@School.test", "deputy@school.test"]
    before = unrouted_count("fallback")
    flag = crisis_flag(school["alice"])
    with caplog.at_level(logging.INFO, logger="safety"), django_capture_on_commit_callbacks() as callbacks:
        assert alerts.flag_alert(flag_id=flag.pk) == 2
    assert len(callbacks) == 2
    flag.refresh_from_db()
    assert flag.alert_unrouted is True
    assert alerted(flag) == {"lead@school.test", "deputy@school.test"}
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert f"safety flag {flag.pk}" in error.getMessage() and "lead@school.test" in error.getMessage()
    assert unrouted_count("fallback") == before + 1
    for delivery in Delivery.objects.filter(flag=flag):
        assert alerts.delivery_send(delivery_id=delivery.pk) == "sent"
    assert sorted(to for m in mail.outbox for to in m.to) == ["deputy@school.test", "lead@school.test"]

    concern = crisis_flag(school["bob"], severity="concern", category="distress")
    assert alerts.flag_alert(flag_id=concern.pk) == 0
    concern.refresh_from_db()
    assert concern.alert_unrouted is False


def test_without_a_safety_lead_the_staff_accounts_are_alerted(school, alert_settings):
    """No SAFETY_LEAD_EMAILS: every active staff account with an email (not a teacher with admin
    access, not an inactive one)."""
    alert_settings.SAFETY_LEAD_EMAILS = []
    with_email(make_user("office", User.Role.STAFF, is_staff=True), "office@school.test")
    make_user("away", User.Role.STAFF, is_staff=True, is_active=False, email="away@school.test")
    admin_teacher = with_email(school["teacher_b"], "b@school.test")
    admin_teacher.is_staff = True
    admin_teacher.save(update_fields=["is_staff"])
    flag = crisis_flag(school["alice"])
    alerts.flag_alert(flag_id=flag.pk)
    assert alerted(flag) == {"office@school.test"}


def test_a_crisis_that_reaches_no_one_at_all_says_so(school, alert_settings, caplog):
    """No recipient and no fallback: nothing to send, an error that says no one was alerted, the
    `nobody` count, and the flag marked."""
    alert_settings.SAFETY_LEAD_EMAILS = []
    before = unrouted_count("nobody")
    flag = crisis_flag(school["alice"])
    with caplog.at_level(logging.ERROR, logger="safety"):
        assert alerts.flag_alert(flag_id=flag.pk) == 0
    assert "NO ONE was alerted" in caplog.text
    assert unrouted_count("nobody") == before + 1
    flag.refresh_from_db()
    assert flag.alert_unrouted is True


def test_when_every_alert_to_the_class_failed_the_fallback_is_alerted(
    school, alert_settings, caplog, django_capture_on_commit_callbacks
):
    """The teacher's address bounces for good: once no alert of the crisis is sent or pending,
    the fallback is alerted, once."""
    alert_settings.SAFETY_LEAD_EMAILS = ["lead@school.test"]
    with_email(school["teacher_a"], "gone@school.test")
    flag = crisis_flag(school["alice"])
    alerts.flag_alert(flag_id=flag.pk)
    [delivery] = Delivery.objects.filter(flag=flag)
    with caplog.at_level(logging.ERROR, logger="safety"), django_capture_on_commit_callbacks() as callbacks:
        alerts.delivery_fail(delivery_id=delivery.pk, error="550 no such mailbox")
    assert alerted(flag) == {"gone@school.test", "lead@school.test"}
    assert len(callbacks) == 1
    flag.refresh_from_db()
    assert flag.alert_unrouted is True
    assert "every alert failed" in caplog.text
    lead = Delivery.objects.get(flag=flag, target="lead@school.test")
    alerts.delivery_fail(delivery_id=lead.pk, error="550 again")
    assert Delivery.objects.filter(flag=flag).count() == 2


def test_readiness_warns_while_a_crisis_is_unrouted(school, alert_settings, fresh_check):
    """/health/ready stays 200 with `safety_alerts` a warning (counts only): a class without a
    recipient, and an open crisis that reached none of its own; ok once both are fixed."""
    alert_settings.SAFETY_LEAD_EMAILS = ["lead@school.test"]
    balancer = Client(HTTP_HOST="10.1.2.3:8000")
    flag = crisis_flag(school["alice"])
    alerts.flag_alert(flag_id=flag.pk)
    resp = balancer.get("/health/ready")
    assert resp.status_code == 200
    assert resp.json()["checks"]["safety_alerts"] == (
        "warning: 1 open crisis flags alerted none of their own recipients; 2 classes have no crisis alert recipient"
    )
    Flag.objects.filter(pk=flag.pk).update(status=Flag.Status.RESOLVED)
    SafetyContact.objects.create(name="Lead", email="lead@school.test")
    unrouted._last_check = None
    assert balancer.get("/health/ready").json()["checks"]["safety_alerts"] == "ok"


def test_the_safety_queue_shows_the_flag_unrouted(school, alert_settings):
    """The flags API (the safety queue's) says which crisis reached none of its own recipients."""
    alert_settings.SAFETY_LEAD_EMAILS = ["lead@school.test"]
    flag = crisis_flag(school["alice"])
    alerts.flag_alert(flag_id=flag.pk)
    teacher = client_for(school["teacher_a"])
    listed = teacher.get("/api/v1/safety/flags/").json()["results"]
    assert [(f["id"], f["alert_unrouted"]) for f in listed] == [(flag.pk, True)]
    assert teacher.get(f"/api/v1/safety/flags/{flag.pk}/").json()["alert_unrouted"] is True


def test_the_start_up_log_names_the_classes_without_a_recipient(school, alert_settings, caplog):
    """Each process says at start-up which classes have no crisis recipient of their own, and
    who is alerted instead; a contact for a class takes it off the list."""
    alert_settings.SAFETY_LEAD_EMAILS = []
    with_email(school["teacher_b"], "b@school.test")
    with caplog.at_level(logging.ERROR, logger="safety"):
        unrouted.recipients_report()
    [line] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert f"5A (id {school['class_a'].pk})" in line and "5B" not in line and "NO ONE" in line
    SafetyContact.objects.create(name="5A lead", email="lead5a@school.test", classroom=school["class_a"])
    caplog.clear()
    unrouted.recipients_report()
    assert not [r for r in caplog.records if r.levelno == logging.ERROR]
