"""Alerts about a flag: who is told, by which channel, and the escalation of an unacknowledged
crisis (docs/safety.md). The Celery tasks in safety.tasks call these services.

Recipients, by escalation level (`recipients_for`):
- level 0 (`flag_alert`): the student's teachers (the teacher of each class the student is in,
  by their email if set) and the active `SafetyContact`s of the lowest `order` among those that
  match the student (a contact without a class matches every student; one with a class, that
  class's students). For a `concern`, only the contacts with `concerns_too` count.
- level n >= 1 (`escalations_due`, a crisis only): the matching contacts of the next `order`,
  SAFETY_ESCALATION_MINUTES after the previous level while the flag is still open. When no
  order is left, escalation stops, and the flag's log says so.
- a crisis that none of those can receive (no recipient at level 0, or every level-0 alert
  failed) goes to the fallback, the school's safety lead or staff (`_fallback`, safety.unrouted).

Each recipient and channel is one `Delivery` row (its unique constraint makes a second
`flag_alert` harmless), made in one transaction with the flag's log, and sent by its own task
after commit: at least once (a delivery whose task died mid-send may be sent again by the sweep;
a webhook's `webhook-id` is stable across tries, so a receiver drops the duplicate).

Data minimisation: neither the email nor the webhook carries anything the child wrote (no
excerpt, no message, no file): only the severity, the category, who and where, when, and the
link to the flag queue, which shows the text behind a login.
"""

from __future__ import annotations

import json
import logging
import secrets
import smtplib
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Prefetch, Q
from django.utils import timezone

from accounts.models import Classroom, TeacherEnrollment, User
from core import background, signed_post
from safety import unrouted
from safety.models import Delivery, Flag, FlagAction, SafetyContact
from safety.types import Category, Severity

logger = logging.getLogger(__name__)

SEND_TASK = "safety.tasks.delivery_send"
EVENT_ALERT = "safety.flag.alert"
EVENT_ESCALATED = "safety.flag.escalated"


class DeliveryFailed(Exception):
    """A transient failure (network, SMTP server, a non-2xx answer): the task retries.
    `attempts` is the delivery's tries so far, all tasks together."""

    def __init__(self, message: str, *, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


class DeliveryImpossible(Exception):
    """A failure no retry can fix (a webhook without any signing secret): settled failed at once."""


# --- Who is alerted ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Recipient:
    channel: str
    target: str
    contact_id: int | None = None


def _classrooms_of(student_id: int) -> list[Classroom]:
    """The active classes the student is actively enrolled in, with their active teachers."""
    teachers = TeacherEnrollment.objects.filter(active=True, teacher__is_active=True).select_related("teacher")
    return list(
        Classroom.objects.filter(active=True, enrollments__student_id=student_id, enrollments__active=True)
        .prefetch_related(Prefetch("teacher_enrollments", queryset=teachers.order_by("-primary", "pk")))
        .distinct()
        .order_by("pk")
    )


def _contacts_by_order(flag: Flag, classroom_ids: list[int]) -> list[list[SafetyContact]]:
    """The active contacts matching the flag's student, grouped by `order`, lowest first; for a
    concern, only those alerted for concerns too."""
    contacts = SafetyContact.objects.filter(active=True).filter(
        Q(classroom__isnull=True) | Q(classroom_id__in=classroom_ids)
    )
    if flag.severity != Severity.CRISIS:
        contacts = contacts.filter(concerns_too=True)
    groups: dict[int, list[SafetyContact]] = {}
    for contact in contacts.order_by("order", "pk"):
        groups.setdefault(contact.order, []).append(contact)
    return [groups[order] for order in sorted(groups)]


def _contact_recipients(contacts: list[SafetyContact]) -> list[Recipient]:
    recipients = []
    for contact in contacts:
        if contact.email:
            recipients.append(Recipient(Delivery.Channel.EMAIL, contact.email.strip().lower(), contact.pk))
        if contact.webhook_url:
            recipients.append(Recipient(Delivery.Channel.WEBHOOK, contact.webhook_url, contact.pk))
    return recipients


def recipients_for(flag: Flag, *, level: int) -> list[Recipient] | None:
    """Who is alerted about `flag` at escalation `level` (see the module's docstring), each
    channel and target once; None when no contact is left at that level (escalation stops)."""
    classrooms = _classrooms_of(flag.student_id)
    orders = _contacts_by_order(flag, [c.pk for c in classrooms])
    recipients: list[Recipient] = []
    if level == 0:
        for classroom in classrooms:
            for teaching in classroom.teacher_enrollments.all():
                if teaching.teacher.email:
                    recipients.append(Recipient(Delivery.Channel.EMAIL, teaching.teacher.email.strip().lower()))
    elif level >= len(orders):
        return None
    if level < len(orders):
        recipients.extend(_contact_recipients(orders[level]))
    unique: dict[tuple[str, str], Recipient] = {}
    for recipient in recipients:
        unique.setdefault((recipient.channel, recipient.target), recipient)
    return list(unique.values())


def _fallback(flag: Flag, *, why: str) -> list[Recipient]:
    """The fallback's recipients for a crisis that reached none of its own (safety.unrouted),
    the flag marked `alert_unrouted`, the error logged and counted. The caller holds the flag's
    row lock and makes the deliveries."""
    emails = unrouted.fallback_emails()
    flag.alert_unrouted = True
    flag.save(update_fields=["alert_unrouted", "updated_at"])
    unrouted.unrouted_logged(flag, emails, why=why)
    return [Recipient(Delivery.Channel.EMAIL, email) for email in emails]


# --- Making the deliveries --------------------------------------------------------------------


def _message_id() -> str:
    return f"msg_{secrets.token_hex(12)}"


def _deliveries_make(flag: Flag, recipients: list[Recipient], *, level: int, renew: bool) -> list[int]:
    """The deliveries of `recipients` at `level`, made if missing; with `renew`, one already
    made (for the concern the flag was before it rose to a crisis) is made pending again with
    a new message id, so that the crisis is announced. The ids of the pending ones."""
    pending = []
    for recipient in recipients:
        delivery, created = Delivery.objects.get_or_create(
            flag=flag,
            channel=recipient.channel,
            target=recipient.target,
            level=level,
            defaults={"contact_id": recipient.contact_id, "message_id": _message_id()},
        )
        if not created and renew:
            delivery.status, delivery.attempts, delivery.last_error = Delivery.Status.PENDING, 0, ""
            delivery.message_id, delivery.sent_at = _message_id(), None
            delivery.save(update_fields=["status", "attempts", "last_error", "message_id", "sent_at"])
        if delivery.status == Delivery.Status.PENDING:
            pending.append(delivery.pk)
    return pending


def _alert_marker(severity: str) -> str:
    return f"{severity} alert"


def alerted(flag: Flag) -> bool:
    """Whether the flag's present severity was alerted: its log holds that severity's alert note
    (written by `flag_alert` with the deliveries)."""
    marker = _alert_marker(flag.severity)
    return FlagAction.objects.filter(flag=flag, kind=FlagAction.Kind.NOTE, note__startswith=marker).exists()


def flag_alert(*, flag_id: int) -> int:
    """Make the level-0 deliveries of a `concern` or `crisis` flag and send each after commit;
    for a crisis still open, set `escalate_at`. Returns how many deliveries were enqueued.

    Idempotent: the flag's row is locked, and the log's "<severity> alert" note, written in the
    same transaction as the deliveries, says this severity was already alerted (a second run
    only enqueues the deliveries still pending). A flag that rose from concern to crisis is
    alerted again: the teachers and contacts told of the concern get the crisis too.
    """
    with transaction.atomic():
        flag = Flag.objects.select_for_update().filter(pk=flag_id).first()
        if flag is None or flag.severity not in (Severity.CONCERN, Severity.CRISIS):
            return 0
        marker = _alert_marker(flag.severity)
        if alerted(flag):
            pending = list(flag.deliveries.filter(level=0, status=Delivery.Status.PENDING).values_list("pk", flat=True))
        else:
            recipients = recipients_for(flag, level=0) or []
            fallback = not recipients and flag.severity == Severity.CRISIS
            if fallback:
                recipients = _fallback(flag, why="no teacher's email and no safety contact for the student's classes")
            renew = flag.severity == Severity.CRISIS
            pending = _deliveries_make(flag, recipients, level=0, renew=renew)
            targets = ", ".join(f"{r.channel}:{r.target}" for r in recipients) or "no one to alert"
            targets = f"none of the student's recipients; fallback: {targets}" if fallback else targets
            FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.NOTE, note=f"{marker}: {targets}")
            if flag.severity == Severity.CRISIS and flag.status == Flag.Status.OPEN:
                flag.escalate_at = timezone.now() + timedelta(minutes=settings.SAFETY_ESCALATION_MINUTES)
                flag.save(update_fields=["escalate_at", "updated_at"])
            logger.info("safety flag %s: %s to %d recipients", flag.pk, marker, len(recipients))
        for delivery_id in pending:
            background.enqueue(SEND_TASK, delivery_id)
    return len(pending)


def escalations_due(*, now: datetime | None = None) -> int:
    """Escalate each open crisis whose `escalate_at` has passed to its next level; returns how
    many flags were handled. Safe to run twice: each flag is re-read under its lock and handled
    only if still open and due, and its `escalate_at` is moved (or cleared) in that transaction."""
    now = now or timezone.now()
    due = list(
        Flag.objects.filter(escalate_at__lte=now, status=Flag.Status.OPEN, severity=Severity.CRISIS)
        .order_by("escalate_at")
        .values_list("pk", flat=True)[:200]
    )
    handled = 0
    for flag_id in due:
        handled += _escalate(flag_id=flag_id, now=now)
    return handled


def _escalate(*, flag_id: int, now: datetime) -> int:
    with transaction.atomic():
        flag = Flag.objects.select_for_update().filter(pk=flag_id).first()
        if flag is None or flag.status != Flag.Status.OPEN or flag.escalate_at is None or flag.escalate_at > now:
            return 0
        level = flag.escalation_level + 1
        recipients = recipients_for(flag, level=level)
        minutes = f"{settings.SAFETY_ESCALATION_MINUTES:g}"
        if recipients is None:
            flag.escalate_at = None
            flag.save(update_fields=["escalate_at", "updated_at"])
            FlagAction.objects.create(
                flag=flag,
                kind=FlagAction.Kind.NOTE,
                note=f"not acknowledged after {minutes} minutes; no contact left to escalate to",
            )
            logger.warning("safety flag %s: not acknowledged, no contact left to escalate to", flag.pk)
            return 1
        pending = _deliveries_make(flag, recipients, level=level, renew=False)
        flag.escalation_level = level
        flag.escalate_at = now + timedelta(minutes=settings.SAFETY_ESCALATION_MINUTES)
        flag.save(update_fields=["escalation_level", "escalate_at", "updated_at"])
        targets = ", ".join(f"{r.channel}:{r.target}" for r in recipients) or "no channel"
        FlagAction.objects.create(
            flag=flag,
            kind=FlagAction.Kind.ESCALATED,
            note=f"level {level}, not acknowledged after {minutes} minutes: {targets}",
        )
        logger.warning("safety flag %s: escalated to level %d", flag.pk, level)
        for delivery_id in pending:
            background.enqueue(SEND_TASK, delivery_id)
    return 1


def deliveries_due(*, now: datetime | None = None) -> list[int]:
    """The pending deliveries whose task was lost (core.signed_post.lost_deliveries)."""
    pending = Delivery.objects.filter(status=Delivery.Status.PENDING)
    return signed_post.lost_deliveries(pending, budget=retry_budget(), now=now or timezone.now())


def retry_budget() -> timedelta:
    """The longest a delivery's tries may take, by the SAFETY_DELIVERY_* settings; a try's time
    limit is the webhook's or the email's, whichever is longer."""
    return signed_post.retry_budget(
        retries=settings.SAFETY_DELIVERY_MAX_RETRIES,
        backoff_seconds=settings.SAFETY_DELIVERY_BACKOFF_SECONDS,
        try_seconds=max(settings.SAFETY_WEBHOOK_TIMEOUT_SECONDS, float(settings.EMAIL_TIMEOUT or 0)),
    )


# --- Sending one delivery ---------------------------------------------------------------------


def delivery_send(*, delivery_id: int) -> str:
    """Send one delivery and record it: "sent", "done" (not pending: sent or settled already),
    "failed" (impossible: settled at once) or "cancelled" (an escalation whose flag was
    acknowledged or closed meanwhile). Raises DeliveryFailed on a transient failure, with the
    error kept in `last_error`; the task retries, then settles it with `delivery_fail`.

    Each try counts in `attempts` (a conditional update: only a pending delivery is tried). No
    lock is held while sending; two tasks sending the same delivery at once (a sweep racing a
    slow retry) may both send it, which the stable `message_id` lets a webhook receiver see.
    """
    if not Delivery.objects.filter(pk=delivery_id, status=Delivery.Status.PENDING).update(attempts=F("attempts") + 1):
        return "done"
    delivery = Delivery.objects.select_related("flag", "flag__student", "contact").get(pk=delivery_id)
    flag = delivery.flag
    if delivery.level > 0 and flag.status != Flag.Status.OPEN:
        _settle(delivery, status=Delivery.Status.FAILED, error=f"cancelled: the flag is {flag.status}")
        return "cancelled"
    try:
        if delivery.channel == Delivery.Channel.EMAIL:
            _email_send(delivery)
        else:
            _webhook_send(delivery)
    except DeliveryImpossible as exc:
        delivery_fail(delivery_id=delivery_id, error=str(exc))
        return "failed"
    except DeliveryFailed as exc:
        Delivery.objects.filter(pk=delivery_id).update(last_error=str(exc)[:2000])
        raise DeliveryFailed(str(exc), attempts=delivery.attempts) from exc
    with transaction.atomic():
        if _settle(delivery, status=Delivery.Status.SENT):
            FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.NOTIFIED, recipient=_recipient(delivery))
    logger.info("safety flag %s: %s sent to %s", flag.pk, delivery.channel, delivery.target)
    return "sent"


def delivery_fail(*, delivery_id: int, error: str) -> None:
    """Settle a delivery failed after its last try (or at once, when no try can succeed), and
    log `notify_failed` with the error on its flag. Only a pending delivery is settled, once.
    The last level-0 alert of a crisis to fail sends it to the fallback (`_fallback_after_failures`)."""
    with transaction.atomic():
        delivery = Delivery.objects.select_related("flag").filter(pk=delivery_id).first()
        if delivery is None:
            return
        # The flag's lock before its delivery's row, in the order flag_alert takes them.
        flag = Flag.objects.select_for_update().get(pk=delivery.flag_id)
        if not _settle(delivery, status=Delivery.Status.FAILED, error=error):
            return
        FlagAction.objects.create(
            flag=flag, kind=FlagAction.Kind.NOTIFY_FAILED, recipient=_recipient(delivery), note=error[:2000]
        )
        if delivery.level == 0:
            _fallback_after_failures(flag)
    logger.error("safety flag %s: %s to %s failed: %s", delivery.flag_id, delivery.channel, delivery.target, error)


def _fallback_after_failures(flag: Flag) -> None:
    """An open crisis none of whose level-0 alerts was sent or is still pending goes to the
    fallback, once (`alert_unrouted` guards). The caller holds the flag's lock in its
    transaction; the deliveries are sent after commit."""
    if flag.severity != Severity.CRISIS or flag.status != Flag.Status.OPEN or flag.alert_unrouted:
        return
    if flag.deliveries.filter(level=0, status__in=[Delivery.Status.PENDING, Delivery.Status.SENT]).exists():
        return
    recipients = _fallback(flag, why="every alert failed")
    pending = _deliveries_make(flag, recipients, level=0, renew=False)
    targets = ", ".join(f"{r.channel}:{r.target}" for r in recipients) or "no one to alert"
    FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.NOTE, note=f"every alert failed; fallback: {targets}")
    for delivery_id in pending:
        background.enqueue(SEND_TASK, delivery_id)


def _settle(delivery: Delivery, *, status: str, error: str = "") -> bool:
    """Move a pending delivery to `status` (sent: the time; failed: the error; a sent one keeps
    the error of its last failed try); False if it was not pending any more."""
    if status == Delivery.Status.SENT:
        changes: dict[str, object] = {"sent_at": timezone.now()}
    else:
        changes = {"last_error": error[:2000]}
    pending = Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING)
    return bool(pending.update(status=status, **changes))


def _recipient(delivery: Delivery) -> str:
    return f"{delivery.channel}:{delivery.target}"


# --- What an alert says -----------------------------------------------------------------------


@dataclass(frozen=True)
class AlertFacts:
    """What an alert tells, the same for every channel: nothing the student wrote."""

    flag_id: int
    severity: str
    category: str
    source: str
    student_id: int
    student_name: str
    classrooms: list[tuple[int, str]]
    created_at: datetime
    url: str
    level: int


def alert_facts(delivery: Delivery) -> AlertFacts:
    flag = delivery.flag
    student = flag.student
    return AlertFacts(
        flag_id=flag.pk,
        severity=flag.severity,
        category=flag.category,
        source=flag.source,
        student_id=student.pk,
        student_name=student.get_full_name() or student.username,
        classrooms=[(c.pk, c.name) for c in _classrooms_of(student.pk)],
        created_at=flag.created_at,
        url=f"{settings.SAFETY_QUEUE_URL}#flag-{flag.pk}",
        level=delivery.level,
    )


_SEVERITY_FR: dict[str, str] = {Severity.INFO: "information", Severity.CONCERN: "inquiétude", Severity.CRISIS: "crise"}
_CATEGORY_FR: dict[str, str] = {
    Category.SELF_HARM: "auto-agression",
    Category.ABUSE: "maltraitance ou danger révélé",
    Category.VIOLENCE: "violence ou menaces",
    Category.HARASSMENT: "harcèlement",
    Category.SEXUAL: "contenu sexuel",
    Category.SEXUAL_MINORS: "contenu sexuel impliquant des mineurs",
    Category.HATE: "haine",
    Category.JAILBREAK: "détournement du tuteur",
    Category.DISTRESS: "détresse",
}


def _label(choices: type[Severity] | type[Category], value: str, language: str) -> str:
    if language == "fr":
        table: dict[str, str] = {**_SEVERITY_FR, **_CATEGORY_FR}
        return table.get(value, value)
    try:
        return str(choices(value).label)
    except ValueError:
        return value


def email_content(facts: AlertFacts, language: str | None) -> tuple[str, str]:
    """The subject and body of an alert email: in `language` ("fr" or "en"), or English then
    French when the recipient's language is unknown. The subject names no student (it shows on
    lock screens); the body names the student and the class, never what they wrote."""
    languages = [language] if language in ("fr", "en") else ["en", "fr"]
    subjects, bodies = [], []
    for lang in languages:
        subject, body = _email_text(facts, lang)
        subjects.append(subject)
        bodies.append(body)
    return " / ".join(subjects), "\n\n-----\n\n".join(bodies)


def _email_text(facts: AlertFacts, lang: str) -> tuple[str, str]:
    severity = _label(Severity, facts.severity, lang)
    category = _label(Category, facts.category, lang)
    classes = ", ".join(name for _, name in facts.classrooms) or "-"
    when = timezone.localtime(facts.created_at).strftime("%Y-%m-%d %H:%M %Z")
    if lang == "fr":
        escalated = f" (relance, niveau {facts.level}, non prise en charge)" if facts.level else ""
        subject = f"[Tuteur] Alerte de sécurité : {severity}{escalated}"
        lines = [
            f"Un signalement de sécurité demande votre attention{escalated}.",
            "",
            f"Gravité : {severity}",
            f"Catégorie : {category}",
            f"Élève : {facts.student_name}",
            f"Classe : {classes}",
            f"Quand : {when}",
            "",
            f"Ouvrir le signalement (connexion requise) : {facts.url}",
            "",
            "Ce message ne contient pas ce que l'élève a écrit : la file des signalements le montre.",
        ]
    else:
        escalated = f" (escalated, level {facts.level}, not acknowledged)" if facts.level else ""
        subject = f"[Tutor] Safety alert: {severity}{escalated}"
        lines = [
            f"A safety flag needs your attention{escalated}.",
            "",
            f"Severity: {severity}",
            f"Category: {category}",
            f"Student: {facts.student_name}",
            f"Class: {classes}",
            f"When: {when}",
            "",
            f"Open the flag (sign-in required): {facts.url}",
            "",
            "This message does not contain what the student wrote: the flag queue shows it.",
        ]
    return subject, "\n".join(lines)


def webhook_payload(facts: AlertFacts, *, timestamp: datetime) -> dict[str, object]:
    """The Standard Webhooks payload of an alert: its type, the event's time, and the facts."""
    return {
        "type": EVENT_ESCALATED if facts.level else EVENT_ALERT,
        "timestamp": timestamp.isoformat(),
        "data": {
            "flag_id": facts.flag_id,
            "severity": facts.severity,
            "category": facts.category,
            "source": facts.source,
            "student_id": facts.student_id,
            "classroom_ids": [pk for pk, _ in facts.classrooms],
            "created_at": facts.created_at.isoformat(),
            "url": facts.url,
            "level": facts.level,
        },
    }


# --- The channels -----------------------------------------------------------------------------


def _email_send(delivery: Delivery) -> None:
    teacher = User.objects.filter(role=User.Role.TEACHER, email__iexact=delivery.target).only("language").first()
    subject, body = email_content(alert_facts(delivery), teacher.language if teacher else None)
    message = EmailMessage(subject, body, from_email=settings.SAFETY_EMAIL_FROM, to=[delivery.target])
    try:
        message.send(fail_silently=False)
    except (smtplib.SMTPException, OSError) as exc:
        raise DeliveryFailed(f"email: {type(exc).__name__}: {exc}", attempts=delivery.attempts) from exc


def _webhook_send(delivery: Delivery) -> None:
    secret = (delivery.contact.webhook_secret if delivery.contact else "") or settings.SAFETY_WEBHOOK_SECRET
    if not secret:
        raise DeliveryImpossible(
            "webhook: no signing secret (set the contact's webhook secret or SAFETY_WEBHOOK_SECRET)"
        )
    body = json.dumps(webhook_payload(alert_facts(delivery), timestamp=delivery.created_at), separators=(",", ":"))
    try:
        signed_post.signed_post(
            delivery.target,
            secret=secret,
            message_id=delivery.message_id,
            body=body,
            timeout=settings.SAFETY_WEBHOOK_TIMEOUT_SECONDS,
            now=timezone.now(),
        )
    except signed_post.PostImpossible as exc:
        raise DeliveryImpossible(str(exc)) from exc
    except signed_post.PostFailed as exc:
        raise DeliveryFailed(str(exc), attempts=delivery.attempts) from exc
