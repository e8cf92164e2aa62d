"""The flags API: teachers follow their students' flags, staff see all, students never see one.

Flags are made here with the ORM, as screening records them (safety.recording); every response
is checked against the OpenAPI schema (tests/schema.py)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Enrollment, User
from accounts.services import classroom_create
from conversations.models import Conversation, Message
from conversations.services import conversation_create
from memory.services.notes import teacher_note_create
from safety.models import Delivery, Flag, FlagAction
from safety.services import NOTE_MAX_CHARS
from tests.conftest import client_for, make_user

URL = "/api/v1/safety/flags/"


def talk(student: User, lines: int, subject: str = "Fractions") -> list[Message]:
    """A conversation of `lines` messages, student and tutor in turn."""
    conversation = conversation_create(user=student, subject=subject)
    messages = []
    for seq in range(1, lines + 1):
        student_turn = seq % 2 == 1
        messages.append(
            Message.objects.create(
                conversation=conversation,
                seq=seq,
                role=Message.Role.STUDENT if student_turn else Message.Role.TUTOR,
                content=f"line {seq} of {student.username}",
                client_message_id=f"c{seq}" if student_turn else None,
            )
        )
    Conversation.objects.filter(pk=conversation.pk).update(message_count=lines)
    return messages


def make_flag(student: User, message: Message | None = None, **fields: Any) -> Flag:
    """A flag as screening records it, with its `created` log entry."""
    values: dict[str, Any] = {
        "source": Flag.Source.MESSAGE,
        "category": "distress",
        "categories": ["distress"],
        "severity": "concern",
        "excerpt": message.content if message else "a pattern",
        "escalate_at": timezone.now() + timedelta(minutes=15),
    }
    values.update(fields)
    flag = Flag.objects.create(
        student=student,
        conversation_id=message.conversation_id if message else None,
        message=message,
        **values,
    )
    FlagAction.objects.create(flag=flag, kind=FlagAction.Kind.CREATED)
    return flag


@pytest.fixture
def staff(db: None) -> User:
    return make_user("safeguarding", User.Role.STAFF, is_staff=True)


@pytest.fixture
def flags(school: dict[str, Any]) -> dict[str, Flag]:
    """alice: a crisis (open) on her 5th message and an older concern; bob: an info; carol
    (another class): a concern."""
    alice_lines = talk(school["alice"], 10)
    crisis = make_flag(
        school["alice"], alice_lines[4], category="self_harm", categories=["self_harm"], severity="crisis"
    )
    older = make_flag(school["alice"], alice_lines[0])
    Flag.objects.filter(pk=older.pk).update(created_at=timezone.now() - timedelta(days=1))
    bob = make_flag(school["bob"], talk(school["bob"], 2)[0], severity="info")
    carol = make_flag(school["carol"], talk(school["carol"], 2)[0])
    return {"crisis": crisis, "older": older, "bob": bob, "carol": carol}


def ids(resp: Any) -> list[int]:
    assert resp.status_code == 200, resp.content
    return [f["id"] for f in resp.json()["results"]]


def test_a_teacher_lists_their_students_flags_newest_first(clients, flags):
    """teacher_a sees alice's and bob's flags, newest first, never carol's; each with its student."""
    resp = clients["teacher_a"].get(URL)
    assert ids(resp) == [flags["bob"].pk, flags["crisis"].pk, flags["older"].pk]
    first = resp.json()["results"][0]
    assert first["student"] == {"id": flags["bob"].student_id, "username": "bob", "first_name": "", "last_name": ""}
    assert ids(clients["teacher_b"].get(URL)) == [flags["carol"].pk]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("status=open", ["bob", "crisis", "older"]),
        ("status=resolved", []),
        ("severity=crisis", ["crisis"]),
        ("severity=info", ["bob"]),
        ("student={alice}", ["crisis", "older"]),
        ("classroom={class_a}", ["bob", "crisis", "older"]),
        ("classroom={class_b}", []),  # a class teacher_a does not teach: nothing, not carol's
        ("ordering=severity", ["crisis", "older", "bob"]),
    ],
)
def test_filters(clients, school, flags, query, expected):
    """Status, severity, student and classroom filter the teacher's flags; the queue's order puts
    open flags first by severity. Another teacher's classroom filters to nothing."""
    url = URL + "?" + query.format(alice=school["alice"].pk, class_a=school["class_a"].pk, class_b=school["class_b"].pk)
    assert ids(clients["teacher_a"].get(url)) == [flags[name].pk for name in expected]


def test_the_queue_order_puts_closed_flags_last(clients, flags, school):
    """?ordering=severity: open flags first (the most severe first), then the others."""
    Flag.objects.filter(pk=flags["crisis"].pk).update(status=Flag.Status.RESOLVED)
    got = ids(clients["teacher_a"].get(URL + "?ordering=severity"))
    assert got == [flags["older"].pk, flags["bob"].pk, flags["crisis"].pk]


@pytest.mark.parametrize(
    "query", ["status=nope", "severity=", "student=abc", "classroom=0", "ordering=oldest", "page_size=0"]
)
def test_a_bad_filter_is_a_400_in_the_envelope(clients, flags, query):
    resp = clients["teacher_a"].get(f"{URL}?{query}")
    assert resp.status_code == 400, resp.content
    assert resp.json()["error"]["code"] == "invalid"


def test_a_student_filter_outside_the_class_is_a_404(clients, school, flags):
    """As on every list, naming a student the teacher does not teach is a 404."""
    resp = clients["teacher_a"].get(f"{URL}?student={school['carol'].pk}")
    assert resp.status_code == 404
    assert resp.json()["error"]["code"] == "not_found"


def test_a_student_class_in_both_teachers_classes_shows_only_through_a_class_taught(clients, school, flags):
    """carol joins a class of teacher_a's too: teacher_a sees her flag, but filtering by
    teacher_b's class (which teacher_a does not teach) still gives nothing."""
    other = classroom_create(name="Club", school=school["school"], teachers=[school["teacher_a"]])
    Enrollment.objects.create(classroom=other, student=school["carol"])
    assert flags["carol"].pk in ids(clients["teacher_a"].get(URL))
    assert ids(clients["teacher_a"].get(f"{URL}?classroom={school['class_b'].pk}")) == []
    assert ids(clients["teacher_a"].get(f"{URL}?classroom={other.pk}")) == [flags["carol"].pk]


@pytest.mark.parametrize("who", ["alice", "bob", "carol"])
def test_students_never_see_flags(clients, flags, who):
    """The list is a 403 for a student (their own flags included); every flag, theirs too, is a
    404 on the detail, acknowledge and resolve, and nothing changes."""
    resp = clients[who].get(URL)
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "forbidden"
    own = flags["bob"] if who == "bob" else flags["crisis"]
    for method, suffix, body in [
        ("get", "", None),
        ("post", "acknowledge/", {}),
        ("post", "resolve/", {"note": "ok", "outcome": "resolved"}),
    ]:
        resp = getattr(clients[who], method)(f"{URL}{own.pk}/{suffix}", body, format="json")
        assert resp.status_code == 404, (suffix, resp.content)
    own.refresh_from_db()
    assert own.status == Flag.Status.OPEN and own.actions.count() == 1


def test_staff_see_and_act_on_every_flag(staff, school, flags):
    """A staff account lists every class's flags, filters by any class or student, reads any
    flag with its conversation around it, and acknowledges it."""
    client = client_for(staff)
    assert set(ids(client.get(URL))) == {f.pk for f in flags.values()}
    assert ids(client.get(f"{URL}?classroom={school['class_b'].pk}")) == [flags["carol"].pk]
    assert ids(client.get(f"{URL}?student={school['carol'].pk}")) == [flags["carol"].pk]
    assert client.get(f"{URL}?student={school['teacher_a'].pk}").status_code == 404
    detail = client.get(f"{URL}{flags['carol'].pk}/")
    assert detail.status_code == 200 and [m["seq"] for m in detail.json()["surrounding"]] == [1, 2]
    resp = client.post(f"{URL}{flags['carol'].pk}/acknowledge/", {}, format="json")
    assert resp.status_code == 200 and resp.json()["status"] == "acknowledged"
    assert resp.json()["actions"][-1]["actor"] == staff.pk


def test_a_teacher_with_is_staff_is_still_scoped(clients, school, flags):
    """is_staff alone does not widen a teacher's flags: only staff accounts see every class's."""
    school["teacher_b"].is_staff = True
    school["teacher_b"].save(update_fields=["is_staff"])
    assert ids(clients["teacher_b"].get(URL)) == [flags["carol"].pk]


def test_the_detail_shows_the_message_its_surroundings_and_the_log(clients, school, flags):
    """The flag's message, the 3 messages on each side in its conversation (oldest first), its
    log and its alerts."""
    crisis = flags["crisis"]
    Delivery.objects.create(flag=crisis, channel=Delivery.Channel.EMAIL, target="lead@school.test", status="sent")
    resp = clients["teacher_a"].get(f"{URL}{crisis.pk}/")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert [m["seq"] for m in body["surrounding"]] == [2, 3, 4, 5, 6, 7, 8]
    assert body["message"] == crisis.message_id == body["surrounding"][3]["id"]
    assert body["severity"] == "crisis" and body["category"] == "self_harm"
    assert [a["kind"] for a in body["actions"]] == ["created"]
    assert [(d["channel"], d["status"]) for d in body["deliveries"]] == [("email", "sent")]
    assert body["file"] is None and body["files"] == []
    assert body["cited_messages"] == [] and body["original_text"] == ""


def test_the_surroundings_stop_at_the_conversation_edges(clients, flags):
    """A flag on the first message shows it and the 3 after it."""
    body = clients["teacher_a"].get(f"{URL}{flags['older'].pk}/").json()
    assert [m["seq"] for m in body["surrounding"]] == [1, 2, 3, 4]


def test_a_replaced_reply_shows_the_original_text_to_teachers_and_staff(clients, school, staff):
    """A withheld tutor reply's flag shows what the model wrote, beside the stored replacement."""
    lines = talk(school["alice"], 2)
    Message.objects.filter(pk=lines[1].pk).update(content="Let's get back to fractions.")
    flag = make_flag(
        school["alice"], lines[1], source=Flag.Source.REPLY, category="violence", original_text="the withheld words"
    )
    for client in (clients["teacher_a"], client_for(staff)):
        body = client.get(f"{URL}{flag.pk}/").json()
        assert body["original_text"] == "the withheld words"
        [shown] = [m for m in body["surrounding"] if m["id"] == body["message"]]
        assert shown["content"] == "Let's get back to fractions."


def test_a_pattern_shows_what_it_cites(clients, school):
    """A pattern flag has no message of its own: its cited messages and memories, no surroundings."""
    lines = talk(school["alice"], 4)
    memory = teacher_note_create(
        teacher=school["teacher_a"], student_id=school["alice"].pk, title="Seems low in recent weeks", content="x"
    )
    flag = make_flag(school["alice"], source=Flag.Source.PATTERN)
    flag.cited_messages.set([lines[0], lines[2]])
    flag.cited_memories.set([memory])
    body = clients["teacher_a"].get(f"{URL}{flag.pk}/").json()
    assert [m["id"] for m in body["cited_messages"]] == [lines[0].pk, lines[2].pk]
    assert [m["id"] for m in body["cited_memories"]] == [memory.pk]
    assert body["message"] is None and body["surrounding"] == []


def test_acknowledge_then_resolve_with_the_log(clients, school, flags):
    """Acknowledging stops the escalation and logs who; resolving closes it as the outcome says,
    logs the note and keeps its start as the flag's outcome."""
    crisis = flags["crisis"]
    client = clients["teacher_a"]
    resp = client.post(f"{URL}{crisis.pk}/acknowledge/", {"note": "Called her parents."}, format="json")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert body["status"] == "acknowledged" and body["escalate_at"] is None
    assert [(a["kind"], a["actor"], a["note"]) for a in body["actions"]] == [
        ("created", None, ""),
        ("acknowledged", school["teacher_a"].pk, "Called her parents."),
    ]
    body = {"note": "Met with the nurse.", "outcome": "resolved"}
    resp = client.post(f"{URL}{crisis.pk}/resolve/", body, format="json")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert (body["status"], body["outcome"]) == ("resolved", "Met with the nurse.")
    assert body["actions"][-1]["kind"] == "resolved" and body["actions"][-1]["note"] == "Met with the nurse."
    crisis.refresh_from_db()
    assert crisis.status == "resolved" and crisis.escalate_at is None


def test_an_open_flag_may_be_closed_as_a_false_positive(clients, flags):
    """Resolving needs no acknowledgement first; a false positive is its own status."""
    resp = clients["teacher_a"].post(
        f"{URL}{flags['bob'].pk}/resolve/", {"note": "A line from a novel.", "outcome": "false_positive"}, format="json"
    )
    assert resp.status_code == 200, resp.content
    assert resp.json()["status"] == "false_positive" and resp.json()["escalate_at"] is None


def test_closed_and_acknowledged_flags_are_409s(clients, flags):
    """Acknowledging a resolved (or already acknowledged) flag, or resolving twice, is a 409 in the
    envelope, and the log does not grow."""
    client = clients["teacher_a"]
    flag = flags["older"]
    assert client.post(f"{URL}{flag.pk}/acknowledge/", {}, format="json").status_code == 200
    again = client.post(f"{URL}{flag.pk}/acknowledge/", {}, format="json")
    assert again.status_code == 409 and again.json()["error"]["details"] == {"status": "acknowledged"}
    body = {"note": "Done.", "outcome": "resolved"}
    assert client.post(f"{URL}{flag.pk}/resolve/", body, format="json").status_code == 200
    count = flag.actions.count()
    closed = [("acknowledge/", {}), ("resolve/", body), ("resolve/", {**body, "outcome": "false_positive"})]
    for suffix, payload in closed:
        resp = client.post(f"{URL}{flag.pk}/{suffix}", payload, format="json")
        assert resp.status_code == 409, resp.content
        assert resp.json()["error"]["code"] == "conflict"
    flag.refresh_from_db()
    assert flag.status == "resolved" and flag.actions.count() == count


@pytest.mark.parametrize(
    ("suffix", "body", "field"),
    [
        ("acknowledge/", {"note": "x" * (NOTE_MAX_CHARS + 1)}, "note"),
        ("acknowledge/", {"note": 12}, "note"),
        ("resolve/", {"note": "", "outcome": "resolved"}, "note"),
        ("resolve/", {"note": "   ", "outcome": "resolved"}, "note"),
        ("resolve/", {"note": "x" * (NOTE_MAX_CHARS + 1), "outcome": "resolved"}, "note"),
        ("resolve/", {"note": "Done."}, "outcome"),
        ("resolve/", {"note": "Done.", "outcome": "open"}, "outcome"),
        ("resolve/", {"note": "Done.", "outcome": "acknowledged"}, "outcome"),
    ],
)
def test_invalid_input_is_a_400_in_the_envelope(clients, flags, suffix, body, field):
    """Notes are capped in length (resolving needs one); the outcome is resolved or
    false_positive. Nothing changes."""
    flag = flags["crisis"]
    resp = clients["teacher_a"].post(f"{URL}{flag.pk}/{suffix}", body, format="json")
    assert resp.status_code == 400, resp.content
    error = resp.json()["error"]
    assert error["code"] == "invalid" and field in error["details"]
    flag.refresh_from_db()
    assert flag.status == "open" and flag.actions.count() == 1


@pytest.mark.parametrize("intruder", ["teacher_b"])
def test_another_class_gets_404_and_changes_nothing(clients, flags, intruder):
    """A teacher of another class: 404 on alice's flag, its acknowledge and resolve (before any
    check of the body), as for a flag that does not exist."""
    flag = flags["crisis"]
    for method, suffix, body in [
        ("get", "", None),
        ("post", "acknowledge/", {}),
        ("post", "acknowledge/", {"note": 12}),
        ("post", "resolve/", {"note": "x", "outcome": "resolved"}),
        ("post", "resolve/", {}),
    ]:
        resp = getattr(clients[intruder], method)(f"{URL}{flag.pk}/{suffix}", body, format="json")
        assert resp.status_code == 404, (suffix, resp.content)
        missing = getattr(clients[intruder], method)(f"{URL}999999/{suffix}", body, format="json")
        assert missing.status_code == 404
    flag.refresh_from_db()
    assert flag.status == "open" and flag.actions.count() == 1


def test_flags_never_enter_the_prompt(clients, school, llm, flags):
    """What a flag holds (its excerpt, a withheld reply's text, the teachers' notes) never
    reaches the model: the chat turn's prompt holds none of it."""
    from tests.conversations.test_turn import send

    secret = "zq-flag-secret"
    Flag.objects.filter(pk=flags["crisis"].pk).update(excerpt=secret, original_text=secret, outcome=secret)
    FlagAction.objects.create(flag=flags["crisis"], kind=FlagAction.Kind.NOTE, note=secret)
    llm.script("chat", {"content": "Sure, let's look at fractions."})
    cid = flags["crisis"].conversation_id
    Conversation.objects.filter(pk=cid).update(last_activity_at=timezone.now())
    assert send(clients["alice"], cid, "Can we do fractions?", "next").status_code == 201
    prompts = [str(body) for body in llm.calls("chat")]
    assert prompts and not any(secret in prompt for prompt in prompts)
