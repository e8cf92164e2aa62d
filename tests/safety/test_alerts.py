"""Alerts about a flag (safety.alerts, safety.tasks): who is told, the email and the signed
webhook sent by a real Celery worker, retries, the sweep, and the escalation of an
unacknowledged crisis.

The worker is a separate process: its email goes to files (the filebased backend, in
EMAIL_FILE_PATH), and its webhooks to an HTTP server on a thread of the test, which verifies each
signature with standardwebhooks. Flags are made with the ORM, as screening would record them.
"""

from __future__ import annotations

import email
import email.policy
import json
from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from accounts.models import Enrollment, User
from accounts.services import classroom_create
from conversations.models import Message
from conversations.services import conversation_create
from safety import alerts, recording
from safety.models import Delivery, Flag, FlagAction, SafetyContact
from safety.tasks import deliveries_sweep, escalations_due, flag_alert
from safety.types import BackendResult, Category, Severity, Signal, combine
from tests import webhook_receiver
from tests.conftest import Worker, make_user, wait_for

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
CHILD_TEXT = "I want to hurt myself tonight"


class Receiver(webhook_receiver.Receiver):
    def verified(self, secret: str = SECRET) -> list[dict[str, Any]]:
        return super().verified(secret)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture
def mail_dir(tmp_path: Path) -> Path:
    return tmp_path / "mail"


@pytest.fixture
def alert_worker(worker_env: dict[str, str], llm: Any, mail_dir: Path) -> Iterator[Worker]:
    """A worker writing its email to `mail_dir`, retrying deliveries after 0.2 s, at most twice."""
    env = {
        **worker_env,
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(mail_dir),
        "SAFETY_DELIVERY_BACKOFF_SECONDS": "0.2",
        "SAFETY_DELIVERY_MAX_RETRIES": "2",
        "SAFETY_QUEUE_URL": "https://tutor.example/teacher/safety/",
        "SAFETY_WEBHOOK_SECRET": "",
    }
    worker = Worker(llm, env["CELERY_QUEUE"], env).start()
    yield worker
    worker.stop()


@pytest.fixture
def alert_settings(settings: Any) -> Any:
    settings.SAFETY_QUEUE_URL = "https://tutor.example/teacher/safety/"
    settings.SAFETY_WEBHOOK_SECRET = ""
    settings.SAFETY_ESCALATION_MINUTES = 15
    return settings


def crisis_flag(student: User, **fields: Any) -> Flag:
    values: dict[str, Any] = {
        "source": Flag.Source.MESSAGE,
        "category": "self_harm",
        "severity": "crisis",
        "excerpt": CHILD_TEXT,
        **fields,
    }
    flag = Flag.objects.create(student=student, **values)
    FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.CREATED)
    return flag


def with_email(user: User, email: str, language: str = "en") -> User:
    user.email, user.language = email, language
    user.save(update_fields=["email", "language"])
    return user


def emails(mail_dir: Path) -> list[tuple[str, str, str]]:
    """(to, subject, body) of each message the filebased backend wrote, headers decoded."""
    found = []
    for path in sorted(mail_dir.glob("*.log")) if mail_dir.exists() else []:
        for raw in path.read_text().split("\n" + "-" * 79 + "\n"):
            if raw.strip():
                message = email.message_from_string(raw, policy=email.policy.default)
                body = message.get_content() if isinstance(message, EmailMessage) else ""
                found.append((str(message["To"]), str(message["Subject"]), body))
    return found


def mails(mail_dir: Path) -> str:
    return "\n".join(f"To: {to}\nSubject: {subject}\n\n{body}" for to, subject, body in emails(mail_dir))


def notified(flag: Flag) -> set[str]:
    return set(flag.actions.filter(kind=FlagAction.Kind.NOTIFIED).values_list("recipient", flat=True))


# --- Through the worker -----------------------------------------------------------------------


@pytest.mark.worker
def test_a_crisis_is_emailed_and_posted_signed_within_seconds(school, alert_worker, receiver, mail_dir):
    """A crisis goes at once to the student's teacher (email, in the teacher's language) and to
    the first contact (email and webhook): each delivery sent and logged `notified`, the webhook
    signed as Standard Webhooks (verified), its id the delivery's message id, and nothing the
    child wrote in either; escalation is scheduled."""
    with_email(school["teacher_a"], "teacher.a@school.test", "fr")
    with_email(school["teacher_b"], "teacher.b@school.test")
    SafetyContact.objects.create(
        name="Safeguarding lead", email="Lead@School.test", webhook_url=receiver.url, webhook_secret=SECRET, order=1
    )
    flag = crisis_flag(school["alice"])

    flag_alert.delay(flag.pk)

    def all_sent() -> list[Delivery] | None:
        sent = list(Delivery.objects.filter(flag=flag, status="sent"))
        return sent if len(sent) == 3 else None

    deliveries = wait_for(all_sent)
    assert sorted((d.channel, d.target, d.level, d.attempts) for d in deliveries) == [
        ("email", "lead@school.test", 0, 1),
        ("email", "teacher.a@school.test", 0, 1),
        ("webhook", receiver.url, 0, 1),
    ]
    assert notified(flag) == {"email:lead@school.test", "email:teacher.a@school.test", f"webhook:{receiver.url}"}

    text = mails(mail_dir)
    assert "To: teacher.a@school.test" in text and "To: lead@school.test" in text
    assert "teacher.b@school.test" not in text  # not carol's class
    assert "Alerte de sécurité : crise" in text  # the teacher's language (fr)
    assert "Safety alert: Crisis" in text and "Alerte" in text  # a contact: English and French
    assert f"https://tutor.example/teacher/safety/#flag-{flag.pk}" in text
    assert "alice" in text and "5A" in text
    assert CHILD_TEXT not in text

    (payload,) = receiver.verified()
    webhook = Delivery.objects.get(flag=flag, channel="webhook")
    assert receiver.requests[0][0]["webhook-id"] == webhook.message_id
    assert payload["type"] == "safety.flag.alert"
    assert payload["data"] == {
        "flag_id": flag.pk,
        "severity": "crisis",
        "category": "self_harm",
        "source": "message",
        "student_id": school["alice"].pk,
        "classroom_ids": [school["class_a"].pk],
        "created_at": flag.created_at.isoformat(),
        "url": f"https://tutor.example/teacher/safety/#flag-{flag.pk}",
        "level": 0,
    }
    assert CHILD_TEXT not in receiver.requests[0][1].decode()
    flag.refresh_from_db()
    assert flag.escalate_at is not None and flag.escalate_at > timezone.now()


@pytest.mark.worker
def test_a_webhook_answering_500_is_retried_then_sent(school, alert_worker, receiver):
    """A 500 is retried (after the backoff) with the same webhook id and a fresh signature; the
    200 settles the delivery sent, with two attempts and the failed try's error kept, logged
    `notified` once."""
    receiver.statuses = [500]
    SafetyContact.objects.create(name="Hook", webhook_url=receiver.url, webhook_secret=SECRET)
    flag = crisis_flag(school["alice"])

    flag_alert.delay(flag.pk)

    delivery = wait_for(lambda: Delivery.objects.filter(flag=flag, channel="webhook", status="sent").first())
    assert (delivery.attempts, delivery.last_error) == (2, "webhook: HTTP 500")
    payloads = receiver.verified()
    assert len(payloads) == 2 and payloads[0] == payloads[1]
    assert {headers["webhook-id"] for headers, _ in receiver.requests} == {delivery.message_id}
    assert list(flag.actions.filter(kind__in=["notified", "notify_failed"]).values_list("kind", flat=True)) == [
        "notified"
    ]


@pytest.mark.worker
def test_a_webhook_that_keeps_failing_is_settled_failed_and_logged(school, alert_worker, receiver):
    """After its last retry (two here, three tries) the delivery is failed, with its error and
    attempts, and the flag's log says `notify_failed`: never silently dropped."""
    receiver.statuses = [503, 503, 503, 503]
    SafetyContact.objects.create(name="Hook", webhook_url=receiver.url, webhook_secret=SECRET)
    flag = crisis_flag(school["alice"])

    flag_alert.delay(flag.pk)

    delivery = wait_for(lambda: Delivery.objects.filter(flag=flag, status="failed").first())
    assert delivery.attempts == 3 and "HTTP 503" in delivery.last_error
    assert len(receiver.requests) == 3
    failed = flag.actions.get(kind=FlagAction.Kind.NOTIFY_FAILED)
    assert failed.recipient == f"webhook:{receiver.url}" and "HTTP 503" in failed.note
    assert not flag.actions.filter(kind=FlagAction.Kind.NOTIFIED).exists()


@pytest.mark.worker
def test_an_unacknowledged_crisis_escalates_to_the_next_contact_then_stops(school, alert_worker, mail_dir):
    """Past `escalate_at`, an open crisis goes to the contacts of the next order (level 1,
    marked as escalated); at the next due time, with no order left, escalation stops and the
    log says so."""
    SafetyContact.objects.create(name="Lead", email="lead@school.test", order=1)
    SafetyContact.objects.create(name="Deputy", email="deputy@school.test", order=2)
    SafetyContact.objects.create(name="Other class", email="other@school.test", order=2, classroom=school["class_b"])
    flag = crisis_flag(school["alice"])
    flag_alert.delay(flag.pk)
    wait_for(lambda: Delivery.objects.filter(flag=flag, level=0, status="sent").exists())
    assert "deputy@school.test" not in mails(mail_dir)

    Flag.objects.filter(pk=flag.pk).update(escalate_at=timezone.now() - timedelta(seconds=1))
    assert escalations_due() == 1

    deputy = wait_for(lambda: Delivery.objects.filter(flag=flag, level=1, status="sent").first())
    assert (deputy.channel, deputy.target) == ("email", "deputy@school.test")
    assert Delivery.objects.filter(flag=flag, level=1).count() == 1  # not the other class's contact
    flag.refresh_from_db()
    assert flag.escalation_level == 1 and flag.escalate_at is not None and flag.escalate_at > timezone.now()
    escalated = flag.actions.get(kind=FlagAction.Kind.ESCALATED)
    assert "level 1" in escalated.note and "deputy@school.test" in escalated.note
    assert "escalated, level 1" in mails(mail_dir)

    Flag.objects.filter(pk=flag.pk).update(escalate_at=timezone.now() - timedelta(seconds=1))
    assert escalations_due() == 1
    flag.refresh_from_db()
    assert (flag.escalation_level, flag.escalate_at) == (1, None)
    assert flag.actions.filter(kind=FlagAction.Kind.NOTE, note__contains="no contact left").exists()
    assert escalations_due() == 0


# --- In the test's process --------------------------------------------------------------------


def test_an_acknowledged_crisis_does_not_escalate(school, alert_settings, django_capture_on_commit_callbacks):
    """A crisis acknowledged while its escalation was due (escalate_at not yet cleared) is
    re-checked under its lock and left alone; a level-1 delivery still pending when the flag was
    acknowledged is cancelled, not sent."""
    SafetyContact.objects.create(name="Lead", email="lead@school.test", order=1)
    SafetyContact.objects.create(name="Deputy", email="deputy@school.test", order=2)
    flag = crisis_flag(school["alice"], status=Flag.Status.ACKNOWLEDGED)
    Flag.objects.filter(pk=flag.pk).update(escalate_at=timezone.now() - timedelta(minutes=1))

    with django_capture_on_commit_callbacks() as callbacks:
        assert escalations_due() == 0
    assert callbacks == []
    assert not Delivery.objects.filter(flag=flag).exists()
    assert not flag.actions.filter(kind=FlagAction.Kind.ESCALATED).exists()

    late = Delivery.objects.create(flag=flag, channel="email", target="deputy@school.test", level=1)
    assert alerts.delivery_send(delivery_id=late.pk) == "cancelled"
    late.refresh_from_db()
    assert late.status == "failed" and "acknowledged" in late.last_error
    assert mail.outbox == []


def test_a_concern_goes_to_the_teachers_and_the_contacts_for_concerns(school, alert_settings):
    """A concern: the teachers and the contacts with `concerns_too` of the lowest order that
    has any; never escalated. A crisis: every matching contact of the lowest order; inactive
    contacts and other classes' contacts never."""
    with_email(school["teacher_a"], "a@school.test")
    SafetyContact.objects.create(name="Crisis only", email="crisis@school.test", order=1)
    SafetyContact.objects.create(name="Pastoral", email="pastoral@school.test", order=2, concerns_too=True)
    SafetyContact.objects.create(name="Off", email="off@school.test", order=1, active=False)
    SafetyContact.objects.create(name="5B", email="b@school.test", order=1, classroom=school["class_b"])
    concern = crisis_flag(school["alice"], severity="concern", category="distress")
    crisis = crisis_flag(school["alice"])

    assert {r.target for r in alerts.recipients_for(concern, level=0) or []} == {
        "a@school.test",
        "pastoral@school.test",
    }
    assert {r.target for r in alerts.recipients_for(crisis, level=0) or []} == {"a@school.test", "crisis@school.test"}
    assert {r.target for r in alerts.recipients_for(crisis, level=1) or []} == {"pastoral@school.test"}
    assert alerts.recipients_for(crisis, level=2) is None


def test_a_concern_that_becomes_a_crisis_is_alerted_again(school, alert_settings, django_capture_on_commit_callbacks):
    """The teacher told of a concern is told of the crisis it became (the delivery is made
    pending again, with a new message id); running the alert twice for one severity makes and
    sends nothing new."""
    with_email(school["teacher_a"], "a@school.test")
    flag = crisis_flag(school["alice"], severity="concern", category="distress")

    with django_capture_on_commit_callbacks() as callbacks:
        assert alerts.flag_alert(flag_id=flag.pk) == 1
    assert len(callbacks) == 1
    first = Delivery.objects.get(flag=flag)
    Delivery.objects.filter(pk=first.pk).update(status="sent", attempts=1, sent_at=timezone.now())
    assert alerts.flag_alert(flag_id=flag.pk) == 0  # the concern was alerted: nothing new
    flag.refresh_from_db()
    assert flag.escalate_at is None

    Flag.objects.filter(pk=flag.pk).update(severity="crisis", category="self_harm")
    with django_capture_on_commit_callbacks() as callbacks:
        assert alerts.flag_alert(flag_id=flag.pk) == 1
    assert len(callbacks) == 1
    again = Delivery.objects.get(flag=flag)
    assert (again.status, again.attempts) == ("pending", 0) and again.message_id != first.message_id
    flag.refresh_from_db()
    assert flag.escalate_at is not None


def test_a_webhook_without_any_secret_fails_clearly(school, alert_settings):
    """A contact with a webhook and no secret, and no SAFETY_WEBHOOK_SECRET: the delivery is
    failed at once with a clear error and logged, without a try on the network or a crash."""
    contact = SafetyContact.objects.create(name="Hook", webhook_url="http://127.0.0.1:9/never")
    flag = crisis_flag(school["alice"])
    delivery = Delivery.objects.create(flag=flag, channel="webhook", target=contact.webhook_url, contact=contact)

    assert alerts.delivery_send(delivery_id=delivery.pk) == "failed"

    delivery.refresh_from_db()
    assert delivery.status == "failed" and "no signing secret" in delivery.last_error
    assert "no signing secret" in flag.actions.get(kind=FlagAction.Kind.NOTIFY_FAILED).note


def test_an_email_alert_names_no_one_in_its_subject_and_quotes_nothing(school, alert_settings):
    """The email's subject names no student; its body has the severity, the category, the
    student and class, and the link, in English then French for a contact."""
    contact = SafetyContact.objects.create(name="Lead", email="lead@school.test")
    flag = crisis_flag(school["alice"])
    delivery = Delivery.objects.create(flag=flag, channel="email", target="lead@school.test", contact=contact)

    assert alerts.delivery_send(delivery_id=delivery.pk) == "sent"

    (message,) = mail.outbox
    assert message.to == ["lead@school.test"] and message.from_email == alert_settings.SAFETY_EMAIL_FROM
    assert "alice" not in message.subject and "Safety alert" in message.subject and "Alerte" in message.subject
    for needle in ("Crisis", "Self-harm", "alice", "5A", f"#flag-{flag.pk}", "auto-agression"):
        assert needle in message.body
    assert CHILD_TEXT not in message.body


def test_the_sweep_resends_deliveries_whose_task_was_lost(school, alert_settings, worker_env):
    """A delivery never tried five minutes after it was made (its enqueue was lost) is sent
    again by the sweep; a fresh one, or one already sent, is not."""
    flag = crisis_flag(school["alice"])
    lost = Delivery.objects.create(flag=flag, channel="email", target="lost@school.test")
    fresh = Delivery.objects.create(flag=flag, channel="email", target="fresh@school.test")
    done = Delivery.objects.create(flag=flag, channel="email", target="done@school.test", status="sent")
    old = timezone.now() - timedelta(minutes=6)
    Delivery.objects.filter(pk__in=[lost.pk, done.pk]).update(created_at=old)

    assert alerts.deliveries_due() == [lost.pk]
    assert fresh.pk not in alerts.deliveries_due()
    assert deliveries_sweep() == 1


def test_an_escalation_payload_is_stable_across_tries_and_lists_every_class(school, alert_settings):
    """An escalation's webhook is typed `safety.flag.escalated`; its timestamp is the
    delivery's creation, so every retry posts the same body; it lists each of the student's
    classes."""
    club = classroom_create(name="Club", school=school["school"], teachers=[make_user("t3", User.Role.TEACHER)])
    Enrollment.objects.create(classroom=club, student=school["alice"])
    flag = crisis_flag(school["alice"])
    delivery = Delivery.objects.create(flag=flag, channel="webhook", target="http://x.test/", level=1)

    payload = alerts.webhook_payload(alerts.alert_facts(delivery), timestamp=delivery.created_at)

    assert payload["type"] == "safety.flag.escalated"
    assert payload["timestamp"] == delivery.created_at.isoformat()
    data = json.loads(json.dumps(payload))["data"]
    assert (data["level"], sorted(data["classroom_ids"])) == (1, sorted([school["class_a"].pk, club.pk]))


def test_a_loud_concern_after_a_quiet_one_on_the_same_message_alerts_once(school, alert_settings, monkeypatch):
    """A flag kept quiet by its first signal is alerted when a signal that alerts reaches it at
    the same severity (a slower backend, the sweep), and only once: its log says it was alerted."""
    quiet = Signal(Category.DISTRESS, Severity.CONCERN, 0.95, "learned.concern", quiet=True)
    loud = Signal(Category.DISTRESS, Severity.CONCERN, 1.0, "moderation.distress")
    student = school["alice"]
    conversation = conversation_create(user=student)
    message = Message.objects.create(
        conversation=conversation, seq=1, role="student", content="tout est gris", client_message_id="m1"
    )
    enqueued: list[str] = []
    monkeypatch.setattr(recording.background, "enqueue", lambda name, *args, **kwargs: enqueued.append(name))

    def record(*results: BackendResult) -> list[str]:
        enqueued.clear()
        recording.flag_record(
            student_id=student.pk, source=Flag.Source.MESSAGE, message_id=message.pk, verdict=combine(list(results))
        )
        return [name for name in enqueued if name == "safety.tasks.flag_alert"]

    first = BackendResult("learned", answered=True, signals=[quiet])
    assert record(first) == []
    assert Flag.objects.get(message=message).quiet  # what the queue and the webhooks say
    assert record(first, BackendResult("moderation", answered=True, signals=[loud])) == ["safety.tasks.flag_alert"]
    flag = Flag.objects.get(message=message)
    assert flag.severity == Severity.CONCERN and not flag.quiet and not alerts.alerted(flag)
    alerts.flag_alert(flag_id=flag.pk)
    assert alerts.alerted(flag)
    # The same finding again, or another loud one: already alerted, the log says so.
    assert record(first, BackendResult("moderation", answered=True, signals=[loud], ms=7)) == []
    assert record(first, BackendResult("other", answered=True, signals=[loud])) == []
