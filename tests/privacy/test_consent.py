"""A family's consent to memory (docs/privacy.md#consent-to-memory): set by the school's
administrator, recorded, and honoured by every memory writer, the prompt and the tools."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ValidationError

from accounts.models import GuardianLink, School, User
from conversations import file_extraction
from conversations.models import Conversation
from conversations.services import conversation_create
from learning.models import Quiz, SkillMastery
from memory.card import card_propose
from memory.extraction import Outcome as ExtractOutcome
from memory.extraction import facts_extract
from memory.models import AIMemory, CardChange, StudentCard
from memory.services.notes import memory_agent_write, memory_note_save, teacher_note_create
from memory.services.writing import MemoryConsentOff
from privacy.consent import WITHDRAWN_REASON
from privacy.models import ConsentChange
from tests.conftest import Worker, client_for, make_user, wait_for
from tests.conversations.test_files import uploaded
from tests.conversations.test_memory_in_prompt import add_memories
from tests.conversations.test_save_memory_tool import tool_step
from tests.conversations.test_summary_worker import converse, end
from tests.conversations.test_turn import send, start
from tests.learning.conftest import THREE_OF_FIVE, answers_body
from tests.learning.test_chat_turn import quiz_call
from tests.llm_server import ScriptedLLM
from tests.privacy.test_export import exported

URL = "/api/v1/students/{}/consent/"
OFF = {"memory_consent": False, "reason": "Family form of 2026-12-01: no memory."}


def withdraw(user: User, student: User) -> dict[str, Any]:
    resp = client_for(user).put(URL.format(student.pk), OFF, format="json")
    assert resp.status_code == 200, resp.content
    body: dict[str, Any] = resp.json()
    return body


def prompt_text(call: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content")) for m in call["messages"])


def offered(call: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in call.get("tools") or []]


@pytest.mark.worker
def test_without_consent_a_conversation_leaves_no_memory_and_the_prompt_holds_none(
    worker: Worker, llm: ScriptedLLM, schools: dict[str, Any]
) -> None:
    """Withdrawn by the school's administrator: alice's memories are archived (none deleted) and
    her card stays out of the prompt; she still chats, is offered no save_memory, her ended
    conversation is summarised by no one (the worker skips it without asking the model), and a
    teacher's note written meanwhile never reaches her next prompt."""
    alice, teacher = schools["alice"], schools["teacher_a"]
    add_memories(alice, 3, prefix="Likes drawing")
    teacher_note_create(teacher=teacher, student_id=alice.pk, title="Needs more time on fractions", content="x")
    StudentCard.objects.create(student=alice, interests=["chess tournaments"])
    before = AIMemory.objects.filter(student=alice).count()

    body = withdraw(schools["admin_a"], alice)
    assert body["memory_consent"] is False
    [change] = body["changes"]
    assert (change["memory_consent"], change["changed_by"], change["archived"]) == (False, schools["admin_a"].pk, 4)
    assert change["reason"] == OFF["reason"] and change["changed_at"]
    assert AIMemory.objects.filter(student=alice).count() == before
    assert set(AIMemory.objects.filter(student=alice).values_list("status", "archived_reason")) == {
        ("archived", WITHDRAWN_REASON)
    }

    alice_client = client_for(alice)
    cid = converse(alice_client, "Can you remember that I love chess?")
    [call] = llm.calls("chat")
    assert "<student_memories>" not in prompt_text(call)
    assert "Likes drawing" not in prompt_text(call) and "chess tournaments" not in prompt_text(call)
    assert "save_memory" not in offered(call) and "save_memory" not in prompt_text(call)
    end(alice_client, cid)
    wait_for(lambda: Conversation.objects.get(pk=cid).summary_status == "skipped")
    assert llm.calls("summary") == []
    assert "Task conversations.tasks.conversation_summarize[" in worker.log_text()
    assert not AIMemory.objects.filter(student=alice, status="active").exists()

    resp = client_for(teacher).post(
        "/api/v1/memories/",
        {"student": alice.pk, "title": "Worked well with a number line", "content": "School record."},
        format="json",
    )
    assert resp.status_code == 201, resp.content
    second = start(alice_client)
    assert send(alice_client, second, cmid="m2").status_code == 201
    call = llm.calls("chat")[-1]
    assert "number line" not in prompt_text(call) and "<student_memories>" not in prompt_text(call)
    assert "save_memory" not in offered(call)
    assert ConsentChange.objects.filter(student=alice).count() == 1


def test_with_consent_the_prompt_has_memories_and_save_memory(clients, llm, school) -> None:
    """The default: consent given, the memories and the save_memory tool are there."""
    add_memories(school["alice"], 2, prefix="Likes drawing")
    cid = start(clients["alice"])
    assert send(clients["alice"], cid).status_code == 201
    [call] = llm.calls("chat")
    assert "Likes drawing" in prompt_text(call) and "save_memory" in offered(call)


def test_only_the_schools_administrator_or_staff_set_it(schools, llm) -> None:
    """The student's teacher and the student get 403, the other school's administrator 404, and
    nothing changes; staff may set it. The GET answers the same."""
    alice = schools["alice"]
    add_memories(alice, 2)
    for name, status in (("teacher_a", 403), ("alice", 403), ("bob", 404), ("admin_b", 404), ("teacher_c", 404)):
        client = client_for(schools[name])
        assert client.put(URL.format(alice.pk), OFF, format="json").status_code == status, name
        assert client.get(URL.format(alice.pk)).status_code == status, name
    assert not ConsentChange.objects.exists()
    assert not AIMemory.objects.filter(status="archived").exists()
    alice.refresh_from_db()
    assert alice.memory_consent is True

    staff = make_user("root", User.Role.STAFF, is_staff=True)
    body = withdraw(staff, alice)
    assert body["changes"][0]["changed_by"] == staff.pk
    resp = client_for(schools["admin_a"]).get(URL.format(alice.pk))
    assert resp.status_code == 200 and resp.json()["memory_consent"] is False


def test_bad_input_is_a_400(schools) -> None:
    """No reason, or a value that is not a JSON boolean: 400 in the error envelope, nothing set."""
    client = client_for(schools["admin_a"])
    url = URL.format(schools["alice"].pk)
    for body in ({"memory_consent": False}, {"memory_consent": "no", "reason": "x"}, {"reason": "x"}):
        resp = client.put(url, body, format="json")
        assert resp.status_code == 400, (body, resp.content)
        assert resp.json()["error"]["code"] == "invalid"
    assert not ConsentChange.objects.exists()


def test_on_again_keeps_the_archive_and_writes_again(schools, llm) -> None:
    """On again: what was archived stays archived, new memories are written, both changes are in
    the record, in the student's export and on /me/; the same value again records nothing."""
    alice, admin = schools["alice"], schools["admin_a"]
    add_memories(alice, 2)
    withdraw(admin, alice)
    withdraw(admin, alice)  # the same value: nothing new
    alice_client = client_for(alice)
    assert alice_client.get("/api/v1/me/").json()["memory_consent"] is False
    teacher_view = client_for(schools["teacher_a"]).get(f"/api/v1/students/{alice.pk}/")
    assert teacher_view.json()["memory_consent"] is False

    resp = client_for(admin).put(URL.format(alice.pk), {"memory_consent": True, "reason": "New form"}, format="json")
    assert [c["memory_consent"] for c in resp.json()["changes"]] == [False, True]
    assert AIMemory.objects.filter(student=alice, status="archived").count() == 2
    conversation = conversation_create(user=alice, subject="Maths")
    memory, created = memory_note_save(
        student_id=alice.pk, conversation_id=conversation.pk, title="Prefers short worked examples now", content="x"
    )
    assert created and memory.status == "active"

    _, document = exported(alice_client, alice.pk)
    assert [c["memory_consent"] for c in document["consent_changes"]] == [False, True]
    assert document["student"]["memory_consent"] is True


def test_every_writer_refuses_without_consent(schools, llm, settings) -> None:
    """Off: the tutor's note, an agent's note, the model's card proposal and fact extraction
    write nothing; a teacher's note is still written (a school record)."""
    alice = schools["alice"]
    withdraw(schools["admin_a"], alice)
    conversation = conversation_create(user=alice, subject="Maths")
    with pytest.raises(ValidationError):
        memory_note_save(
            student_id=alice.pk, conversation_id=conversation.pk, title="A note from the tutor", content="x"
        )
    with pytest.raises(MemoryConsentOff):
        memory_agent_write(user=alice, student_id=None, title="A note from my agent here", content="x")
    change = card_propose(
        student_id=alice.pk, field="interests", op="add", value="chess", confidence=1.0, memory_id=None
    )
    assert change is None and not CardChange.objects.exists()
    settings.MEMORY_EXTRACTION_ENABLED = True
    note = teacher_note_create(
        teacher=schools["teacher_a"], student_id=alice.pk, title="Reads well but slowly today", content="x"
    )
    assert note.status == "active"
    assert facts_extract(memory_id=note.pk) == (ExtractOutcome.SKIPPED, [])
    assert llm.calls() == []
    assert list(AIMemory.objects.filter(student=alice).values_list("kind", flat=True)) == ["teacher_note"]


def test_a_graded_quiz_and_a_file_leave_no_memory_without_consent(schools, llm) -> None:
    """Off: a quiz is still given, graded and counted in mastery (the learning record), and a
    file is still read for its conversation, but neither becomes a memory."""
    alice = schools["alice"]
    withdraw(schools["admin_a"], alice)
    alice_client = client_for(alice)
    llm.script("chat", tool_step(quiz_call()), {"content": "Quiz time."})
    cid = start(alice_client)
    quiz_id = send(alice_client, cid, "Quiz me", "m1").json()["quizzes"][0]["id"]
    quiz = Quiz.objects.get(pk=quiz_id)
    resp = alice_client.post(f"/api/v1/quizzes/{quiz_id}/answers/", answers_body(quiz, THREE_OF_FIVE), format="json")
    assert resp.status_code == 201, resp.content
    body = uploaded(alice_client, cid, "decimals.txt", b"Converting decimals to percentages.", "text/plain")
    assert file_extraction.file_extract(file_id=body["id"]) == "ready"

    assert Quiz.objects.get(pk=quiz_id).status == "graded"
    assert SkillMastery.objects.get(student=alice).attempts == 5
    assert not AIMemory.objects.filter(student=alice).exists()


def test_a_guardian_reads_it_and_sets_it_where_the_school_allows(schools, llm) -> None:
    """alice's guardian reads her consent; sets it (403 and nothing changes) only once her
    school lets guardians (School.guardians_may_set_consent), then it is recorded as theirs. A
    guardian of another child gets 404 either way."""
    alice = schools["alice"]
    add_memories(alice, 2)
    guardian = make_user("mum_of_alice", User.Role.GUARDIAN, school=schools["school"])
    stranger = make_user("mum_of_bob", User.Role.GUARDIAN, school=schools["school"])
    GuardianLink.objects.create(guardian=guardian, student=alice)
    GuardianLink.objects.create(guardian=stranger, student=schools["bob"])
    mine, theirs = client_for(guardian), client_for(stranger)
    read = mine.get(URL.format(alice.pk))
    assert read.status_code == 200 and read.json()["memory_consent"] is True
    refused = mine.put(URL.format(alice.pk), OFF, format="json")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert theirs.get(URL.format(alice.pk)).status_code == 404
    assert not ConsentChange.objects.exists()

    School.objects.filter(pk=schools["school"].pk).update(guardians_may_set_consent=True)
    assert theirs.put(URL.format(alice.pk), OFF, format="json").status_code == 404
    done = mine.put(URL.format(alice.pk), OFF, format="json")
    assert done.status_code == 200 and done.json()["memory_consent"] is False
    (change,) = ConsentChange.objects.all()
    assert change.changed_by_id == guardian.pk and change.archived == 2
