"""The product's events (core.events): each service emits its event once its write commits,
with ids and kinds only, and the webhooks' sink makes a delivery for each webhook that wants the
event and covers the student's schools (webhooks.delivery.event_receive)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from accounts.models import Enrollment, School
from accounts.services import classroom_create
from core import events
from learning.services import quiz_answers_submit
from memory.models import AIMemory
from memory.services.writing import memory_create
from memory.supersession import memory_supersede_by_teacher
from safety import recording
from safety.types import BackendResult, Category, Severity, Signal, combine
from tests.learning.conftest import THREE_OF_FIVE, answers_body, make_quiz
from webhooks.delivery import deliveries_due, event_receive
from webhooks.models import Webhook, WebhookDelivery

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
CHILD_TEXT = "My brother Tom took my tablet and I cried"


@pytest.fixture
def emitted() -> Iterator[list[events.Event]]:
    """The events handed to the sinks (a sink of the test's, beside the webhooks')."""
    seen: list[events.Event] = []
    events.sinks.register(events.Sink("test", seen.append))
    yield seen
    events.sinks.unregister("test")


def note(student: Any, content: str = CHILD_TEXT) -> AIMemory:
    return memory_create(
        student=student,
        kind=AIMemory.Kind.NOTE,
        source=AIMemory.Source.SAVE_MEMORY_TOOL,
        title="A note",
        content=content,
    )


def of_type(seen: list[events.Event], event_type: str) -> list[events.Event]:
    return [event for event in seen if event.type == event_type]


def test_a_memory_write_emits_memory_created_after_commit_and_a_rollback_nothing(
    school, emitted, django_capture_on_commit_callbacks
):
    """memory_create emits `memory.created` with the memory's id, student and kind once its
    transaction commits, never its text; a write rolled back emits nothing."""
    with django_capture_on_commit_callbacks(execute=True):
        memory = note(school["alice"])
        assert emitted == []  # not before commit
    (event,) = emitted
    assert (event.type, event.student_id) == ("memory.created", school["alice"].pk)
    assert event.data == {
        "memory_id": memory.pk,
        "student_id": school["alice"].pk,
        "kind": "note",
        "source": "save_memory_tool",
    }
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        note(school["bob"])
        raise RuntimeError("rolled back")
    assert callbacks == [] and len(emitted) == 1


def test_ending_a_conversation_emits_conversation_ended_once(
    school, clients, emitted, django_capture_on_commit_callbacks
):
    """Ending a conversation emits `conversation.ended` (its id, student, message count); ending
    it again emits nothing more."""
    cid = clients["alice"].post("/api/v1/conversations/", {"subject": "Maths"}, format="json").json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        assert clients["alice"].post(f"/api/v1/conversations/{cid}/end/").status_code == 202
        clients["alice"].post(f"/api/v1/conversations/{cid}/end/")
    (event,) = of_type(emitted, "conversation.ended")
    assert event.data == {"conversation_id": cid, "student_id": school["alice"].pk, "message_count": 0}


def test_superseding_a_memory_emits_memory_superseded(school, emitted, django_capture_on_commit_callbacks):
    """A teacher superseding a memory emits `memory.superseded` naming both memories."""
    older, newer = note(school["alice"]), note(school["alice"], "Later note.")
    with django_capture_on_commit_callbacks(execute=True):
        memory_supersede_by_teacher(user=school["teacher_a"], memory_id=older.pk, by_id=newer.pk, reason="newer")
    (event,) = of_type(emitted, "memory.superseded")
    assert event.data == {
        "memory_id": older.pk,
        "superseded_by": newer.pk,
        "student_id": school["alice"].pk,
        "kind": "note",
    }


def test_a_graded_quiz_emits_quiz_graded_and_mastery_changed(school, emitted, django_capture_on_commit_callbacks):
    """Answers graded at once emit `quiz.graded` (the counts) and `mastery.changed` (the skill's
    new estimate and the previous one, None for the first quiz), and a quiz_result memory."""
    quiz = make_quiz(school["alice"])
    body = answers_body(quiz, THREE_OF_FIVE)
    with django_capture_on_commit_callbacks(execute=True):
        quiz_answers_submit(
            user=school["alice"], quiz_id=quiz.pk, client_attempt_id=body["client_attempt_id"], answers=body["answers"]
        )
    (graded,) = of_type(emitted, "quiz.graded")
    assert graded.data["quiz_id"] == quiz.pk and (graded.data["correct"], graded.data["graded"]) == (3, 5)
    (changed,) = of_type(emitted, "mastery.changed")
    assert changed.data["student_id"] == school["alice"].pk and changed.data["previous_estimate"] is None
    assert 0 < changed.data["estimate"] < 1 and changed.data["quiz_id"] == quiz.pk
    assert of_type(emitted, "memory.created")[0].data["kind"] == "quiz_result"


@pytest.mark.parametrize("quiet", [False, True])
def test_a_flag_raised_emits_flag_raised_without_the_excerpt(
    school, emitted, django_capture_on_commit_callbacks, quiet
):
    """A flag recorded emits `flag.raised` with its severity, category and source, and whether it
    is a quiet concern (kept in the queue without an alert), never its excerpt."""
    signal = Signal(Category.DISTRESS, Severity.CONCERN, quiet=quiet)
    verdict = combine([BackendResult("learned", answered=True, signals=[signal])])
    with django_capture_on_commit_callbacks(execute=True):
        flag = recording.flag_record(
            student_id=school["alice"].pk, source="message", verdict=verdict, excerpt=CHILD_TEXT
        )
    assert flag is not None
    (event,) = of_type(emitted, "flag.raised")
    assert event.data == {
        "flag_id": flag.pk,
        "student_id": school["alice"].pk,
        "severity": "concern",
        "category": "distress",
        "source": "message",
        "rose": False,
        "quiet": quiet,
    }
    assert CHILD_TEXT not in repr(event)


def test_the_sink_makes_a_delivery_per_webhook_covering_the_student_s_schools(school):
    """An event about alice (school A, and a class of school C) makes one delivery for A's
    webhook, C's, every-school's and A's district's; none for school B's, nor for a webhook that
    does not want the event or is disabled. Each payload names the schools that webhook covers."""
    district = School.objects.create(name="District", kind=School.Kind.DISTRICT)
    School.objects.filter(pk=school["school"].pk).update(parent=district)
    school_b, school_c = School.objects.create(name="B"), School.objects.create(name="C")
    Enrollment.objects.create(classroom=classroom_create(name="Club", school=school_c), student=school["alice"])

    def hook(school: School | None, events: tuple[str, ...] = ("memory.created",), active: bool = True) -> Webhook:
        return Webhook.objects.create(
            url="https://x.example/h", secret=SECRET, school=school, events=list(events), active=active
        )

    a, c, everyone, above = hook(school["school"]), hook(school_c), hook(None), hook(district)
    b, other_event, disabled = hook(school_b), hook(school["school"], ("quiz.graded",)), hook(None, active=False)
    event = events.Event(
        type="memory.created", timestamp=timezone.now(), data={"memory_id": 1}, student_id=school["alice"].pk
    )
    event_receive(event)
    made = {d.webhook_id: d.payload["data"] for d in WebhookDelivery.objects.all()}
    assert set(made) == {a.pk, c.pk, everyone.pk, above.pk}
    assert made[a.pk]["school_ids"] == [school["school"].pk] and made[c.pk]["school_ids"] == [school_c.pk]
    assert made[everyone.pk]["school_ids"] == sorted([school["school"].pk, school_c.pk])
    assert made[above.pk]["school_id"] == school["school"].pk
    assert not {b.pk, other_event.pk, disabled.pk} & set(made)


def test_deliveries_commit_with_the_write_and_survive_a_process_that_dies_after_it(
    school, django_capture_on_commit_callbacks
):
    """The webhooks' sink is durable: a memory written in a transaction has its delivery in that
    transaction (none if it rolls back). If the process dies after the commit, before the task
    is sent (the after-commit callbacks never run), the delivery is pending, untried, and the
    sweep finds it."""
    hook = Webhook.objects.create(
        url="https://x.example/h", secret=SECRET, school=school["school"], events=["memory.created"]
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks, transaction.atomic():
        memory = note(school["alice"])
        (delivery,) = WebhookDelivery.objects.all()
    assert callbacks, "the delivery's task waits for the commit"
    assert (delivery.webhook_id, delivery.status, delivery.attempts) == (hook.pk, "pending", 0)
    assert delivery.payload["data"]["memory_id"] == memory.pk
    later = timezone.now() + timedelta(minutes=6)
    assert deliveries_due(now=later) == [delivery.pk]
    with pytest.raises(RuntimeError), transaction.atomic():
        note(school["bob"])
        raise RuntimeError("rolled back")
    assert WebhookDelivery.objects.count() == 1


def test_a_durable_sink_that_fails_loses_nothing_of_the_write_and_gets_the_event_after_commit(
    school, django_capture_on_commit_callbacks
):
    """A durable sink that raises is rolled back alone: the memory is written, and the sink gets
    the event again after the commit."""
    tries: list[str] = []

    def flaky(event: events.Event) -> None:
        tries.append(event.type)
        if len(tries) == 1:
            AIMemory.objects.update(title="changed by the failing sink")
            raise RuntimeError("sink down")

    events.sinks.register(events.Sink("flaky", flaky, durable=True))
    try:
        with django_capture_on_commit_callbacks(execute=True):
            memory = note(school["alice"])
    finally:
        events.sinks.unregister("flaky")
    assert tries == ["memory.created", "memory.created"]
    assert AIMemory.objects.get(pk=memory.pk).title == "A note"


def test_a_roster_import_reaches_the_schools_it_changed(school, emitted, django_capture_on_commit_callbacks):
    """`events.roster_imported` emits `roster.imported` for its schools (no student), with its
    counts; the sink makes a delivery for those schools' webhooks only."""
    school_b = School.objects.create(name="B")
    mine = Webhook.objects.create(
        url="https://x.example/h", secret=SECRET, school=school["school"], events=["roster.imported"]
    )
    theirs = Webhook.objects.create(
        url="https://x.example/h", secret=SECRET, school=school_b, events=["roster.imported"]
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        events.roster_imported(school_ids=(school["school"].pk,), counts={"users_created": 3})
    # The webhooks' delivery is made at once (a durable sink); the test's sink gets it at commit.
    assert mine.deliveries.exists() and not emitted
    callbacks[-1]()
    (event,) = emitted
    assert event.student_id is None and event.data == {"counts": {"users_created": 3}}
    assert mine.deliveries.get().payload["data"]["school_ids"] == [school["school"].pk]
    assert not theirs.deliveries.exists()


def test_a_roster_import_emits_roster_imported_for_its_schools(
    db, tmp_path, emitted, django_capture_on_commit_callbacks
):
    """manage.py roster_import of a district bundle emits `roster.imported` once, after commit,
    for the bundle's schools and district, with the counts; a dry run emits nothing."""
    from django.core.management import call_command

    from tests.accounts.roster_bundles import district, write_bundle

    bundle = write_bundle(tmp_path / "b", district())
    with django_capture_on_commit_callbacks(execute=True):
        call_command("roster_import", str(bundle), "--dry-run", stdout=io.StringIO())
    assert of_type(emitted, "roster.imported") == []
    with django_capture_on_commit_callbacks(execute=True):
        call_command("roster_import", str(bundle), stdout=io.StringIO())
    (event,) = of_type(emitted, "roster.imported")
    assert set(event.school_ids) == set(School.objects.values_list("pk", flat=True)) and len(event.school_ids) == 3
    assert event.student_id is None and event.data["counts"]["users"]["created"] == 64
